// SPDX-License-Identifier: GPL-2.0
/*
 * ff-sysfuzz: a small fuzzer for the futex system calls, with the process
 * life cycle around them.  It fills what trinity 2023.01 (Debian 12)
 * cannot do: futex_wake, futex_wait and futex_requeue (454-456, Linux
 * 6.7), and threads and processes that exit in the middle of it all.
 *
 * The parent keeps -j worker processes running (fork).  Each worker has
 * three threads (clone through pthread_create) that issue random calls for
 * a slice of -n calls each, then exit, so threads and processes exit while
 * they hold PI futexes, own futexes listed on their robust list, or have
 * waiters queued; the worker ends by joining its threads, by exit_group()
 * while they still run, or by exit() of its main thread alone.  Threads
 * also start short-lived threads, fork children (that exit at once, issue
 * a few calls, or exec /bin/true), and clone children that share the mm
 * without being threads (CLONE_VM, and CLONE_VM|CLONE_VFORK, which may
 * exec).  The parent SIGKILLs a worker older than -d seconds and counts it
 * (a fuzzer's worker may block; that alone is not a failure).
 *
 * The calls: futex(2) with every command (0-13, FUTEX_PREALLOC_HASH 127,
 * FUTEX_ATTACH 126 and FUTEX_DETACH 125 included, and unknown ones: 14-124,
 * a command with one of the bits 9-29 set (512 and 1024 among them, which
 * are no flags: FUTEX_ATTACHED is 0x40000000) and random op words), random
 * flag combinations (mostly valid; FUTEX_ATTACHED with any command now and
 * then, and in the futex2 flags, where it is invalid), futex_waitv,
 * futex_wake, futex_wait, futex_requeue, prctl(PR_FUTEX_HASH) and
 * set_robust_list.  The futex2 flags (each entry's, for futex_waitv and
 * futex_requeue) carry FUTEX2_NUMA (about 6%) and FUTEX2_MPOL (about 4%)
 * now and then, together or alone (Linux 6.16, backported by the series):
 * before a FUTEX2_NUMA call on a pool word whose pair is aligned to 8
 * bytes, the fuzzer mostly sets the pair's node word (the u32 after the
 * pool word, which is no pool word itself) to FUTEX_NO_NODE, so that the
 * kernel chooses a node and writes it back, to node 0 or 1, or to an
 * impossible node; the user-space stores of the run write node words too.
 * Futex words come from a pool: words of a MAP_SHARED and of a
 * MAP_PRIVATE mapping made before the fork (mostly, so that waiters and
 * wakers meet across threads and processes), plus unaligned, NULL,
 * unmapped, PROT_NONE, read-only and kernel addresses.  Every address the
 * kernel may write to (futex words, FUTEX_WAKE_OP's uaddr2, PI owners,
 * robust list entries, the node words of FUTEX2_NUMA pairs) is a pool
 * address or the node word of one; a FUTEX2_NUMA pair in the read-only
 * mappings holds node 0, which the kernel does not write back.  Every
 * blocking call gets a timeout of a few milliseconds (relative or
 * absolute, on the clock the command uses).
 *
 * Checks, each counted as a failure:
 *   - every result is one the ABI allows for that call and its input: the
 *     errno is in the set the 6.12 code (kernel/futex/, the series' hash.c)
 *     can return for it (EFAULT only when a bad pointer was passed, ENOSYS
 *     only for unknown commands or FUTEX_CLOCK_REALTIME misuse, ...); a
 *     success is in range (0 for waits and locks, at most nr for wakes,
 *     nr_wake + nr_requeue for requeues, an index < nr for futex_waitv, a
 *     power of two for the table sizes); input that must be rejected
 *     (unaligned or kernel addresses, bad flags, sizes, masks, clocks,
 *     timeouts) is rejected;
 *   - futex2 flags: FUTEX2_NUMA and FUTEX2_MPOL are valid with
 *     FUTEX2_SIZE_U32 (any other size, or any unknown bit, is EINVAL, as
 *     before); futex_requeue's two entries must have identical flags
 *     (EINVAL).  FUTEX2_NUMA on a pair not aligned to 8 bytes must fail
 *     with EINVAL (futex_wake and futex_wait: with EINVAL alone, or
 *     futex_wait's EFAULT of a bad timeout pointer, checked before; an
 *     unaligned or kernel address fails the earlier checks of
 *     get_futex_key() as without the flag); on an aligned pair it may
 *     add EINVAL (an impossible node in the node word: always allowed
 *     for futex2 calls) and EFAULT only where the node word cannot be
 *     read, or must be written and cannot (FUTEX_NO_NODE read-only): the
 *     bad addresses, never a pool word, whose node word is in the pool's
 *     writable mapping.  FUTEX2_MPOL alone (no node word) changes no
 *     allowed result.  A kernel without FUTEX2_NUMA (vanilla 6.12 or the
 *     series before its NUMA patches) refuses them with EINVAL, which
 *     passes these checks: they allow the flags, they do not require
 *     them (vanilla does not run ff-sysfuzz at all: SKIP below).  The
 *     counts of FUTEX2_NUMA calls, and of the FUTEX_NO_NODE node words
 *     the kernel replaced by a node, are printed ("futex2 NUMA");
 *   - the futex hash state of each process (kernel.futex_private_hash is
 *     read at the start and must not change during the run): under policy
 *     0, a valid PR_FUTEX_HASH_SET_SLOTS, FUTEX_PREALLOC_HASH or
 *     FUTEX_ATTACH must fail with EPERM, and SET_SLOTS and
 *     FUTEX_PREALLOC_HASH may fail with it only then; a process (a worker
 *     with its threads and CLONE_VM children, which share its mm) tracks
 *     whether it chose the global hash (SET_SLOTS 0) and whether it
 *     attached a futex: after SET_SLOTS 0, SET_SLOTS and
 *     FUTEX_PREALLOC_HASH must fail with EBUSY and FUTEX_ATTACH with EPERM;
 *     after a successful FUTEX_ATTACH (even if detached since), SET_SLOTS 0
 *     must fail with EBUSY, and other sizes must not; otherwise these
 *     EBUSYs and FUTEX_ATTACH's EPERM are allowed only where a call of
 *     another thread that could cause them raced the checked one (and, for
 *     SET_SLOTS 0, after a FUTEX_ATTACH that failed, which may or may not
 *     have marked the process).  A fork child starts without the
 *     attachment mark; whether it inherits the choice of the global hash
 *     is left open (EBUSY and EPERM allowed, not required, in the child of
 *     a process that may have made it);
 *   - attached futexes (CONFIG_FUTEX_ATTACHED; a FUTEX_DETACH at start
 *     tells EBADF, supported, from ENOSYS, not): each thread tracks the
 *     words it attached (a new thread, fork or clone child starts with
 *     none), so an operation with FUTEX_ATTACHED must fail with EBADF on a
 *     word the thread did not attach and must not on one it did;
 *     FUTEX_ATTACH of an attached word must succeed; in the order of the
 *     kernel's checks, an op with FUTEX_ATTACHED fails with ENOSYS for
 *     FUTEX_CLOCK_REALTIME other than with FUTEX_WAIT_BITSET or
 *     FUTEX_LOCK_PI2, with EINVAL without FUTEX_PRIVATE_FLAG or with an
 *     unaligned uaddr, with EFAULT for a NULL uaddr, then with EINVAL for
 *     FUTEX_ATTACH/FUTEX_DETACH with a non-zero unused argument or for a
 *     command that does not take the flag, with ENOSYS for an unknown
 *     command (FUTEX_FD, no command since 2.6.26 but listed among those
 *     that do not take the flag: either); where the order of these
 *     per-command checks against the earlier ones is not known (an
 *     unknown command, or one that does not take the flag, with an input
 *     an earlier check rejects), both errnos are allowed; FUTEX_ATTACH
 *     and FUTEX_DETACH without FUTEX_ATTACHED fail with EINVAL; ENOSPC
 *     only for a new FUTEX_ATTACH of a thread that has
 *     kernel.futex_attached_max attachments, and then required; EBUSY only
 *     for a new FUTEX_ATTACH or the FUTEX_DETACH of a word a PI owner
 *     could hold; without the kernel option, ENOSYS for all of them (the
 *     timeout is not read);
 *   - no worker, child or thread dies by a signal other than the SIGKILL
 *     the parent sends;
 *   - afterwards, the kernel still works: wait/wake pairs between two
 *     threads on a private, a shared, a futex2 private futex and on a
 *     private futex after PR_FUTEX_HASH_SET_SLOTS, between two processes
 *     on a shared one, and (with attached futexes) between an attached
 *     waiter and a waker that wakes with and without FUTEX_ATTACHED in
 *     turn, must each see the waiter woken (no lost wake-up) and nothing
 *     left queued; under policy 0 the attached pair is skipped once its
 *     FUTEX_ATTACH failed with EPERM, as it must.
 *
 * Output: KTAP, the calls and errnos counted per call (ok = successful
 * returns; "futex(FUTEX_ATTACHED)" counts the commands 0-13 and
 * FUTEX_PREALLOC_HASH with the flag; the futex(2) kinds are named after
 * the commands, "futex(unknown cmd)" counts every other command), the
 * futex2 calls with FUTEX2_NUMA or FUTEX2_MPOL alone and what came of the
 * node words set to FUTEX_NO_NODE ("# sysfuzz: futex2 NUMA: ...": calls
 * with valid flags and FUTEX2_NUMA in the call or one of its entries, ok,
 * EINVAL, EFAULT, misaligned pairs; FUTEX2_MPOL-alone calls and ok; node
 * words found, after a call that got past them, holding node 0, node 1,
 * another value, or still FUTEX_NO_NODE, which another thread's store
 * may explain: counted, not checked),
 * and "# sysfuzz-summary: seconds= syscalls= workers= killed=
 * failures=", syscalls counting every fuzzed call plus the clone, fork,
 * execve and exit calls.  Exit 0 only without failures.
 *
 * usage: ff-sysfuzz [-t SECONDS] [-j CHILDREN] [-s SEED] [-n CALLS] [-d DEADLINE] [-X]
 *   -t  run time (60), -j workers (4), -s seed (time), -n calls per
 *   thread and slice (500), -d seconds after which a worker is killed
 *   (20), -X harness self-test: a worker raises SIGSEGV, one ETIMEDOUT
 *   of FUTEX_WAIT_BITSET is declared unexpected and the first health pair
 *   loses its wake-up; the run must fail with three failures.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ff-abi.h"
#include "ff-util.h"

#ifndef __x86_64__
#error "ff-sysfuzz issues raw x86_64 system calls"
#endif

#define NTHREADS	3	/* threads of a worker, the main one included */
#define MAXEXTRA	6	/* short-lived threads a worker runs at once */
#define NWORDS		16	/* futex words in each of the two pools */
#define NROBUST		12	/* the first words, evenly spaced */
#define WSTRIDE		16
#define WAITV_MAX	130	/* beyond the kernel's 128 */
#define NERR		134
#define MAXPRINT	100	/* failure lines printed */
#define KADDR		0xffffffff81000000UL
#define NHEALTH		6
#define NATT		80	/* words a thread may attach: pool and read-only */
#define MAXW		64	/* -j limit */
#define NFLIGHT		32	/* in-flight call records per worker */

/* ---- what is counted ------------------------------------------------ */

/*
 * The command of a futex(2) operation, without its flags: FUTEX_PRIVATE_FLAG,
 * FUTEX_CLOCK_REALTIME and (on a kernel with attached futexes; without
 * them, an op with it fails with ENOSYS anyway) FUTEX_ATTACHED.  Any other
 * bit, 512 and 1024 included, is part of the command.
 */
#define FUTEX_CMD(op)	((unsigned int)(op) & \
			 ~(unsigned int)(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME | FUTEX_ATTACHED))

_Static_assert(FUTEX_LOCK_PI2 == 13, "kinds 0-13 are the commands 0-13");

enum kind {
	/*
	 * futex(2): kinds 0-13 are the commands 0-13; the series' commands,
	 * numbered down from 127, are kinds 14-16 (kind_cmd[], cmd_kind()).
	 */
	K_PREALLOC = 14, K_ATTACH, K_DETACH,
	K_FUTEX_LAST = K_DETACH,
	K_BADCMD,		/* any other command */
	K_ATTOP,		/* commands 0-13 and FUTEX_PREALLOC_HASH with FUTEX_ATTACHED */
	K_WAITV, K_WAKE2, K_WAIT2, K_REQUEUE2,
	K_PR_SET, K_PR_GET, K_PR_OTHER, K_ROBUST,
	/* the process life cycle */
	K_THREAD, K_CLONE_VM, K_VFORK, K_FORK, K_EXEC, K_EXIT, K_EXIT_GROUP,
	K_NR
};

static const char *const kind_names[K_NR] = {
	"FUTEX_WAIT", "FUTEX_WAKE", "FUTEX_FD", "FUTEX_REQUEUE", "FUTEX_CMP_REQUEUE",
	"FUTEX_WAKE_OP", "FUTEX_LOCK_PI", "FUTEX_UNLOCK_PI", "FUTEX_TRYLOCK_PI",
	"FUTEX_WAIT_BITSET", "FUTEX_WAKE_BITSET", "FUTEX_WAIT_REQUEUE_PI",
	"FUTEX_CMP_REQUEUE_PI", "FUTEX_LOCK_PI2", "FUTEX_PREALLOC_HASH", "FUTEX_ATTACH",
	"FUTEX_DETACH", "futex(unknown cmd)", "futex(FUTEX_ATTACHED)",
	"futex_waitv", "futex_wake", "futex_wait", "futex_requeue",
	"prctl(SET_SLOTS)", "prctl(GET_SLOTS)", "prctl(bad op)", "set_robust_list",
	"clone(thread)", "clone(CLONE_VM)", "clone(VM|VFORK)", "fork", "execve",
	"exit(thread)", "exit_group",
};

/* The command of futex(2) kind 0-16 */
static const unsigned int kind_cmd[K_FUTEX_LAST + 1] = {
	FUTEX_WAIT, FUTEX_WAKE, 2 /* FUTEX_FD */, FUTEX_REQUEUE, FUTEX_CMP_REQUEUE, FUTEX_WAKE_OP,
	FUTEX_LOCK_PI, FUTEX_UNLOCK_PI, FUTEX_TRYLOCK_PI, FUTEX_WAIT_BITSET, FUTEX_WAKE_BITSET,
	FUTEX_WAIT_REQUEUE_PI, FUTEX_CMP_REQUEUE_PI, FUTEX_LOCK_PI2,
	[K_PREALLOC] = FUTEX_PREALLOC_HASH, [K_ATTACH] = FUTEX_ATTACH, [K_DETACH] = FUTEX_DETACH,
};

/* The kind of futex(2) command @cmd (FUTEX_CMD()): 0-16, or K_BADCMD */
static int cmd_kind(unsigned int cmd)
{
	switch (cmd) {
	case FUTEX_PREALLOC_HASH: return K_PREALLOC;
	case FUTEX_ATTACH: return K_ATTACH;
	case FUTEX_DETACH: return K_DETACH;
	}
	return cmd <= FUTEX_LOCK_PI2 ? (int)cmd : K_BADCMD;
}

struct kstat {
	long calls;
	long errs;
	long pos;		/* successful returns > 0: woken, requeued, index, size */
	long err[NERR];
};

struct health {
	int state;		/* 0 not run, 1 ok, 2 failed, 3 skipped */
	char why[200];
};

/* The call a task is in, for the report on a worker killed at its deadline. */
struct flight {
	long tid;
	int kind;
	long a[6];
};

/* In memory shared by the parent, the workers and their children. */
struct shared {
	struct kstat k[K_NR];
	long unexpected;	/* results the ABI does not allow */
	long deaths;		/* children and threads dead by a signal */
	long printed;
	int stop;
	int selftest;
	int selftest_fired;
	struct health health[NHEALTH];
	struct flight flight[MAXW][NFLIGHT];
	struct numastat {
		long calls;	/* valid flags, FUTEX2_NUMA in the call or an entry */
		long ok, einval, efault;
		long misaligned;	/* a FUTEX2_NUMA pair not aligned to 8 bytes */
		long mpol, mpol_ok;	/* FUTEX2_MPOL without FUTEX2_NUMA */
		/* FUTEX_NO_NODE stored, then the call got past the node word: */
		long no_node, node[2], node_other, still_no_node;
	} numa;
};
static struct shared *sh;
static int att_sup;		/* the kernel has attached futexes */
static int att_max = 256;	/* kernel.futex_attached_max */
static int policy = -1;		/* kernel.futex_private_hash, constant during the run */

#define LD(x)		__atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define ST(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)
#define ADD(x, v)	__atomic_add_fetch(&(x), (v), __ATOMIC_SEQ_CST)

/*
 * The futex hash state of this process's mm, as far as the checks need
 * it: a worker, its threads and its CLONE_VM children share it (it lives
 * in their common memory); a fork child starts afresh (do_fork()).  A
 * mark that makes an errno possible is set before the call that may
 * cause it, one that makes it required after that call succeeded, so
 * that a call racing the checked one is told from one that came before.
 */
struct pstate {
	int att_maybe;		/* a FUTEX_ATTACH that may have marked the mm was issued */
	int att_done;		/* a FUTEX_ATTACH succeeded: SET_SLOTS 0 fails with EBUSY */
	long glob_seq;		/* SET_SLOTS 0 calls issued */
	int glob_inflight;	/* SET_SLOTS 0 calls not returned yet */
	int glob_done;		/* a SET_SLOTS 0 succeeded: the global hash, for good */
	int glob_unknown;	/* a fork child of a process that may have chosen it */
};
static struct pstate ps;

static void inc(long *p)
{
	__atomic_fetch_add(p, 1, __ATOMIC_RELAXED);
}

/* ---- raw system calls: no errno, usable in CLONE_VM children -------- */

static inline long rsys(long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

static void out(const char *buf)
{
	size_t len = strlen(buf);

	while (len) {
		long n = rsys(SYS_write, 1, (long)buf, len, 0, 0, 0);

		if (n <= 0)
			return;
		buf += n;
		len -= n;
	}
}

static void outf(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	out(buf);
}

/* ---- the address pool ------------------------------------------------ */

enum cat { C_SHARED, C_PRIVATE, C_UNALIGNED, C_NULL, C_UNMAPPED, C_PROTNONE, C_RO, C_KERNEL };
static const char *const cat_names[] = {
	"shared-map", "private-map", "unaligned", "NULL", "unmapped", "PROT_NONE", "read-only", "kernel",
};
#define BAD(c)		((c) >= C_UNALIGNED)
/* Rejected by every call that uses the address: alignment and access_ok(). */
#define REJECTED(c)	((c) == C_UNALIGNED || (c) == C_KERNEL)

static char *pool_sh, *pool_pr, *ro_pr, *ro_sh, *none_pg;
static unsigned long unmapped;
static long pagesz;

static uint32_t *word(int shared, unsigned int k)
{
	static const int off[NWORDS - NROBUST] = { 0, 64, 2048, 4092 };
	char *b = shared ? pool_sh : pool_pr;

	if (k < NROBUST)
		return (uint32_t *)(b + k * WSTRIDE);
	return (uint32_t *)(b + pagesz + off[k - NROBUST]);
}

/* ---- per-thread state ------------------------------------------------ */

struct rnode {
	struct robust_list node;
	long pad;
};
_Static_assert(sizeof(struct rnode) == WSTRIDE, "robust entries must be spaced like the words");

/* A word this thread attached, and its category */
struct attw {
	void *p;
	int cat;
};

struct ctx {
	uint64_t rng;
	long tid;
	int worker;
	int slot;		/* the worker's slot, for the in-flight records */
	int leaf;		/* a child: no threads, forks or clones */
	int extra;		/* a short-lived thread */
	int slice;
	struct timespec ts;
	struct futex_waitv wv[WAITV_MAX];
	struct futex_waitv rq[2];
	struct robust_list_head rhead;
	struct rnode rnode[NROBUST];
	int natt;		/* attached by this thread; 0 in a new task */
	struct attw att[NATT];
};

static uint64_t rnd64(struct ctx *c)
{
	uint64_t x = c->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	c->rng = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static unsigned int rnd(struct ctx *c, unsigned int n)
{
	return (unsigned int)((rnd64(c) >> 32) % n);
}

static int pct(struct ctx *c, unsigned int p)
{
	return rnd(c, 100) < p;
}

static void *pick_bad(struct ctx *c, int *cat, unsigned int badpct)
{
	int s = rnd(c, 2);

	if (!pct(c, badpct)) {
		*cat = s ? C_SHARED : C_PRIVATE;
		return word(s, pct(c, 60) ? rnd(c, 4) : rnd(c, NWORDS));
	}
	switch (rnd(c, 6)) {
	case 0:
		*cat = C_UNALIGNED;
		return (char *)word(s, rnd(c, NWORDS)) + 1 + rnd(c, 3);
	case 1:
		*cat = C_NULL;
		return NULL;
	case 2:
		*cat = C_UNMAPPED;
		return (void *)(unmapped + 4 * rnd(c, 16));
	case 3:
		*cat = C_PROTNONE;
		return none_pg + 4 * rnd(c, 16);
	case 4:
		*cat = C_RO;
		return (s ? ro_sh : ro_pr) + 4 * rnd(c, 16);
	default:
		*cat = C_KERNEL;
		return (void *)(KADDR + 4 * rnd(c, 16));
	}
}

static void *pick(struct ctx *c, int *cat)
{
	return pick_bad(c, cat, 22);
}

/* A second address near the first, so that requeues find their waiters. */
static void *partner(struct ctx *c, void *p1, int c1, int *cat)
{
	unsigned int k;

	if (BAD(c1) || !pct(c, 70))
		return pick(c, cat);
	*cat = c1;
	for (k = 0; k < 4; k++)
		if (word(c1 == C_SHARED, k) == p1)
			return word(c1 == C_SHARED, (k + 1) % 4);
	return word(c1 == C_SHARED, rnd(c, 4));
}

static uint32_t cur(void *p, int cat)
{
	return BAD(cat) ? 0 : __atomic_load_n((uint32_t *)p, __ATOMIC_RELAXED);
}

/* The value a wait expects: mostly the current one, so that it blocks. */
static uint32_t wval(struct ctx *c, void *p, int cat)
{
	unsigned int r = rnd(c, 100);

	if (r < 72)
		return cur(p, cat);
	if (r < 82)
		return cur(p, cat) ^ 1;
	if (r < 90)
		return 0;
	return (uint32_t)rnd64(c);
}

/* A count: nr_wake, nr_requeue. */
static int nrval(struct ctx *c)
{
	unsigned int r = rnd(c, 100);

	if (r < 84)
		return rnd(c, 4);
	if (r < 90)
		return INT_MAX;
	if (r < 95)
		return -1;
	return (int)rnd64(c);
}

enum tscat { TS_VALID, TS_ZEROS, TS_EINVAL, TS_EFAULT };
static const char *const ts_names[] = { "valid", "zeros(ro)", "invalid", "bad-pointer" };

/*
 * A timeout for a blocking call: a few milliseconds (relative, or absolute
 * on @clk), sometimes invalid or a bad pointer; never NULL, never far away.
 */
static void *mk_ts(struct ctx *c, clockid_t clk, int relative, int *tc)
{
	struct timespec *ts = &c->ts;
	unsigned int r = rnd(c, 100);
	long us;

	*tc = TS_VALID;
	if (r < 94) {
		us = r < 88 ? (pct(c, 92) ? (long)rnd(c, 3000) : 10000 + rnd(c, 40000)) : 0;
		if (relative) {
			ts->tv_sec = 0;
			ts->tv_nsec = us * 1000;
		} else {
			clock_gettime(clk, ts);
			ts->tv_nsec += us * 1000;
			while (ts->tv_nsec >= 1000000000) {
				ts->tv_nsec -= 1000000000;
				ts->tv_sec++;
			}
		}
		return ts;
	}
	if (r < 96) {
		*tc = TS_EINVAL;
		ts->tv_sec = 0;
		ts->tv_nsec = 1000000000 + rnd(c, 1000000);
		return ts;
	}
	if (r < 97) {
		*tc = TS_EINVAL;
		ts->tv_sec = -1 - (long)rnd(c, 1000);
		ts->tv_nsec = 0;
		return ts;
	}
	switch (rnd(c, 3)) {
	case 0:
		*tc = TS_EFAULT;
		return (void *)KADDR;
	case 1:
		*tc = TS_EFAULT;
		return (void *)unmapped;
	default:
		*tc = TS_ZEROS;		/* {0, 0}: expired at once */
		return ro_pr;
	}
}

/* ---- checking one result --------------------------------------------- */

enum { B_EPERM, B_ESRCH, B_EINTR, B_EAGAIN, B_ENOMEM, B_EFAULT, B_EBUSY, B_EINVAL,
       B_ENOSYS, B_EDEADLK, B_ETIMEDOUT, B_EBADF, B_ENOSPC, B_NR };
static const int bit_errno[B_NR] = { EPERM, ESRCH, EINTR, EAGAIN, ENOMEM, EFAULT, EBUSY, EINVAL,
				     ENOSYS, EDEADLK, ETIMEDOUT, EBADF, ENOSPC };
#define A(e)	(1u << B_##e)

struct call {
	int kind;
	const char *sys;
	long a[6];
	unsigned int allow;	/* errnos this call may return */
	long maxret;		/* largest successful return */
	int pow2;		/* success: a power of two in [2, 2^20] (or 0 if zero_ok) */
	int zero_ok;
	const char *mustfail;	/* why this input must be rejected, or NULL */
	char desc[160];		/* the input, for the report */
	/*
	 * Called as soon as the call returned, before its result is checked:
	 * adds the errnos a racing call of another thread made possible.
	 */
	void (*late)(struct call *k);
	long gseq;		/* ps.glob_seq and ps.glob_inflight before the call */
	int ginfl;
	int slots0;		/* the call is a valid SET_SLOTS 0 (counted in ps.glob_seq) */
};

static void fail(struct call *k, long r, const char *why)
{
	char allowed[160] = "", buf[800];
	int b, n = 0;

	inc(&sh->unexpected);
	if (__atomic_fetch_add(&sh->printed, 1, __ATOMIC_RELAXED) >= MAXPRINT)
		return;
	for (b = 0; b < B_NR; b++)
		if (k->allow & (1u << b))
			n += snprintf(allowed + n, sizeof(allowed) - n, "%s%s", n ? "," : "",
				      strerrorname_np(bit_errno[b]));
	snprintf(buf, sizeof(buf),
		 "# sysfuzz: FAIL: %s: %s(%#lx, %#lx, %#lx, %#lx, %#lx, %#lx) [%s] = %ld%s%s: %s (allowed: %s; success %s)\n",
		 kind_names[k->kind], k->sys, k->a[0], k->a[1], k->a[2], k->a[3], k->a[4], k->a[5], k->desc,
		 r < 0 ? -1L : r, r < 0 ? " " : "", r < 0 ? strerrorname_np(-r) ?: "?" : "", why, allowed,
		 k->mustfail ? k->mustfail : k->pow2 ? "a power of two" : "in range");
	out(buf);
}

struct ctx;
static long issue(struct ctx *c, long nr, struct call *k)
{
	struct flight *f = &sh->flight[c->slot][c->tid % NFLIGHT];
	struct kstat *s = &sh->k[k->kind];
	char why[96];
	long r;
	int b, e;

	f->kind = k->kind;
	memcpy(f->a, k->a, sizeof(f->a));
	__atomic_store_n(&f->tid, c->tid, __ATOMIC_RELEASE);
	r = rsys(nr, k->a[0], k->a[1], k->a[2], k->a[3], k->a[4], k->a[5]);
	__atomic_store_n(&f->tid, 0, __ATOMIC_RELEASE);
	if (k->late)
		k->late(k);
	inc(&s->calls);
	if (r >= 0) {
		if (r > 0)
			inc(&s->pos);
		if (k->mustfail) {
			fail(k, r, "succeeded on input it must reject");
		} else if (k->pow2) {
			if (!(r == 0 && k->zero_ok) && (r < 2 || r > (1L << 20) || (r & (r - 1))))
				fail(k, r, "size is not a power of two in [2, 2^20]");
		} else if (r > k->maxret) {
			snprintf(why, sizeof(why), "return value out of range 0..%ld", k->maxret);
			fail(k, r, why);
		}
		return r;
	}
	e = (int)-r;
	inc(&s->errs);
	inc(&s->err[e < NERR ? e : 0]);
	for (b = 0; b < B_NR && bit_errno[b] != e; b++)
		;
	if (b == B_NR || !(k->allow & (1u << b)))
		fail(k, r, "errno not allowed for this call and input");
	else if (sh->selftest && k->kind == FUTEX_WAIT_BITSET && e == ETIMEDOUT &&
		 !__atomic_exchange_n(&sh->selftest_fired, 1, __ATOMIC_RELAXED))
		fail(k, r, "self-test (-X): ETIMEDOUT declared unexpected");
	return r;
}


/* ---- the process's choice of the global hash ------------------------- */

/* Before a call the global hash may fail: what is in flight. */
static void glob_snap(struct call *k)
{
	k->gseq = LD(ps.glob_seq);
	k->ginfl = LD(ps.glob_inflight);
}

/*
 * After it: whether the process may have chosen the global hash before
 * the kernel looked: it had, a SET_SLOTS 0 was in flight when the call
 * started or was issued before it returned (the call's own not counted).
 */
static int glob_maybe(struct call *k)
{
	return LD(ps.glob_done) || LD(ps.glob_unknown) || k->ginfl > 0 ||
	       LD(ps.glob_seq) - k->gseq > (long)k->slots0;
}

/* FUTEX_ATTACH: EPERM once the process chose the global hash */
static void late_attach(struct call *k)
{
	if (glob_maybe(k))
		k->allow |= A(EPERM);
}

/* FUTEX_PREALLOC_HASH: EBUSY once the process chose the global hash */
static void late_prealloc(struct call *k)
{
	if (glob_maybe(k))
		k->allow |= A(EBUSY);
}

/* SET_SLOTS: EBUSY after SET_SLOTS 0; SET_SLOTS 0: also after a FUTEX_ATTACH */
static void late_set(struct call *k)
{
	if (glob_maybe(k) || (k->slots0 && LD(ps.att_maybe)))
		k->allow |= A(EBUSY);
}

/* ---- attached futexes: what this thread attached -------------------- */

static int att_find(struct ctx *c, void *p)
{
	int i;

	for (i = 0; i < c->natt; i++)
		if (c->att[i].p == p)
			return i;
	return -1;
}

static void att_add(struct ctx *c, void *p, int cat)
{
	if (att_find(c, p) >= 0)
		return;
	if (c->natt == NATT) {
		outf("# sysfuzz: BUG: more than %d attached words in one thread\n", NATT);
		return;
	}
	c->att[c->natt++] = (struct attw){ .p = p, .cat = cat };
}

static void att_del(struct ctx *c, void *p)
{
	int i = att_find(c, p);

	if (i >= 0)
		c->att[i] = c->att[--c->natt];
}

/* ---- futex(2) -------------------------------------------------------- */

/*
 * The result of a futex(2) call with FUTEX_ATTACHED, or of FUTEX_ATTACH or
 * FUTEX_DETACH, in the order of the kernel's checks: the timeout (read by
 * the system call before the command is looked at, only on a kernel with
 * attached futexes: without them the op is an unknown command), do_futex()
 * and futex_attached_op().  The commands that take the flag keep the model
 * of their plain version once the word is one this thread attached.
 *
 * Where the order of two checks is not known (an unknown command, or one
 * that does not take the flag, with an input an earlier check of an
 * attached op rejects; FUTEX_ATTACH's EPERM against a word it cannot read
 * or the ENOSPC of kernel.futex_attached_max 0), either errno is allowed.
 */
static void model_attached(struct ctx *c, struct call *k, int op, int c1, int usests, int tc)
{
	unsigned int cmd = FUTEX_CMD(op);
	void *u = (void *)k->a[0];
	int att = !!(op & FUTEX_ATTACHED), attached = u && att_find(c, u) >= 0;
	int clockrt = !!(op & FUTEX_CLOCK_REALTIME);
	/* FUTEX_FD (2) is no command since 2.6.26, yet listed as one that does not take the flag */
	int unknown = cmd_kind(cmd) == K_BADCMD, fd = cmd == 2;
	int takes = cmd == FUTEX_ATTACH || cmd == FUTEX_DETACH || cmd == FUTEX_WAIT || cmd == FUTEX_WAKE ||
		    cmd == FUTEX_WAIT_BITSET || cmd == FUTEX_WAKE_BITSET || cmd == FUTEX_LOCK_PI ||
		    cmd == FUTEX_LOCK_PI2 || cmd == FUTEX_TRYLOCK_PI || cmd == FUTEX_UNLOCK_PI;
	/* Besides the errno of an earlier check: the one a later check of the command gives */
	unsigned int cmd_err = unknown ? A(ENOSYS) : fd ? A(EINVAL) | A(ENOSYS) : !takes ? A(EINVAL) : 0;
	/* val, val2 (the timeout argument), uaddr2, val3 */
	int unused = (uint32_t)k->a[2] || (uint32_t)k->a[3] || k->a[4] || (uint32_t)k->a[5];
	int perm_must, perm_may, unreadable;
	const char *why = NULL;
	unsigned int allow = 0;
	size_t n = strlen(k->desc);

	snprintf(k->desc + n, sizeof(k->desc) - n, ", %s by this thread", attached ? "attached" : "not attached");
	k->pow2 = k->zero_ok = 0;
	k->late = NULL;		/* FUTEX_PREALLOC_HASH's, with the flag */
	if (!att_sup) {
		allow = A(ENOSYS);
		why = "FUTEX_ATTACH, FUTEX_DETACH or FUTEX_ATTACHED on a kernel without attached futexes";
	} else if (att && usests && (tc == TS_EINVAL || tc == TS_EFAULT)) {
		allow = tc == TS_EFAULT ? A(EFAULT) : A(EINVAL);
		why = "invalid timeout";
	} else if (!att && clockrt) {
		allow = A(ENOSYS);
		why = "FUTEX_CLOCK_REALTIME with a command that has no absolute timeout";
	} else if (!att) {
		allow = A(EINVAL);
		why = "FUTEX_ATTACH or FUTEX_DETACH without FUTEX_ATTACHED";
	} else if (clockrt && cmd != FUTEX_WAIT_BITSET && cmd != FUTEX_LOCK_PI2) {
		allow = A(ENOSYS);
		why = "FUTEX_ATTACHED|FUTEX_CLOCK_REALTIME with neither FUTEX_WAIT_BITSET nor FUTEX_LOCK_PI2";
	} else if (!(op & FUTEX_PRIVATE_FLAG)) {
		allow = A(EINVAL) | cmd_err;
		why = "FUTEX_ATTACHED without FUTEX_PRIVATE_FLAG";
	} else if ((uintptr_t)u % 4) {
		/* Checked before any cache lookup, as get_futex_key() would */
		allow = A(EINVAL) | cmd_err;
		why = "FUTEX_ATTACHED with an unaligned uaddr";
	} else if (!u) {
		allow = A(EFAULT) | cmd_err;
		why = "FUTEX_ATTACHED with a NULL uaddr";
	} else if (unknown) {
		allow = A(ENOSYS);
		why = "FUTEX_ATTACHED with an unknown command";
	} else if (!takes) {
		allow = cmd_err;
		why = "FUTEX_ATTACHED with a command that does not take it";
	} else if ((cmd == FUTEX_ATTACH || cmd == FUTEX_DETACH) && unused) {
		allow = A(EINVAL);
		why = "FUTEX_ATTACH or FUTEX_DETACH with a non-zero unused argument";
	} else if (cmd == FUTEX_DETACH && !attached) {
		allow = A(EBADF);
		why = "FUTEX_DETACH of a word this thread has not attached";
	} else if (cmd == FUTEX_DETACH) {
		/* EBUSY: the futex of a PI owner, whose TID a pool word may hold */
		allow = c1 == C_SHARED || c1 == C_PRIVATE ? A(EBUSY) : 0;
	} else if (cmd == FUTEX_ATTACH) {
		/*
		 * It needs the process's private table: EPERM under policy 0
		 * or once the process chose the global hash (late_attach()
		 * adds a SET_SLOTS 0 racing this call).  Whatever the result,
		 * the process may be marked as attaching from now on.
		 */
		perm_must = policy == 0 || LD(ps.glob_done);
		perm_may = perm_must || LD(ps.glob_unknown) || LD(ps.glob_inflight);
		unreadable = BAD(c1) && c1 != C_RO;
		glob_snap(k);
		k->late = late_attach;
		ST(ps.att_maybe, 1);
		if (attached) {
			/* attaching again does nothing */
			allow = perm_may ? A(EPERM) : 0;
		} else if (unreadable) {
			allow = A(EFAULT) | (perm_may ? A(EPERM) : 0);
			why = "FUTEX_ATTACH of a word that cannot be read";
		} else if (perm_must) {
			allow = A(EPERM) | (c->natt >= att_max ? A(ENOSPC) : 0);
			why = policy == 0 ? "FUTEX_ATTACH under kernel.futex_private_hash=0" :
			      "FUTEX_ATTACH after PR_FUTEX_HASH_SET_SLOTS 0 (the global hash)";
		} else if (c->natt >= att_max) {
			allow = A(ENOSPC) | (perm_may ? A(EPERM) : 0);
			why = "FUTEX_ATTACH beyond kernel.futex_attached_max";
		} else {
			/*
			 * ENOMEM: the table, the state or the cache; EBUSY:
			 * unattached PI waiters, which a read-only word cannot
			 * have.  No ENOSPC below the limit.
			 */
			allow = A(ENOMEM) | (c1 != C_RO ? A(EBUSY) : 0) | (perm_may ? A(EPERM) : 0);
		}
	} else if (cmd == FUTEX_WAIT_BITSET && !(uint32_t)k->a[5]) {
		allow = A(EINVAL);
		why = "empty bitset";
	} else if (!attached) {
		allow = A(EBADF);
		why = "FUTEX_ATTACHED on a word this thread has not attached";
	} else if (cmd == FUTEX_WAKE_BITSET && !(uint32_t)k->a[5]) {
		allow = A(EINVAL);
		why = "empty bitset";
	} else {
		return;		/* as the command without the flag */
	}
	if (cmd == FUTEX_ATTACH || cmd == FUTEX_DETACH)
		k->maxret = 0;
	k->mustfail = why;
	k->allow = allow;
}

/*
 * An op whose command is unknown: mostly 14-124, the gap between mainline's
 * commands and the series' (numbered down from 127), else a command with
 * one of the bits 9-29 set (512 and 1024 most often: neither is a flag) or
 * a random op word; with random flags, FUTEX_ATTACHED included.
 */
static int bad_op(struct ctx *c)
{
	unsigned int r = rnd(c, 100), op;

	if (r < 45)
		op = 14 + rnd(c, 111);		/* 14-124 */
	else if (r < 70)
		op = kind_cmd[rnd(c, K_FUTEX_LAST + 1)] |
		     (pct(c, 60) ? 512U << rnd(c, 2) : 1U << (9 + rnd(c, 21)));
	else
		op = (unsigned int)rnd64(c);
	if (r < 70)
		op |= (pct(c, 50) ? FUTEX_PRIVATE_FLAG : 0) | (pct(c, 8) ? FUTEX_CLOCK_REALTIME : 0) |
		      (pct(c, 25) ? FUTEX_ATTACHED : 0);
	if (cmd_kind(FUTEX_CMD(op)) != K_BADCMD)
		op |= 0x40000;
	return (int)op;
}

static void do_futex(struct ctx *c)
{
	/* by kind */
	static const unsigned char weight[K_BADCMD + 1] = {
		[FUTEX_WAIT] = 60, [FUTEX_WAKE] = 60, [2] = 5, [FUTEX_REQUEUE] = 25,
		[FUTEX_CMP_REQUEUE] = 35, [FUTEX_WAKE_OP] = 40, [FUTEX_LOCK_PI] = 50,
		[FUTEX_UNLOCK_PI] = 50, [FUTEX_TRYLOCK_PI] = 35, [FUTEX_WAIT_BITSET] = 45,
		[FUTEX_WAKE_BITSET] = 35, [FUTEX_WAIT_REQUEUE_PI] = 40,
		[FUTEX_CMP_REQUEUE_PI] = 40, [FUTEX_LOCK_PI2] = 40, [K_PREALLOC] = 20,
		[K_ATTACH] = 25, [K_DETACH] = 25, [K_BADCMD] = 20,
	};
	struct call k = { .sys = "futex" };
	int kind, op, shared, clockrt, rt_enosys, c1, c2, tc = TS_VALID, chan, att;
	int uses2 = 0, usests = 0, n1 = 0, n2 = 0;
	unsigned int r = rnd(c, 650), cmdu;
	uint32_t val, val3;
	void *u1, *u2;
	long a4, ret;

	for (kind = 0; r >= weight[kind]; kind++)
		r -= weight[kind];
	if (kind == K_BADCMD) {
		op = bad_op(c);
	} else {
		if (kind == K_ATTACH || kind == K_DETACH)
			/* mostly valid: the flag, private, no clock */
			op = kind_cmd[kind] | (pct(c, 93) ? FUTEX_ATTACHED : 0) |
			     (pct(c, 93) ? FUTEX_PRIVATE_FLAG : 0) | (pct(c, 3) ? FUTEX_CLOCK_REALTIME : 0);
		else
			op = kind_cmd[kind] | (pct(c, 55) ? FUTEX_PRIVATE_FLAG : 0) |
			     (pct(c, 8) ? FUTEX_CLOCK_REALTIME : 0) |
			     (pct(c, 12) ? FUTEX_ATTACHED | (pct(c, 85) ? FUTEX_PRIVATE_FLAG : 0) : 0);
		if (pct(c, 2))
			op ^= 1 << rnd(c, 31);
	}
	cmdu = FUTEX_CMD(op);
	att = !!(op & FUTEX_ATTACHED);
	kind = cmd_kind(cmdu);
	k.kind = att && kind <= K_PREALLOC ? K_ATTOP : kind;
	shared = !(op & FUTEX_PRIVATE_FLAG);
	clockrt = !!(op & FUTEX_CLOCK_REALTIME);
	rt_enosys = clockrt && cmdu != FUTEX_WAIT_BITSET && cmdu != FUTEX_WAIT_REQUEUE_PI &&
		    cmdu != FUTEX_LOCK_PI2;

	/*
	 * Half of the requeue-PI calls use one channel, words 4 -> 5 of a pool
	 * with the flag that matches it, so that waiters and requeuers meet.
	 */
	chan = (cmdu == FUTEX_WAIT_REQUEUE_PI || cmdu == FUTEX_CMP_REQUEUE_PI) && pct(c, 50);
	if (chan) {
		op = (op & ~FUTEX_PRIVATE_FLAG) | (rnd(c, 2) ? FUTEX_PRIVATE_FLAG : 0);
		shared = !(op & FUTEX_PRIVATE_FLAG);
		c1 = c2 = shared ? C_SHARED : C_PRIVATE;
		u1 = word(shared, 4);
	} else if (att && c->natt && pct(c, cmdu == FUTEX_ATTACH ? 20 : 60)) {
		/* a word this thread attached */
		struct attw *a = &c->att[rnd(c, c->natt)];

		u1 = a->p;
		c1 = a->cat;
	} else {
		u1 = pick(c, &c1);
	}
	switch (cmdu) {
	case FUTEX_REQUEUE: case FUTEX_CMP_REQUEUE: case FUTEX_WAKE_OP:
	case FUTEX_WAIT_REQUEUE_PI: case FUTEX_CMP_REQUEUE_PI:
		uses2 = 1;
		u2 = chan ? word(shared, 5) : partner(c, u1, c1, &c2);
		break;
	default:
		u2 = pick(c, &c2);	/* ignored by the kernel */
	}

	/* The fourth argument: a timeout on the command's clock, or val2. */
	switch (cmdu) {
	case FUTEX_WAIT:
		usests = 1;
		a4 = (long)mk_ts(c, CLOCK_MONOTONIC, 1, &tc);
		break;
	case FUTEX_LOCK_PI:
		usests = 1;
		a4 = (long)mk_ts(c, CLOCK_REALTIME, 0, &tc);
		break;
	case FUTEX_WAIT_BITSET: case FUTEX_WAIT_REQUEUE_PI: case FUTEX_LOCK_PI2:
		usests = 1;
		a4 = (long)mk_ts(c, clockrt ? CLOCK_REALTIME : CLOCK_MONOTONIC, 0, &tc);
		if (chan && tc == TS_VALID) {	/* wait long enough to be found */
			c->ts.tv_nsec += 20000000;
			if (c->ts.tv_nsec >= 1000000000) {
				c->ts.tv_nsec -= 1000000000;
				c->ts.tv_sec++;
			}
		}
		break;
	default:
		n2 = nrval(c);
		a4 = (long)(unsigned int)n2;
	}

	switch (cmdu) {
	case FUTEX_WAIT: case FUTEX_WAIT_BITSET: case FUTEX_WAIT_REQUEUE_PI:
		val = chan ? cur(u1, c1) : wval(c, u1, c1);
		break;
	case FUTEX_CMP_REQUEUE_PI:
		n1 = pct(c, 80) ? 1 : nrval(c);
		val = (uint32_t)n1;
		break;
	case FUTEX_WAKE: case FUTEX_WAKE_BITSET: case FUTEX_REQUEUE: case FUTEX_CMP_REQUEUE:
	case FUTEX_WAKE_OP:
		n1 = nrval(c);
		val = (uint32_t)n1;
		break;
	case FUTEX_PREALLOC_HASH:
		r = rnd(c, 10);
		val = r < 2 ? 0 : r < 7 ? 1U << rnd(c, 11) : r < 8 ? 1U << rnd(c, 18) :
		      r < 9 ? UINT_MAX : (uint32_t)rnd64(c);
		break;
	default:
		val = (uint32_t)rnd64(c);
	}

	switch (cmdu) {
	case FUTEX_WAIT_BITSET: case FUTEX_WAKE_BITSET:
		r = rnd(c, 100);
		val3 = r < 85 ? FUTEX_BITSET_MATCH_ANY : r < 93 ? 1U << rnd(c, 32) :
		       r < 97 ? 0 : (uint32_t)rnd64(c);
		break;
	case FUTEX_CMP_REQUEUE: case FUTEX_CMP_REQUEUE_PI:
		val3 = pct(c, 75) ? cur(u1, c1) : (uint32_t)rnd64(c);
		break;
	case FUTEX_WAKE_OP: {
		unsigned int wop = pct(c, 95) ? rnd(c, 5) : rnd(c, 8);
		unsigned int cmp = pct(c, 95) ? rnd(c, 6) : rnd(c, 16);
		unsigned int oparg = rnd(c, 4096);

		if (pct(c, 15)) {
			wop |= FUTEX_OP_OPARG_SHIFT;
			if (pct(c, 97))
				oparg = rnd(c, 32);
		}
		val3 = FUTEX_OP(wop, oparg, cmp, rnd(c, 4096));
		if ((wop & 7) > FUTEX_OP_XOR || cmp > FUTEX_OP_CMP_GE) {
			k.mustfail = "unknown FUTEX_WAKE_OP operation or comparison";
			k.allow |= A(ENOSYS);
		}
		break;
	}
	default:
		val3 = (uint32_t)rnd64(c);
	}

	/* FUTEX_ATTACH, FUTEX_DETACH: the unused arguments are mostly 0 */
	if (cmdu == FUTEX_ATTACH || cmdu == FUTEX_DETACH) {
		if (pct(c, 93))
			val = 0;
		if (pct(c, 93))
			a4 = 0;
		if (pct(c, 93)) {
			u2 = NULL;
			c2 = C_NULL;
		}
		if (pct(c, 93))
			val3 = 0;
	}
	if (usests && a4 != (long)&c->ts && a4 != (long)KADDR && a4 != (long)unmapped && a4 != (long)ro_pr)
		outf("# sysfuzz: BUG: op %#x got timeout argument %#lx\n", op, a4);
	k.a[0] = (long)u1;
	k.a[1] = op;
	k.a[2] = val;
	k.a[3] = a4;
	k.a[4] = (long)u2;
	k.a[5] = val3;
	snprintf(k.desc, sizeof(k.desc), "uaddr %s, uaddr2 %s%s, timeout %s", cat_names[c1], cat_names[c2],
		 uses2 ? "" : " (unused)", usests ? ts_names[tc] : "(none)");
	/* FUTEX_PREALLOC_HASH: its unused arguments must be 0, mostly they are */
	if (cmdu == FUTEX_PREALLOC_HASH && pct(c, 80)) {
		k.a[0] = k.a[3] = k.a[4] = k.a[5] = 0;
		snprintf(k.desc, sizeof(k.desc), "unused arguments 0");
	}

	/* What may come back. */
	k.allow |= A(EINVAL);
	if ((BAD(c1) && cmdu != FUTEX_PREALLOC_HASH) || (uses2 && BAD(c2)) || (usests && tc == TS_EFAULT))
		k.allow |= A(EFAULT);
	if (shared)
		k.allow |= A(ENOMEM);	/* get_user_pages_fast() */
	if (rt_enosys) {
		k.allow |= A(ENOSYS);
		k.mustfail = "FUTEX_CLOCK_REALTIME with a command that has no absolute timeout";
	}
	k.maxret = 0;
	switch (cmdu) {
	case FUTEX_WAIT: case FUTEX_WAIT_BITSET:
		k.allow |= A(EAGAIN) | A(ETIMEDOUT) | A(EINTR);
		break;
	case FUTEX_WAKE: case FUTEX_WAKE_BITSET:
		k.maxret = n1 > 1 ? n1 : 1;
		break;
	case FUTEX_CMP_REQUEUE:
		k.allow |= A(EAGAIN);
		/* fall through */
	case FUTEX_REQUEUE:
		k.maxret = (long)n1 + n2;
		if (n1 < 0 || n2 < 0)
			k.mustfail = "negative nr_wake or nr_requeue";
		break;
	case FUTEX_WAKE_OP:
		k.maxret = (n1 > 1 ? n1 : 1) + (long)(n2 > 1 ? n2 : 1);
		break;
	case FUTEX_LOCK_PI: case FUTEX_LOCK_PI2:
		k.allow |= A(ESRCH) | A(EPERM) | A(EDEADLK) | A(ETIMEDOUT) | A(ENOMEM);
		break;
	case FUTEX_TRYLOCK_PI:
		k.allow |= A(ESRCH) | A(EPERM) | A(EDEADLK) | A(EAGAIN) | A(ENOMEM);
		break;
	case FUTEX_UNLOCK_PI:
		k.allow |= A(EPERM) | A(EAGAIN);
		break;
	case FUTEX_WAIT_REQUEUE_PI:
		k.allow |= A(EAGAIN) | A(ETIMEDOUT);
		if (u1 == u2)
			k.mustfail = "uaddr == uaddr2";
		break;
	case FUTEX_CMP_REQUEUE_PI:
		k.allow |= A(EAGAIN) | A(ESRCH) | A(EPERM) | A(EDEADLK) | A(ENOMEM);
		k.maxret = (long)n2 + 1;
		if (n1 != 1 || n2 < 0)
			k.mustfail = "nr_wake != 1 or negative nr_requeue";
		else if (u1 == u2)
			k.mustfail = "uaddr == uaddr2";
		break;
	case FUTEX_PREALLOC_HASH:
		/* EPERM only under policy 0, EBUSY only after SET_SLOTS 0 (late_prealloc()) */
		k.allow = A(ENOMEM) | (policy == 0 ? A(EPERM) : 0);
		k.pow2 = 1;
		if (rt_enosys) {
			k.allow = A(ENOSYS);	/* do_futex() checks the clock first */
		} else if (shared) {
			k.allow |= A(EINVAL);
			k.mustfail = "FUTEX_PREALLOC_HASH without FUTEX_PRIVATE_FLAG";
		} else if (k.a[0] || (uint32_t)k.a[3] || k.a[4] || (uint32_t)k.a[5]) {
			/* uaddr, timeout (val2), uaddr2, val3 */
			k.allow |= A(EINVAL);
			k.mustfail = "FUTEX_PREALLOC_HASH with a non-zero unused argument";
		} else if (policy == 0) {
			k.mustfail = "FUTEX_PREALLOC_HASH under kernel.futex_private_hash=0";
		} else {
			glob_snap(&k);
			k.late = late_prealloc;
			if (LD(ps.glob_done)) {
				k.allow |= A(EBUSY);
				k.mustfail = "FUTEX_PREALLOC_HASH after PR_FUTEX_HASH_SET_SLOTS 0";
			}
		}
		break;
	default:		/* FUTEX_FD (removed in 2.6.26) and unknown commands */
		k.allow = A(ENOSYS);
		k.mustfail = "unknown command";
	}
	if (kind <= K_FUTEX_LAST && kind != 2 && kind != K_PREALLOC) {
		if (REJECTED(c1))
			k.mustfail = "unaligned or kernel uaddr";
		if (uses2 && REJECTED(c2))
			k.mustfail = "unaligned or kernel uaddr2";
		if (usests && (tc == TS_EINVAL || tc == TS_EFAULT))
			k.mustfail = "invalid timeout";
		if ((cmdu == FUTEX_WAIT_BITSET || cmdu == FUTEX_WAKE_BITSET) && !val3)
			k.mustfail = "empty bitset";
	}
	if (att || cmdu == FUTEX_ATTACH || cmdu == FUTEX_DETACH)
		model_attached(c, &k, op, c1, usests, tc);
	ret = issue(c, SYS_futex, &k);
	/* What the thread has attached now; the process attached for good */
	if (!ret && att && cmdu == FUTEX_ATTACH) {
		att_add(c, u1, c1);
		ST(ps.att_done, 1);
	} else if (!ret && att && cmdu == FUTEX_DETACH) {
		att_del(c, u1);
	}
}

/* ---- futex2 ------------------------------------------------------------ */

/* The futex2 flags the kernel takes: FUTEX2_NUMA and FUTEX2_MPOL since Linux 6.16 and the series */
#define F2_VALID	(FUTEX2_SIZE_MASK | FUTEX2_PRIVATE | FUTEX2_NUMA | FUTEX2_MPOL)

/* futex2 flags the kernel refuses with EINVAL: an unknown bit, a size other than U32 */
static int f2bad(unsigned int f)
{
	return (f & ~F2_VALID) || (f & FUTEX2_SIZE_MASK) != FUTEX2_SIZE_U32;
}

/*
 * Mostly U32, private or not, with FUTEX2_NUMA and FUTEX2_MPOL now and
 * then; else random bits 0-7 (sizes, NUMA, MPOL and the unknown bits
 * 0x10-0x40) or FUTEX_ATTACHED (no attached futex2 operations).
 */
static unsigned int f2flags(struct ctx *c, int *badflags)
{
	unsigned int f = FUTEX2_SIZE_U32 | (pct(c, 50) ? FUTEX2_PRIVATE : 0) |
			 (pct(c, 6) ? FUTEX2_NUMA : 0) | (pct(c, 4) ? FUTEX2_MPOL : 0);

	if (pct(c, 4))
		f = rnd(c, 256);
	else if (pct(c, 2))
		f |= FUTEX_ATTACHED;	/* no attached futex2 operations */
	*badflags = f2bad(f);
	return f;
}

/*
 * A node word value: FUTEX_NO_NODE (the kernel chooses and writes its
 * choice back), node 0 or 1 (the guest's two nodes), or an impossible one
 * (EINVAL): 2-63, a negative one other than FUTEX_NO_NODE, or random.
 */
static uint32_t node_val(struct ctx *c)
{
	unsigned int r = rnd(c, 100);

	return r < 45 ? (uint32_t)FUTEX_NO_NODE : r < 65 ? 0 : r < 85 ? 1 : r < 92 ? 2 + rnd(c, 62) :
	       r < 96 ? (uint32_t)FUTEX_NO_NODE - 1 - rnd(c, 16) : (uint32_t)rnd64(c);
}

/*
 * Before a call with FUTEX2_NUMA in @flags on a pool word whose pair is
 * aligned to 8 bytes: mostly set its node word first.  The node word of
 * such a word is in the pool's writable mapping and is no pool word.
 * Returns 1 if it stored FUTEX_NO_NODE.
 */
static int numa_prep(struct ctx *c, unsigned int flags, void *p, int cat)
{
	uint32_t v;

	if (!(flags & FUTEX2_NUMA) || f2bad(flags) || BAD(cat) || (uintptr_t)p % 8 || !pct(c, 60))
		return 0;
	v = node_val(c);
	__atomic_store_n((uint32_t *)p + 1, v, __ATOMIC_RELAXED);
	return v == (uint32_t)FUTEX_NO_NODE;
}

/*
 * A FUTEX2_NUMA pair not aligned to 8 bytes, with valid flags: EINVAL in
 * futex_key_node(), before the node word is read.  An unaligned or kernel
 * address (REJECTED()) fails get_futex_key()'s earlier checks instead.
 */
static int numa_misaligned(unsigned int flags, void *p, int cat)
{
	return (flags & FUTEX2_NUMA) && !f2bad(flags) && !REJECTED(cat) && (uintptr_t)p % 8;
}

/*
 * What FUTEX2_NUMA adds to the errnos of a call on @cat (aligned pair):
 * EINVAL for an impossible node, EFAULT where the node word cannot be
 * read or written back.  A pool word's node word can be both; the node
 * word of a bad address cannot be read (NULL, unmapped, PROT_NONE) or
 * holds node 0, which is not written back (read-only).
 */
static unsigned int numa_allow(unsigned int flags, int cat)
{
	if (!(flags & FUTEX2_NUMA) || f2bad(flags))
		return 0;
	return A(EINVAL) | (BAD(cat) ? A(EFAULT) : 0);
}

/* Count a futex2 call with FUTEX2_NUMA (@numa) or FUTEX2_MPOL alone (@mpol), valid flags */
static void numa_count(int numa, int mpol, int misaligned, long r)
{
	struct numastat *n = &sh->numa;

	if (numa) {
		inc(&n->calls);
		if (misaligned)
			inc(&n->misaligned);
		if (r >= 0)
			inc(&n->ok);
		else if (r == -EINVAL)
			inc(&n->einval);
		else if (r == -EFAULT)
			inc(&n->efault);
	} else if (mpol) {
		inc(&n->mpol);
		if (r >= 0)
			inc(&n->mpol_ok);
	}
}

/*
 * After a call that got past the node word of @p (any result but EINVAL,
 * EFAULT and ENOMEM, which may have come first), for which this thread stored
 * FUTEX_NO_NODE (@nonode): what the node word holds now.  Another thread
 * may have stored a node word meanwhile: counted, not checked.
 */
static void numa_written(long r, int nonode, void *p)
{
	uint32_t v;

	if (!nonode || r == -EINVAL || r == -EFAULT || r == -ENOMEM)
		return;
	v = __atomic_load_n((uint32_t *)p + 1, __ATOMIC_RELAXED);
	inc(&sh->numa.no_node);
	if (v == (uint32_t)FUTEX_NO_NODE)
		inc(&sh->numa.still_no_node);
	else if (v < 2)
		inc(&sh->numa.node[v]);
	else
		inc(&sh->numa.node_other);
}

/* A description of FUTEX2_NUMA/FUTEX2_MPOL in @flags and the node word of @p, for the report */
static void numa_desc(char *buf, size_t len, unsigned int flags, void *p, int cat)
{
	size_t n = strlen(buf);

	if (!(flags & (FUTEX2_NUMA | FUTEX2_MPOL)) || n >= len)
		return;
	if ((flags & FUTEX2_NUMA) && !BAD(cat) && (uintptr_t)p % 8 == 0)
		snprintf(buf + n, len - n, ", %s node word %#x", flags & FUTEX2_MPOL ? "NUMA|MPOL" : "NUMA",
			 __atomic_load_n((uint32_t *)p + 1, __ATOMIC_RELAXED));
	else
		snprintf(buf + n, len - n, ", %s", (flags & (FUTEX2_NUMA | FUTEX2_MPOL)) == FUTEX2_MPOL ? "MPOL" :
			 (uintptr_t)p % 8 ? "NUMA, pair misaligned" : "NUMA");
}

static clockid_t mk_clock(struct ctx *c, int *bad)
{
	static const clockid_t badclk[] = { -1, CLOCK_PROCESS_CPUTIME_ID, CLOCK_MONOTONIC_RAW, CLOCK_BOOTTIME, 1000 };
	unsigned int r = rnd(c, 100);

	*bad = 0;
	if (r < 50)
		return CLOCK_MONOTONIC;
	if (r < 95)
		return CLOCK_REALTIME;
	*bad = 1;
	return badclk[rnd(c, 5)];
}

/* A struct futex_waitv array: the vector itself or a bad pointer. */
static void *vec(struct ctx *c, void *v, int *cat)
{
	*cat = C_PRIVATE;
	if (pct(c, 95))
		return v;
	switch (rnd(c, 4)) {
	case 0:
		*cat = C_NULL;
		return NULL;
	case 1:
		*cat = C_KERNEL;
		return (void *)KADDR;
	case 2:
		*cat = C_UNMAPPED;
		return (void *)unmapped;
	default:
		*cat = C_RO;		/* zeros: flags 0 is FUTEX2_SIZE_U8 */
		return ro_pr;
	}
}

static void do_waitv(struct ctx *c)
{
	struct call k = { .kind = K_WAITV, .sys = "futex_waitv" };
	unsigned int nr = pct(c, 85) ? 1 + rnd(c, 8) : rnd(c, WAITV_MAX + 1), i, nbad = 0, nnuma = 0;
	int cat, vcat, badclk, tc, badflags, bad = 0, numa = 0, mpol = 0, mis = 0;
	clockid_t clk = mk_clock(c, &badclk);
	void *ts = mk_ts(c, badclk ? CLOCK_MONOTONIC : clk, 0, &tc);
	unsigned int flags = pct(c, 97) ? 0 : rnd(c, 255) + 1;
	/* the entries with FUTEX_NO_NODE stored in their node words */
	unsigned char nonode[WAITV_MAX];
	long ret;

	/* The entries: mostly valid; one corrupt entry in 10% of the vectors. */
	unsigned int corrupt = pct(c, 10) ? rnd(c, nr ? nr : 1) : UINT_MAX;

	for (i = 0; i < nr && i < WAITV_MAX; i++) {
		struct futex_waitv *w = &c->wv[i];
		void *p = pick_bad(c, &cat, nr > 2 ? 3 : 15);

		w->uaddr = (uintptr_t)p;
		w->val = pct(c, 80) ? cur(p, cat) : (uint32_t)rnd64(c);
		w->flags = FUTEX2_SIZE_U32 | (pct(c, 50) ? FUTEX2_PRIVATE : 0) |
			   (pct(c, 5) ? FUTEX2_NUMA : 0) | (pct(c, 3) ? FUTEX2_MPOL : 0);
		w->__reserved = 0;
		badflags = 0;
		if (i == corrupt) {
			switch (rnd(c, 3)) {
			case 0:
				w->flags = f2flags(c, &badflags);
				if (!badflags)	/* an unknown bit, or FUTEX_ATTACHED */
					w->flags = pct(c, 80) ? rnd(c, 256) | 0x10U << rnd(c, 3) :
						   w->flags | FUTEX_ATTACHED;
				badflags = 1;
				break;
			case 1:
				w->__reserved = rnd(c, 100) + 1;
				break;
			default:
				w->val |= 1ULL << (32 + rnd(c, 32));
			}
		}
		nonode[i] = numa_prep(c, w->flags, p, cat);
		if (i >= 128)
			continue;
		if (BAD(cat)) {
			bad = 1;
			nbad++;
		}
		if (!badflags && (w->flags & FUTEX2_NUMA)) {
			numa = 1;
			nnuma++;
		} else if (!badflags && (w->flags & FUTEX2_MPOL)) {
			mpol = 1;
		}
		/* FUTEX2_NUMA's EINVAL is allowed anyway, its EFAULT only with a bad address */
		k.allow |= numa_allow(w->flags, cat);
		if (REJECTED(cat))
			k.mustfail = "unaligned or kernel address in the vector";
		if (numa_misaligned(w->flags, p, cat)) {
			mis = 1;
			k.mustfail = "FUTEX2_NUMA pair not aligned to 8 bytes in the vector";
		}
		if (badflags || w->__reserved || (w->val >> 32))
			k.mustfail = "invalid waiter flags, size, reserved field or value";
	}
	k.a[0] = (long)vec(c, c->wv, &vcat);
	k.a[1] = nr;
	k.a[2] = flags;
	k.a[3] = (long)ts;
	k.a[4] = clk;
	if (vcat != C_PRIVATE) {
		bad = 1;
		k.mustfail = "bad vector pointer";
	}
	if (tc == TS_EFAULT)
		bad = 1;
	if (tc == TS_EINVAL || tc == TS_EFAULT)
		k.mustfail = "invalid timeout";
	if (badclk)
		k.mustfail = "clock neither CLOCK_MONOTONIC nor CLOCK_REALTIME";
	if (flags)
		k.mustfail = "flags != 0";
	if (!nr || nr > 128)
		k.mustfail = "nr_futexes 0 or > 128";
	snprintf(k.desc, sizeof(k.desc), "vector %s, %u bad addresses, %u NUMA entries, timeout %s",
		 cat_names[vcat], nbad, nnuma, ts_names[tc]);
	k.allow |= A(EINVAL) | A(EAGAIN) | A(ETIMEDOUT) | A(EINTR) | A(ENOMEM) | (bad ? A(EFAULT) : 0);
	k.maxret = (long)nr - 1;
	ret = issue(c, SYS_futex_waitv, &k);
	if (vcat != C_PRIVATE || nr > 128)
		return;		/* the kernel saw no entry */
	numa_count(numa, mpol, mis, ret);
	for (i = 0; i < nr; i++)
		numa_written(ret, nonode[i], (void *)(uintptr_t)c->wv[i].uaddr);
}

static unsigned long mk_mask(struct ctx *c, int *bad)
{
	unsigned int r = rnd(c, 100);
	unsigned long m;

	if (r < 88)
		m = FUTEX_BITSET_MATCH_ANY;
	else if (r < 94)
		m = 1UL << rnd(c, 32);
	else if (r < 97)
		m = 0;
	else
		m = 1UL << (32 + rnd(c, 32));
	*bad = !m || (m >> 32);
	return m;
}

static void do_wake2(struct ctx *c)
{
	struct call k = { .kind = K_WAKE2, .sys = "futex_wake" };
	int cat, badflags, badmask, nr = nrval(c), nonode;
	void *p = pick(c, &cat);
	unsigned long mask = mk_mask(c, &badmask);
	unsigned int flags = f2flags(c, &badflags);
	long ret;

	nonode = numa_prep(c, flags, p, cat);
	k.a[0] = (long)p;
	k.a[1] = mask;
	k.a[2] = nr;
	k.a[3] = flags;
	snprintf(k.desc, sizeof(k.desc), "uaddr %s", cat_names[cat]);
	numa_desc(k.desc, sizeof(k.desc), flags, p, cat);
	k.allow = A(EINVAL) | (BAD(cat) ? A(EFAULT) : 0) | (flags & FUTEX2_PRIVATE ? 0 : A(ENOMEM)) |
		  numa_allow(flags, cat);
	k.maxret = nr == 0 ? 0 : nr > 1 ? nr : 1;
	if (REJECTED(cat))
		k.mustfail = "unaligned or kernel uaddr";
	if (numa_misaligned(flags, p, cat)) {
		/* futex_key_node(), before the node word and the page: nothing else comes first */
		k.allow = A(EINVAL);
		k.mustfail = "FUTEX2_NUMA pair not aligned to 8 bytes";
	}
	if (badflags || badmask)
		k.mustfail = "invalid flags or mask";
	ret = issue(c, __NR_futex_wake, &k);
	if (!badflags && !REJECTED(cat)) {
		numa_count(!!(flags & FUTEX2_NUMA), !!(flags & FUTEX2_MPOL), numa_misaligned(flags, p, cat), ret);
		if (!badmask)
			numa_written(ret, nonode, p);
	}
}

static void do_wait2(struct ctx *c)
{
	struct call k = { .kind = K_WAIT2, .sys = "futex_wait" };
	int cat, badflags, badmask, badclk, tc, nonode;
	void *p = pick(c, &cat);
	unsigned long val = wval(c, p, cat), mask = mk_mask(c, &badmask);
	unsigned int flags = f2flags(c, &badflags);
	clockid_t clk = mk_clock(c, &badclk);
	void *ts = mk_ts(c, badclk ? CLOCK_MONOTONIC : clk, 0, &tc);
	long ret;

	if (pct(c, 2))
		val |= 1UL << (32 + rnd(c, 32));
	nonode = numa_prep(c, flags, p, cat);
	k.a[0] = (long)p;
	k.a[1] = val;
	k.a[2] = mask;
	k.a[3] = flags;
	k.a[4] = (long)ts;
	k.a[5] = clk;
	snprintf(k.desc, sizeof(k.desc), "uaddr %s, timeout %s", cat_names[cat], ts_names[tc]);
	numa_desc(k.desc, sizeof(k.desc), flags, p, cat);
	k.allow = A(EINVAL) | A(EAGAIN) | A(ETIMEDOUT) | A(EINTR) |
		  (BAD(cat) || tc == TS_EFAULT ? A(EFAULT) : 0) | (flags & FUTEX2_PRIVATE ? 0 : A(ENOMEM)) |
		  numa_allow(flags, cat);
	if (REJECTED(cat))
		k.mustfail = "unaligned or kernel uaddr";
	if (numa_misaligned(flags, p, cat)) {
		/* before it: the flags, value, mask, clock and timeout checks (EINVAL, EFAULT) */
		k.allow = A(EINVAL) | (tc == TS_EFAULT ? A(EFAULT) : 0);
		k.mustfail = "FUTEX2_NUMA pair not aligned to 8 bytes";
	}
	if (badflags || badmask || (val >> 32))
		k.mustfail = "invalid flags, mask or value";
	if (badclk || tc == TS_EINVAL || tc == TS_EFAULT)
		k.mustfail = "invalid clock or timeout";
	ret = issue(c, __NR_futex_wait, &k);
	if (!badflags && !REJECTED(cat)) {
		numa_count(!!(flags & FUTEX2_NUMA), !!(flags & FUTEX2_MPOL), numa_misaligned(flags, p, cat), ret);
		if (!badmask && !(val >> 32) && !badclk && tc != TS_EINVAL && tc != TS_EFAULT)
			numa_written(ret, nonode, p);
	}
}

static void do_requeue2(struct ctx *c)
{
	struct call k = { .kind = K_REQUEUE2, .sys = "futex_requeue" };
	int c0, c1, b0, b1, vcat, nr_wake = nrval(c), nr_requeue = nrval(c), n0, n1, mis;
	void *p0 = pick(c, &c0), *p1 = partner(c, p0, c0, &c1);
	unsigned int flags = pct(c, 97) ? 0 : rnd(c, 255) + 1, f;
	long ret;

	c->rq[0] = (struct futex_waitv){ .uaddr = (uintptr_t)p0, .val = pct(c, 75) ? cur(p0, c0) : (uint32_t)rnd64(c),
					 .flags = f2flags(c, &b0) };
	/* mostly the same flags: futex_requeue wants them identical (EINVAL) */
	c->rq[1] = (struct futex_waitv){ .uaddr = (uintptr_t)p1, .val = (uint32_t)rnd64(c),
					 .flags = pct(c, 90) ? c->rq[0].flags : f2flags(c, &b1) };
	b1 = f2bad(c->rq[1].flags);
	f = c->rq[0].flags;
	if (pct(c, 1))
		c->rq[rnd(c, 2)].__reserved = 1;
	else
		c->rq[0].__reserved = c->rq[1].__reserved = 0;
	if (pct(c, 2))
		c->rq[0].val |= 1ULL << (32 + rnd(c, 32));
	n0 = numa_prep(c, f, p0, c0);
	n1 = numa_prep(c, c->rq[1].flags, p1, c1);
	k.a[0] = (long)vec(c, c->rq, &vcat);
	k.a[1] = flags;
	k.a[2] = nr_wake;
	k.a[3] = nr_requeue;
	snprintf(k.desc, sizeof(k.desc), "vector %s, uaddr %s, uaddr2 %s", cat_names[vcat], cat_names[c0],
		 cat_names[c1]);
	numa_desc(k.desc, sizeof(k.desc), f, p0, c0);
	k.allow = A(EINVAL) | A(EAGAIN) | (BAD(c0) || BAD(c1) || vcat != C_PRIVATE ? A(EFAULT) : 0) |
		  ((c->rq[0].flags & c->rq[1].flags & FUTEX2_PRIVATE) ? 0 : A(ENOMEM)) |
		  numa_allow(f, c0) | numa_allow(c->rq[1].flags, c1);
	k.maxret = (long)nr_wake + nr_requeue;
	if (REJECTED(c0) || REJECTED(c1))
		k.mustfail = "unaligned or kernel address";
	/* with identical flags (else EINVAL anyway): either pair misaligned */
	mis = numa_misaligned(f, p0, c0) || numa_misaligned(f, p1, c1);
	if (mis)
		k.mustfail = "FUTEX2_NUMA pair not aligned to 8 bytes";
	if (b0 || b1 || c->rq[0].flags != c->rq[1].flags || c->rq[0].__reserved || c->rq[1].__reserved ||
	    (c->rq[0].val >> 32))
		k.mustfail = "invalid or different flags, reserved field or value";
	if (nr_wake < 0 || nr_requeue < 0)
		k.mustfail = "negative count";
	if (flags || vcat != C_PRIVATE)
		k.mustfail = "flags != 0 or bad vector pointer";
	ret = issue(c, __NR_futex_requeue, &k);
	/* counted when the kernel got to the keys: valid, identical flags, good vector */
	if (!flags && vcat == C_PRIVATE && !b0 && !b1 && c->rq[0].flags == c->rq[1].flags &&
	    !c->rq[0].__reserved && !c->rq[1].__reserved && !(c->rq[0].val >> 32) &&
	    !REJECTED(c0) && !REJECTED(c1)) {
		numa_count(!!(f & FUTEX2_NUMA), !!(f & FUTEX2_MPOL), mis, ret);
		if (nr_wake >= 0 && nr_requeue >= 0) {
			numa_written(ret, n0, p0);
			numa_written(ret, n1, p1);
		}
	}
}

/* ---- prctl(PR_FUTEX_HASH), set_robust_list --------------------------- */

static void do_prctl(struct ctx *c)
{
	struct call k = { .sys = "prctl" };
	unsigned int r = rnd(c, 100);
	unsigned long slots;
	long ret;

	k.a[0] = PR_FUTEX_HASH;
	if (r < 45) {
		k.kind = K_PR_GET;
		k.a[1] = PR_FUTEX_HASH_GET_SLOTS;
		if (pct(c, 10))
			k.a[2] = (long)rnd64(c);	/* ignored */
		k.allow = A(EPERM);
		k.pow2 = k.zero_ok = 1;
	} else if (r < 90) {
		k.kind = K_PR_SET;
		k.a[1] = PR_FUTEX_HASH_SET_SLOTS;
		r = rnd(c, 100);
		/* 0 moves the worker to the global hash for good: rare */
		/* mostly up to 2^10: a switch of 2^16 buckets takes seconds under KASAN and TCG */
		slots = r < 82 ? 1UL << (1 + rnd(c, 10)) : r < 88 ? 1UL << (11 + rnd(c, 6)) :
			r < 94 ? (unsigned long)rnd(c, 40) + 1 :
			r < 97 ? 1UL << (21 + rnd(c, 10)) | (rnd(c, 2) ? 1UL << (32 + rnd(c, 31)) : 0) :
			rnd64(c) | 1;
		if (pct(c, 1))
			slots = 0;
		k.a[2] = (long)slots;
		k.a[3] = pct(c, 96) ? 0 : (long)rnd64(c) | 1;
		k.a[4] = pct(c, 96) ? 0 : (long)rnd64(c) | 1;
		/*
		 * arg5 is ignored, as in mainline.  EPERM only under policy
		 * 0; EBUSY only after SET_SLOTS 0 and, for SET_SLOTS 0, after
		 * a FUTEX_ATTACH of the process (late_set()).
		 */
		k.allow = A(EINVAL) | A(ENOMEM) | (policy == 0 ? A(EPERM) : 0);
		/* arg3 is an unsigned int, as in mainline: 2^32 is 0 */
		slots = (unsigned int)slots;
		if (k.a[3]) {
			k.mustfail = "flags not 0";
		} else if (policy == 0) {
			k.mustfail = "PR_FUTEX_HASH_SET_SLOTS under kernel.futex_private_hash=0";
		} else if (slots == 1 || (slots & (slots - 1))) {
			k.mustfail = "slots neither 0 nor a power of two >= 2";
		} else {
			k.slots0 = !slots;
			glob_snap(&k);
			k.late = late_set;
			if (LD(ps.glob_done)) {
				k.allow |= A(EBUSY);
				k.mustfail = "PR_FUTEX_HASH_SET_SLOTS after SET_SLOTS 0 (the global hash)";
			} else if (!slots && LD(ps.att_done)) {
				k.allow |= A(EBUSY);
				k.mustfail = "PR_FUTEX_HASH_SET_SLOTS 0 after a FUTEX_ATTACH of the process";
			}
		}
	} else {
		static const unsigned long ops[] = { 0, 3, 4, 0x101, ULONG_MAX };

		k.kind = K_PR_OTHER;
		k.a[1] = pct(c, 80) ? (long)ops[rnd(c, 5)] : (long)(rnd64(c) | 4);
		k.a[2] = rnd(c, 64);
		k.allow = A(EINVAL);
		k.mustfail = "unknown PR_FUTEX_HASH operation";
	}
	snprintf(k.desc, sizeof(k.desc), "PR_FUTEX_HASH, policy %d%s%s", policy,
		 LD(ps.glob_done) ? ", global hash chosen" : "", LD(ps.att_done) ? ", attached" : "");
	/* A valid SET_SLOTS 0: the process may choose the global hash from now on */
	if (k.slots0) {
		ADD(ps.glob_inflight, 1);
		ADD(ps.glob_seq, 1);
	}
	ret = issue(c, SYS_prctl, &k);
	if (k.slots0) {
		if (!ret)
			ST(ps.glob_done, 1);
		ADD(ps.glob_inflight, -1);
	}
}

/* Register a robust list whose entries are pool words (the first NROBUST). */
static void do_robust(struct ctx *c)
{
	struct call k = { .kind = K_ROBUST, .sys = "set_robust_list" };
	struct robust_list *prev = &c->rhead.list;
	int s = rnd(c, 2), n = 1 + rnd(c, 3), i, used = 0;

	for (i = 0; i < n; i++) {
		unsigned int w = rnd(c, NROBUST);

		if (used & (1 << w))
			continue;
		used |= 1 << w;
		/* bit 0 of an entry pointer: the futex is a PI futex */
		prev->next = (struct robust_list *)((uintptr_t)&c->rnode[w].node | rnd(c, 2));
		prev = &c->rnode[w].node;
	}
	prev->next = &c->rhead.list;
	c->rhead.futex_offset = (char *)word(s, 0) - (char *)&c->rnode[0].node;
	c->rhead.list_op_pending = pct(c, 30) ? &c->rnode[rnd(c, NROBUST)].node : NULL;
	k.a[0] = (long)&c->rhead;
	k.a[1] = pct(c, 95) ? sizeof(c->rhead) : sizeof(c->rhead) + 8;
	k.allow = A(EINVAL);
	if (k.a[1] != sizeof(c->rhead))
		k.mustfail = "wrong length";
	snprintf(k.desc, sizeof(k.desc), "%d entries in the %s pool", n, s ? "shared" : "private");
	issue(c, SYS_set_robust_list, &k);
}

/*
 * User space writes the words too, like a lock would, and now and then the
 * node word of an aligned pool word (the u32 after it), racing the
 * kernel's reads and write-backs of FUTEX2_NUMA.
 */
static void do_store(struct ctx *c)
{
	uint32_t *w = word(rnd(c, 2), pct(c, 60) ? rnd(c, 4) : rnd(c, NWORDS));
	unsigned int r = rnd(c, 100);
	uint32_t v = r < 30 ? 0 : r < 55 ? (uint32_t)c->tid : r < 70 ? (uint32_t)c->tid | FUTEX_WAITERS :
		     r < 85 ? *w + 1 : (uint32_t)rnd64(c);

	if (pct(c, 8)) {
		/* words 0-11, 16 bytes apart: aligned pairs */
		w = word(rnd(c, 2), pct(c, 60) ? rnd(c, 4) : rnd(c, NROBUST)) + 1;
		v = node_val(c);
	}
	__atomic_store_n(w, v, __ATOMIC_RELAXED);
}

/* ---- threads and processes ------------------------------------------- */

static void fuzz_loop(struct ctx *c, int n);
static int extra_threads;

static void count_errno(int kind, int err)
{
	inc(&sh->k[kind].errs);
	inc(&sh->k[kind].err[err > 0 && err < NERR ? err : 0]);
}

static void check_child(const char *what, int status)
{
	if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL) {
		inc(&sh->deaths);
		outf("# sysfuzz: FAIL: %s child died by signal %d (%s)\n", what, WTERMSIG(status),
		     strsignal(WTERMSIG(status)));
	}
}

static void *thread_main(void *arg)
{
	struct ctx *c = arg;

	c->tid = rsys(SYS_gettid, 0, 0, 0, 0, 0, 0);
	if (pct(c, 70))
		do_robust(c);
	fuzz_loop(c, c->slice);
	inc(&sh->k[K_EXIT].calls);
	if (c->extra)
		__atomic_fetch_sub(&extra_threads, 1, __ATOMIC_RELAXED);
	/* The ctx stays allocated: the kernel walks its robust list at exit. */
	return NULL;
}

static void spawn_thread(struct ctx *c)
{
	struct ctx *n;
	pthread_attr_t attr;
	pthread_t t;
	int e;

	if (__atomic_fetch_add(&extra_threads, 1, __ATOMIC_RELAXED) >= MAXEXTRA) {
		__atomic_fetch_sub(&extra_threads, 1, __ATOMIC_RELAXED);
		return;
	}
	n = malloc(sizeof(*n));
	if (!n) {
		__atomic_fetch_sub(&extra_threads, 1, __ATOMIC_RELAXED);
		return;
	}
	*n = *c;
	n->natt = 0;		/* a new thread starts without attachments */
	n->rng ^= rnd64(c) | 1;
	n->slice = 50 + rnd(c, 150);
	n->extra = 1;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	inc(&sh->k[K_THREAD].calls);
	e = pthread_create(&t, &attr, thread_main, n);
	pthread_attr_destroy(&attr);
	if (e) {
		count_errno(K_THREAD, e);
		free(n);
		__atomic_fetch_sub(&extra_threads, 1, __ATOMIC_RELAXED);
	}
}

static const char *const true_argv[] = { "/bin/true", NULL };
static const char *const no_env[] = { NULL };

static void do_fork(struct ctx *c)
{
	unsigned int r = rnd(c, 100);
	int status;
	pid_t pid;

	inc(&sh->k[K_FORK].calls);
	pid = fork();
	if (pid < 0) {
		count_errno(K_FORK, errno);
		return;
	}
	if (!pid) {
		/*
		 * A fresh mm: no attachment, not marked as attaching; whether
		 * it inherits the choice of the global hash is left open.
		 */
		int gu = LD(ps.glob_done) || LD(ps.glob_unknown) || LD(ps.glob_seq);

		ps = (struct pstate){ .glob_unknown = gu };
		c->leaf = 1;
		c->natt = 0;	/* a forked child starts without attachments */
		c->tid = rsys(SYS_gettid, 0, 0, 0, 0, 0, 0);
		if (r < 40)
			rsys(SYS_exit_group, 0, 0, 0, 0, 0, 0);
		if (r < 70) {
			fuzz_loop(c, 5 + rnd(c, 30));
			rsys(SYS_exit_group, 0, 0, 0, 0, 0, 0);
		}
		inc(&sh->k[K_EXEC].calls);
		r = -rsys(SYS_execve, (long)true_argv[0], (long)true_argv, (long)no_env, 0, 0, 0);
		count_errno(K_EXEC, (int)r);
		rsys(SYS_exit_group, 127, 0, 0, 0, 0, 0);
	}
	if (waitpid(pid, &status, 0) == pid)
		check_child("fork", status);
}

/* A CLONE_VM child, not a thread: no TLS of its own, raw system calls only. */
static int vm_child(void *arg)
{
	struct ctx c = *(struct ctx *)arg;
	long r;

	c.leaf = 1;
	c.natt = 0;		/* a new task starts without attachments */
	c.tid = rsys(SYS_gettid, 0, 0, 0, 0, 0, 0);
	c.rng ^= (uint64_t)c.tid << 17 | 1;
	fuzz_loop(&c, 5 + rnd(&c, 30));
	if (c.worker < 0 && pct(&c, 50)) {	/* the vfork flavour: exec */
		inc(&sh->k[K_EXEC].calls);
		r = rsys(SYS_execve, (long)true_argv[0], (long)true_argv, (long)no_env, 0, 0, 0);
		count_errno(K_EXEC, (int)-r);
		return 127;
	}
	return 0;
}

static void do_clone_vm(struct ctx *c, int vfork)
{
	const size_t stsz = 128 * 1024;
	char *stack = malloc(stsz);
	int kind = vfork ? K_VFORK : K_CLONE_VM, status, w = c->worker;
	pid_t pid;

	if (!stack)
		return;
	if (vfork)
		c->worker = -1;		/* tells vm_child it may exec */
	inc(&sh->k[kind].calls);
	pid = clone(vm_child, stack + stsz, CLONE_VM | (vfork ? CLONE_VFORK : 0) | SIGCHLD, c);
	c->worker = w;
	if (pid < 0)
		count_errno(kind, errno);
	else if (waitpid(pid, &status, 0) == pid)
		check_child(vfork ? "clone(CLONE_VM|CLONE_VFORK)" : "clone(CLONE_VM)", status);
	free(stack);
}

static void fuzz_loop(struct ctx *c, int n)
{
	int i;

	for (i = 0; i < n && !__atomic_load_n(&sh->stop, __ATOMIC_RELAXED); i++) {
		unsigned int r = rnd(c, 1000);

		if (c->leaf && r >= 989)
			r = rnd(c, 989);
		if (r < 600)
			do_futex(c);
		else if (r < 680)
			do_waitv(c);
		else if (r < 745)
			do_wake2(c);
		else if (r < 810)
			do_wait2(c);
		else if (r < 860)
			do_requeue2(c);
		else if (r < 900)
			do_prctl(c);
		else if (r < 910)
			do_robust(c);
		else if (r < 989)
			do_store(c);
		else if (r < 993)
			spawn_thread(c);
		else if (r < 996)
			do_fork(c);
		else if (r < 998)
			do_clone_vm(c, 0);
		else
			do_clone_vm(c, 1);
	}
}

static void worker_main(int idx, uint64_t seed, int slice, int selftest)
{
	pthread_t t[NTHREADS];
	struct ctx *c[NTHREADS];
	int i, mode;

	setpgid(0, 0);
	memset(sh->flight[idx], 0, sizeof(sh->flight[idx]));
	for (i = 0; i < NTHREADS; i++) {
		c[i] = calloc(1, sizeof(*c[i]));
		if (!c[i]) {
			outf("# sysfuzz: FAIL: worker %d: out of memory\n", idx);
			_exit(2);
		}
		c[i]->rng = seed ^ (0x9E3779B97F4A7C15ULL * (uint64_t)(i + 1)) ^ ((uint64_t)idx << 40);
		c[i]->rng |= 1;
		c[i]->worker = idx;
		c[i]->slot = idx;
		c[i]->slice = slice;
	}
	for (i = 1; i < NTHREADS; i++) {
		int e;

		inc(&sh->k[K_THREAD].calls);
		e = pthread_create(&t[i], NULL, thread_main, c[i]);
		if (e) {
			count_errno(K_THREAD, e);
			t[i] = 0;
		}
	}
	c[0]->tid = rsys(SYS_gettid, 0, 0, 0, 0, 0, 0);
	if (pct(c[0], 70))
		do_robust(c[0]);
	fuzz_loop(c[0], slice);
	if (selftest && idx == 0)
		raise(SIGSEGV);
	mode = rnd(c[0], 10);
	if (mode < 5) {
		/* the threads exit by themselves, then the process */
		for (i = 1; i < NTHREADS; i++)
			if (t[i])
				pthread_join(t[i], NULL);
		inc(&sh->k[K_EXIT_GROUP].calls);
		rsys(SYS_exit_group, 0, 0, 0, 0, 0, 0);
	} else if (mode < 8) {
		/* the whole process, threads in the middle of their calls */
		inc(&sh->k[K_EXIT_GROUP].calls);
		rsys(SYS_exit_group, 0, 0, 0, 0, 0, 0);
	}
	/* the main thread alone; the process ends with its last thread */
	inc(&sh->k[K_EXIT].calls);
	rsys(SYS_exit, 0, 0, 0, 0, 0, 0);
}

/* ---- the health check after the run --------------------------------- */

static long sys_futex(void *u, int op, unsigned int val, const struct timespec *ts)
{
	return syscall(SYS_futex, u, op, val, ts, NULL, 0);
}

enum pairkind { P_PRIVATE, P_SHARED, P_FUTEX2, P_TABLE, P_PROCESS, P_ATTACHED };
static const char *const pair_names[NHEALTH] = {
	"health_private_wait_wake", "health_shared_wait_wake", "health_futex2_private_wait_wake",
	"health_private_table_wait_wake", "health_cross_process_shared_wait_wake",
	"health_attached_wait_wake",
};
#define FA	(FUTEX_ATTACHED | FUTEX_PRIVATE_FLAG)

struct pair {
	int kind;
	uint32_t *word;
	long ret;
	int err;
};

static long pair_wait(struct pair *p)
{
	struct timespec ts = { 10, 0 };

	switch (p->kind) {
	case P_PRIVATE: case P_TABLE:
		return sys_futex(p->word, FUTEX_WAIT_PRIVATE, 0, &ts);
	case P_FUTEX2:
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += 10;
		return syscall(__NR_futex_wait, p->word, 0UL, (unsigned long)FUTEX_BITSET_MATCH_ANY,
			       FUTEX2_SIZE_U32 | FUTEX2_PRIVATE, &ts, CLOCK_MONOTONIC);
	case P_ATTACHED:
		if (sys_futex(p->word, FUTEX_ATTACH | FA, 0, NULL))
			return -1;
		return sys_futex(p->word, FUTEX_WAIT | FA, 0, &ts);
	default:
		return sys_futex(p->word, FUTEX_WAIT, 0, &ts);
	}
}

static long pair_wake(struct pair *p, uint32_t *w)
{
	static unsigned int n;

	switch (p->kind) {
	case P_ATTACHED:
		/* The waiter attached: wake it attached and unattached in turn */
		if (n++ & 1)
			return sys_futex(w, FUTEX_WAKE_PRIVATE, 1, NULL);
		if (sys_futex(w, FUTEX_ATTACH | FA, 0, NULL))
			return -1;
		return sys_futex(w, FUTEX_WAKE | FA, 1, NULL);
	case P_PRIVATE: case P_TABLE:
		return sys_futex(w, FUTEX_WAKE_PRIVATE, 1, NULL);
	case P_FUTEX2:
		return syscall(__NR_futex_wake, w, (unsigned long)FUTEX_BITSET_MATCH_ANY, 1,
			       FUTEX2_SIZE_U32 | FUTEX2_PRIVATE);
	default:
		return sys_futex(w, FUTEX_WAKE, 1, NULL);
	}
}

static void *pair_waiter(void *arg)
{
	struct pair *p = arg;

	p->ret = pair_wait(p);
	p->err = errno;
	return NULL;
}

/*
 * The waiter blocks on a word that stays 0 (10 s timeout); the waker wakes
 * until one waiter was woken.  The waiter must return 0 (woken, not timed
 * out) and a second wake must find nobody.
 */
static void pair(struct health *h, int kind, uint32_t *w)
{
	struct pair p = { .kind = kind, .word = w };
	static uint32_t elsewhere;
	struct timespec ms = { 0, 1000000 };
	pthread_t t;
	pid_t pid = 0;
	long n = 0, n2;
	int i, status;

	*w = 0;
	if (kind == P_PROCESS) {
		fflush(stdout);
		pid = fork();
		if (pid < 0) {
			h->state = 2;
			snprintf(h->why, sizeof(h->why), "fork: %s", strerror(errno));
			return;
		}
		if (!pid)
			_exit(pair_wait(&p) == 0 ? 0 : 10 + errno % 100);
	} else if (pthread_create(&t, NULL, pair_waiter, &p)) {
		h->state = 2;
		snprintf(h->why, sizeof(h->why), "pthread_create failed");
		return;
	}
	for (i = 0; i < 10000; i++) {
		/* -X: wake the wrong word, the wake-up is lost */
		n = pair_wake(&p, sh->selftest && kind == P_PRIVATE ? &elsewhere : w);
		if (n)
			break;
		nanosleep(&ms, NULL);
	}
	if (n != 1) {
		h->state = 2;
		snprintf(h->why, sizeof(h->why), "wake returned %ld (%s) after %d tries, expected 1", n,
			 n < 0 ? strerrorname_np(errno) : "-", i);
	}
	if (kind == P_PROCESS) {
		waitpid(pid, &status, 0);
		p.ret = WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
		p.err = WIFEXITED(status) ? WEXITSTATUS(status) - 10 : 0;
	} else {
		pthread_join(t, NULL);
	}
	n2 = pair_wake(&p, w);
	if (h->state != 2 && p.ret != 0) {
		h->state = 2;
		snprintf(h->why, sizeof(h->why), "woken waiter returned %ld (%s): lost wake-up", p.ret,
			 p.err > 0 ? strerrorname_np(p.err) : "?");
	} else if (h->state != 2 && n2 != 0) {
		h->state = 2;
		snprintf(h->why, sizeof(h->why), "second wake returned %ld, expected 0", n2);
	} else if (h->state != 2) {
		h->state = 1;
	}
}

static int health_main(void)
{
	uint32_t *shw = mmap(NULL, pagesz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	static uint32_t privw, attw;
	int bits = ff_read_int("/proc/sys/kernel/futex_private_max_hash_bits", 4);
	long r;

	if (shw == MAP_FAILED)
		return 2;
	pair(&sh->health[P_PRIVATE], P_PRIVATE, &privw);
	pair(&sh->health[P_SHARED], P_SHARED, shw);
	pair(&sh->health[P_FUTEX2], P_FUTEX2, &privw);
	r = prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, 1UL << (bits < 4 ? bits : 4), 0, 0);
	if (r && errno == EPERM) {
		sh->health[P_TABLE].state = 3;
		snprintf(sh->health[P_TABLE].why, sizeof(sh->health[P_TABLE].why), "policy 0: PR_FUTEX_HASH EPERM");
	} else if (r) {
		sh->health[P_TABLE].state = 2;
		snprintf(sh->health[P_TABLE].why, sizeof(sh->health[P_TABLE].why), "PR_FUTEX_HASH_SET_SLOTS: %s",
			 strerrorname_np(errno));
	} else {
		pair(&sh->health[P_TABLE], P_TABLE, &privw);
	}
	pair(&sh->health[P_PROCESS], P_PROCESS, shw);
	if (att_sup && policy == 0) {
		/* FUTEX_ATTACH needs the private table policy 0 does not give */
		r = sys_futex(&attw, FUTEX_ATTACH | FA, 0, NULL);
		if (r == -1 && errno == EPERM) {
			sh->health[P_ATTACHED].state = 3;
			snprintf(sh->health[P_ATTACHED].why, sizeof(sh->health[P_ATTACHED].why),
				 "policy 0: FUTEX_ATTACH EPERM (attached futexes need a private table)");
		} else {
			sh->health[P_ATTACHED].state = 2;
			snprintf(sh->health[P_ATTACHED].why, sizeof(sh->health[P_ATTACHED].why),
				 "policy 0: FUTEX_ATTACH returned %ld (%s), expected EPERM", r,
				 r < 0 ? strerrorname_np(errno) : "-");
		}
	} else if (att_sup) {
		pair(&sh->health[P_ATTACHED], P_ATTACHED, &attw);
	} else {
		sh->health[P_ATTACHED].state = 3;
		snprintf(sh->health[P_ATTACHED].why, sizeof(sh->health[P_ATTACHED].why),
			 "kernel without attached futexes (ENOSYS)");
	}
	return 0;
}

/* ---- the parent ------------------------------------------------------- */

struct slot {
	pid_t pid;
	int killed;
	int idx;
	struct timespec start;
};

static double since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

static long worker_failures, killed;

/* The first line of @path, without its newline; "" if unreadable. */
static void line_of(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	buf[0] = 0;
	if (f) {
		if (!fgets(buf, (int)len, f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = 0;
}

/*
 * Where the tasks of a stuck worker are: for every process of its process
 * group (its threads, fork and clone children), each task's system call
 * and arguments, state and wait channel from /proc, its kernel stack if
 * readable (root), and the call the task recorded before entering it.
 */
static void show_stuck(int slot, pid_t pgid)
{
	char path[96], buf[512], stat[512];
	struct dirent *p, *t;
	DIR *proc, *task;
	int ntasks = 0, i;

	proc = opendir("/proc");
	if (!proc)
		return;
	while ((p = readdir(proc)) && ntasks < 40) {
		char *rp;
		int pg = -1;

		if (p->d_name[0] < '0' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.16s/stat", p->d_name);
		line_of(path, stat, sizeof(stat));
		rp = strrchr(stat, ')');
		if (!rp || sscanf(rp + 2, "%*c %*d %d", &pg) != 1 || pg != pgid)
			continue;
		snprintf(path, sizeof(path), "/proc/%.16s/task", p->d_name);
		task = opendir(path);
		if (!task)
			continue;
		while ((t = readdir(task)) && ntasks < 40) {
			char sys[256], wchan[64], state = '?';
			long tid = atol(t->d_name);

			if (!tid)
				continue;
			ntasks++;
			snprintf(path, sizeof(path), "/proc/%.16s/task/%.16s/syscall", p->d_name, t->d_name);
			line_of(path, sys, sizeof(sys));
			snprintf(path, sizeof(path), "/proc/%.16s/task/%.16s/wchan", p->d_name, t->d_name);
			line_of(path, wchan, sizeof(wchan));
			snprintf(path, sizeof(path), "/proc/%.16s/task/%.16s/stat", p->d_name, t->d_name);
			line_of(path, buf, sizeof(buf));
			rp = strrchr(buf, ')');
			if (rp && rp[1])
				state = rp[2];
			printf("# sysfuzz:   pid %s task %ld state %c wchan %s syscall %s\n", p->d_name, tid, state,
			       wchan[0] ? wchan : "-", sys);
			for (i = 0; i < NFLIGHT; i++) {
				struct flight *f = &sh->flight[slot][i];

				if (__atomic_load_n(&f->tid, __ATOMIC_ACQUIRE) == tid)
					printf("# sysfuzz:     issued %s(%#lx, %#lx, %#lx, %#lx, %#lx, %#lx)\n",
					       kind_names[f->kind], f->a[0], f->a[1], f->a[2], f->a[3], f->a[4],
					       f->a[5]);
			}
			snprintf(path, sizeof(path), "/proc/%.16s/task/%.16s/stack", p->d_name, t->d_name);
			{
				FILE *f = fopen(path, "r");

				while (f && fgets(buf, sizeof(buf), f)) {
					buf[strcspn(buf, "\n")] = 0;
					printf("# sysfuzz:       %s\n", buf);
				}
				if (f)
					fclose(f);
			}
		}
		closedir(task);
	}
	closedir(proc);
}

static void reap(struct slot *slots, int nslots)
{
	int status, i;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (i = 0; i < nslots && slots[i].pid != pid; i++)
			;
		if (i == nslots) {
			/* an orphan (a worker's fork child), reparented to us */
			if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL) {
				inc(&sh->deaths);
				printf("# sysfuzz: FAIL: orphan %d died by signal %d (%s)\n", pid, WTERMSIG(status),
				       strsignal(WTERMSIG(status)));
			}
			continue;
		}
		slots[i].pid = 0;
		kill(-pid, SIGKILL);	/* what is left of the worker's process group */
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && slots[i].killed) {
			killed++;
		} else if (WIFSIGNALED(status)) {
			worker_failures++;
			printf("# sysfuzz: FAIL: worker %d (pid %d) died by signal %d (%s)%s\n", slots[i].idx, pid,
			       WTERMSIG(status), strsignal(WTERMSIG(status)),
			       WTERMSIG(status) == SIGKILL ? ", not sent by ff-sysfuzz" : "");
		} else if (WEXITSTATUS(status)) {
			worker_failures++;
			printf("# sysfuzz: FAIL: worker %d (pid %d) exited with status %d\n", slots[i].idx, pid,
			       WEXITSTATUS(status));
		}
	}
}

static void deadlines(struct slot *slots, int nslots, int deadline)
{
	int i;

	for (i = 0; i < nslots; i++) {
		if (!slots[i].pid || slots[i].killed || since(&slots[i].start) < deadline)
			continue;
		printf("# sysfuzz: worker %d (pid %d) still running after %d s: SIGKILL\n", slots[i].idx,
		       slots[i].pid, deadline);
		show_stuck(i, slots[i].pid);
		slots[i].killed = 1;
		kill(-slots[i].pid, SIGKILL);
		kill(slots[i].pid, SIGKILL);
	}
}

/* Whether any child is left, without reaping it. */
static int children(void)
{
	siginfo_t si;

	return !waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT);
}

static void result(int ok, const char *name, const char *fmt, ...)
{
	static int ntest;
	va_list ap;

	printf("%s %d %s", ok ? "ok" : "not ok", ++ntest, name);
	if (fmt) {
		printf(" # ");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
	}
	printf("\n");
}

static int run_health(int deadline)
{
	struct timespec t0, ms = { 0, 20000000 };
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid)
		_exit(health_main());
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (waitpid(pid, &status, WNOHANG) != pid) {
		if (since(&t0) > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -1;
		}
		nanosleep(&ms, NULL);
	}
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

static void *map(int prot, int flags)
{
	void *p = mmap(NULL, 2 * pagesz, prot, flags | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("ff-sysfuzz: mmap");
		exit(2);
	}
	return p;
}

int main(int argc, char **argv)
{
	int secs = 60, nworkers = 4, slice = 500, deadline = 20, selftest = 0, opt, i, b, health_rc;
	uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	struct timespec t0, ms = { 0, 20000000 };
	long started = 0, syscalls = 0, failures, hfail = 0;
	double last = 0, elapsed;
	struct slot *slots;

	while ((opt = getopt(argc, argv, "t:j:s:n:d:X")) != -1) {
		switch (opt) {
		case 't': secs = atoi(optarg); break;
		case 'j': nworkers = atoi(optarg); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'n': slice = atoi(optarg); break;
		case 'd': deadline = atoi(optarg); break;
		case 'X': selftest = 1; break;
		default:
			fprintf(stderr, "usage: ff-sysfuzz [-t SECONDS] [-j CHILDREN] [-s SEED] [-n CALLS] [-d DEADLINE] [-X]\n");
			return 2;
		}
	}
	if (secs < 1 || nworkers < 1 || nworkers > 64 || slice < 1 || deadline < 1) {
		fprintf(stderr, "ff-sysfuzz: bad arguments\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	policy = ff_read_int("/proc/sys/kernel/futex_private_hash", -1);
	printf("KTAP version 1\n");
	if (policy < 0) {
		printf("1..0 # SKIP kernel without the fastfutex series\n");
		return 4;
	}
	printf("1..%d\n", 3 + NHEALTH);

	pagesz = sysconf(_SC_PAGESIZE);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 2;
	sh->selftest = selftest;
	pool_sh = map(PROT_READ | PROT_WRITE, MAP_SHARED);
	pool_pr = map(PROT_READ | PROT_WRITE, MAP_PRIVATE);
	ro_pr = map(PROT_READ, MAP_PRIVATE);
	ro_sh = map(PROT_READ | PROT_WRITE, MAP_SHARED);
	none_pg = map(PROT_NONE, MAP_PRIVATE);
	if (mprotect(ro_sh, 2 * pagesz, PROT_READ))
		return 2;
	/* An address below the static binary (0x400000) that nothing maps. */
	for (unmapped = 0x200000; unmapped < 0x400000; unmapped += 0x10000)
		if (msync((void *)unmapped, pagesz, MS_ASYNC) && errno == ENOMEM)
			break;
	if (unmapped >= 0x400000) {
		fprintf(stderr, "ff-sysfuzz: no unmapped page below 0x400000\n");
		return 2;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))
		perror("ff-sysfuzz: PR_SET_CHILD_SUBREAPER");
	/* Attached futexes: a FUTEX_DETACH of a word never attached */
	{
		static uint32_t probe;
		long r = syscall(SYS_futex, &probe, FUTEX_DETACH | FA, 0, NULL, NULL, 0);

		att_max = ff_read_int("/proc/sys/kernel/futex_attached_max", 256);
		if (r == -1 && errno == EBADF) {
			att_sup = 1;
		} else if (r != -1 || errno != ENOSYS) {
			inc(&sh->unexpected);
			printf("# sysfuzz: FAIL: FUTEX_DETACH of a word never attached returned %ld (%s), expected EBADF or ENOSYS\n",
			       r, r < 0 ? strerrorname_np(errno) : "-");
		}
		printf("# sysfuzz: attached futexes: %s, futex_attached_max=%d\n",
		       !att_sup ? "no (ENOSYS): FUTEX_ATTACH and FUTEX_ATTACHED must fail with ENOSYS" :
		       policy == 0 ? "yes, but policy 0: FUTEX_ATTACH must fail with EPERM" : "yes",
		       att_max);
	}
	slots = calloc(nworkers, sizeof(*slots));
	if (!slots)
		return 2;

	printf("# sysfuzz: seed=%#llx seconds=%d workers=%d threads=%d calls-per-slice=%d deadline=%ds uid=%d policy=%d default_bits=%d max_bits=%d%s\n",
	       (unsigned long long)seed, secs, nworkers, NTHREADS, slice, deadline, (int)getuid(), policy,
	       ff_read_int("/proc/sys/kernel/futex_private_default_hash_bits", -1),
	       ff_read_int("/proc/sys/kernel/futex_private_max_hash_bits", -1), selftest ? " SELF-TEST" : "");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((elapsed = since(&t0)) < secs) {
		reap(slots, nworkers);
		for (i = 0; i < nworkers; i++) {
			pid_t pid;

			if (slots[i].pid)
				continue;
			fflush(stdout);
			pid = fork();
			if (pid < 0) {
				printf("# sysfuzz: fork: %s\n", strerror(errno));
				break;
			}
			if (!pid) {
				worker_main(i, seed + 0x1000193ULL * (uint64_t)started, slice, selftest && !started);
				_exit(0);
			}
			setpgid(pid, pid);
			slots[i] = (struct slot){ .pid = pid, .idx = i };
			clock_gettime(CLOCK_MONOTONIC, &slots[i].start);
			started++;
		}
		deadlines(slots, nworkers, deadline);
		if (elapsed - last >= 10) {
			last = elapsed;
			for (syscalls = 0, i = 0; i < K_NR; i++)
				syscalls += sh->k[i].calls;
			printf("# sysfuzz: t=%.0fs syscalls=%ld workers=%ld killed=%ld failures=%ld\n", elapsed,
			       syscalls, started, killed, sh->unexpected + sh->deaths + worker_failures);
		}
		nanosleep(&ms, NULL);
	}
	/* Stop: the threads end their slices; the deadline still applies. */
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
	for (;;) {
		int alive = 0;

		reap(slots, nworkers);
		deadlines(slots, nworkers, deadline);
		for (i = 0; i < nworkers; i++)
			alive += !!slots[i].pid;
		if (!alive)
			break;
		nanosleep(&ms, NULL);
	}
	/* Orphans of the last workers (killed with their process groups). */
	for (i = 0; i < 250 && children(); i++) {
		reap(slots, nworkers);
		nanosleep(&ms, NULL);
	}
	elapsed = since(&t0);

	health_rc = run_health(60);

	for (syscalls = 0, i = 0; i < K_NR; i++) {
		struct kstat *s = &sh->k[i];
		char buf[600];
		int n;

		syscalls += s->calls;
		n = snprintf(buf, sizeof(buf), "# sysfuzz: %-22s calls=%ld ok=%ld", kind_names[i], s->calls,
			     s->calls - s->errs);
		if (s->pos)
			n += snprintf(buf + n, sizeof(buf) - n, " (>0: %ld)", s->pos);
		for (b = 1; b < NERR; b++)
			if (s->err[b] && n < (int)sizeof(buf))
				n += snprintf(buf + n, sizeof(buf) - n, " %s=%ld", strerrorname_np(b) ?: "?",
					      s->err[b]);
		if (s->err[0] && n < (int)sizeof(buf))
			snprintf(buf + n, sizeof(buf) - n, " other=%ld", s->err[0]);
		printf("%s\n", buf);
	}
	{
		struct numastat *n = &sh->numa;

		printf("# sysfuzz: futex2 NUMA: calls=%ld ok=%ld EINVAL=%ld EFAULT=%ld misaligned=%ld; MPOL alone: calls=%ld ok=%ld; FUTEX_NO_NODE stored and passed: %ld, then node0=%ld node1=%ld other=%ld still_no_node=%ld\n",
		       n->calls, n->ok, n->einval, n->efault, n->misaligned, n->mpol, n->mpol_ok, n->no_node,
		       n->node[0], n->node[1], n->node_other, n->still_no_node);
	}
	result(!sh->unexpected, "fuzz_results_within_abi",
	       sh->unexpected ? "%ld results the ABI does not allow (the first %d are printed above)" : NULL,
	       sh->unexpected, MAXPRINT);
	result(!sh->deaths && !worker_failures, "fuzz_no_signal_deaths",
	       sh->deaths || worker_failures ? "%ld workers, %ld children or orphans (see above)" : NULL,
	       worker_failures, sh->deaths);
	result(syscalls > 0, "fuzz_made_progress", "%ld calls", syscalls);
	for (i = 0; i < NHEALTH; i++) {
		struct health *h = &sh->health[i];

		if (h->state == 1)
			result(1, pair_names[i], NULL);
		else if (h->state == 3)
			result(1, pair_names[i], "SKIP %s", h->why);
		else
			result(0, pair_names[i], "%s", h->state == 2 ? h->why :
			       health_rc ? "the health check did not complete" : "not run");
		hfail += h->state == 0 || h->state == 2;
	}
	failures = sh->unexpected + sh->deaths + worker_failures + hfail + (syscalls ? 0 : 1);
	printf("# sysfuzz-summary: seconds=%.0f syscalls=%ld workers=%ld killed=%ld failures=%ld\n", elapsed,
	       syscalls, started, killed, failures);
	return failures ? 1 : 0;
}
