// SPDX-License-Identifier: GPL-2.0
/*
 * ff-torture: futex torture test for the process-private hash tables.
 *
 * The run is split into rounds; each round is a forked process (so the
 * irreversible moves to the global table, the "fixed" size of prctl and
 * the mark of a process that attached a futex stay contained) running, on
 * private futexes (one numa pair aside):
 *
 *   wake      ping-pong hand-offs through FUTEX_WAIT/FUTEX_WAKE (2 pairs:
 *             one private, one without FUTEX_PRIVATE_FLAG on the process's
 *             private memory, as pthread_join() waits on a thread id)
 *   numa      the same hand-offs through futex_wait()/futex_wake() with
 *             FUTEX2_NUMA on both sides (2 pairs): a private pair with
 *             FUTEX2_PRIVATE, and a shared pair (no FUTEX2_PRIVATE, in a
 *             MAP_SHARED page that mbind() gives MPOL_PREFERRED of the
 *             last possible node) with FUTEX2_MPOL too; each pair's node
 *             word is FUTEX_NO_NODE when the round starts, so the first
 *             call writes a node back: the caller's CPU's node (private
 *             pair) or the preferred node (shared pair, when mbind()
 *             worked), which the driver checks after its first wake and
 *             which must not change during the round.  A private futex
 *             of a process with a private table meets whatever node;
 *             the shared pair always queues in its node's part of the
 *             global table.  Probed once with a futex_wake() on a pair
 *             holding FUTEX_NO_NODE (it must write a possible node back):
 *             EINVAL (a kernel without FUTEX2_NUMA) skips it
 *   waitv     a futex_waitv() waiter on 4 words, woken on a random one
 *   requeue   3 waiters moved by FUTEX_CMP_REQUEUE, then woken on the target
 *   reqpi     2 FUTEX_WAIT_REQUEUE_PI waiters, FUTEX_CMP_REQUEUE_PI
 *   pilock    3 threads on one FUTEX_LOCK_PI/FUTEX_UNLOCK_PI mutex
 *   collide   24 short-lived threads on distinct words (first conflict,
 *             growth, thread-count sizing), each woken by its own wake
 *   resize    the round's mode: auto (no explicit resize), prctl
 *             (PR_FUTEX_HASH_SET_SLOTS of random sizes, FUTEX_PREALLOC_HASH;
 *             with the attached workload, once a futex is attached, one
 *             SET_SLOTS 0 that must fail with EBUSY), prealloc
 *             (FUTEX_PREALLOC_HASH only), global (random sizes, then
 *             SET_SLOTS 0 half way through, after which FUTEX_ATTACH must
 *             fail with EPERM on a kernel with attached futexes); two
 *             resizer threads race each other (-R)
 *   attached  attached futexes (CONFIG_FUTEX_ATTACHED, probed once with a
 *             FUTEX_ATTACH and FUTEX_DETACH of a private word: success runs
 *             it, ENOSYS (no kernel option) and EPERM (policy 0: attached
 *             futexes need a private table) skip it; -A turns it off; not
 *             in the global mode's rounds, where SET_SLOTS 0 and
 *             FUTEX_ATTACH exclude each other): a ping-pong pair on a word
 *             both sides attach, each waiting and waking with or without
 *             FUTEX_ATTACHED in turn;
 *             3 threads on a PI counter (attached, mixed, unattached
 *             lock/unlock; FUTEX_DETACH by the owner must fail with EBUSY);
 *             a churner that attaches and detaches the words the pairs and
 *             the PI threads use, and 64-200 distinct words (cache growth,
 *             procfs count, EBADF/EAGAIN/ETIMEDOUT/EBUSY checks, and once a
 *             round ENOSPC at kernel.futex_attached_max)
 *   fork      children that exit at once, exec this program
 *             (--exec-child) or run a futex ping-pong of their own; each
 *             checks that it starts without a private table (and, with
 *             the attached workload, without the attachments of the
 *             forking thread, or of the child before its exec)
 *
 * Every wake-up is accounted for: the hand-offs block without a timeout,
 * so a lost wake-up stalls its worker, and a watchdog fails the run when a
 * worker makes no progress for -w seconds, naming the worker and the
 * operation it is blocked in.  Requeue counts (woken + requeued) and the
 * number of waiters each wake returns must match the waiters queued
 * exactly; the PI mutexes must give mutual exclusion and the right owner.
 * Every errno an operation does not expect fails the round, naming the
 * worker and the operation.
 *
 * Output: KTAP, one result per round, and a "# torture-summary:" line with
 * the totals (operations = futex/futex_waitv/futex_wait/futex_wake/prctl
 * system calls issued; numa_ops = those of the numa pairs).
 *
 * usage: ff-torture [-n OPS] [-r ROUNDS] [-w WATCHDOG_S] [-m MODES] [-R N] [-A] [-X]
 *   -n  total futex system calls to issue (default 1000000, about two
 *       minutes on the debug (KASAN, lockdep) kernel under QEMU TCG)
 *   -r  rounds (default 8), modes cycle through -m (default
 *       auto,prctl,prealloc,global)
 *   -w  watchdog: seconds without progress that fail a worker (60)
 *   -R  resizer threads a round (default 2; 1 checks every size exactly)
 *   -A  no attached workload (it runs when the kernel has FUTEX_ATTACH and
 *       the policy is not 0)
 *   -X  harness self-test: lose wake-ups on purpose (the follower of the
 *       first ping-pong pair skips its FUTEX_WAKE); the run must fail
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
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

#define PRIV(op)	((op) | FUTEX_PRIVATE_FLAG)
#define ATT(op)		((op) | FUTEX_ATTACHED | FUTEX_PRIVATE_FLAG)
#define NCOLLIDE	24
#define NREQ		3
#define NREQPI		2
#define NPI		3
#define MAXW		32
#define NAPI		3	/* threads on the attached PI counter */
#define NMANY_MIN	64	/* distinct words the churner attaches at once */
#define NMANY_MAX	200
#define NLIMIT_MAX	1024	/* the ENOSPC check up to this futex_attached_max */

enum mode { M_AUTO, M_PRCTL, M_PREALLOC, M_GLOBAL, M_NR };
static const char *const mode_names[M_NR] = { "auto", "prctl", "prealloc", "global" };

/* Totals over all rounds, in memory shared with the round processes. */
struct stats {
	atomic_long ops;	/* futex-family and prctl system calls */
	atomic_long handoffs;	/* accounted wake-ups */
	atomic_long resizes;	/* successful SET_SLOTS / PREALLOC calls */
	atomic_long switches;	/* from /proc/self/futex_hash */
	atomic_long growths;
	atomic_long migrated;
	atomic_long forks;
	atomic_long execs;
	atomic_long lost;	/* wake-ups that did not arrive */
	atomic_long spurious;	/* requeued waiters that returned EAGAIN */
	atomic_long att_ops;	/* operations with FUTEX_ATTACHED */
	atomic_long numa_ops;	/* futex_wait/futex_wake with FUTEX2_NUMA */
};
static struct stats *st;

static int policy = -1;
static int max_bits = 16;
static long round_target;
static atomic_long round_ops;
static atomic_int stop;
static int watchdog_s = 60;
static int nresizers = 2;
static atomic_int global_chosen;	/* resizer 0 moves to the global table */
static int drop_wake;
static struct pp *drop_pair;
static const char *argv0;
static int att_avail;		/* FUTEX_ATTACH works here (probe) and -A was not given */
static int att_on;		/* the attached workload runs in this round (probe, -A, mode) */
static int att_max = 256;	/* kernel.futex_attached_max */
static atomic_int att_any;	/* a FUTEX_ATTACH of this process succeeded */
static atomic_long round_att_ops;
static atomic_long round_numa_ops;
static __thread long my_ops;	/* futex system calls of this thread */

struct worker {
	const char *name;
	atomic_long progress;
	const char *volatile op;	/* what the worker is blocked in */
};
static struct worker workers[MAXW];
static atomic_int nworkers;

static struct worker *worker_new(const char *name)
{
	int i = atomic_fetch_add(&nworkers, 1);

	if (i >= MAXW) {
		fprintf(stderr, "# torture: too many workers\n");
		_exit(2);
	}
	workers[i].name = name;
	workers[i].op = "start";
	return &workers[i];
}

static void die(const char *fmt, ...)
{
	va_list ap;

	printf("# torture: FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	_exit(1);
}

static long futex(void *uaddr, int op, unsigned int val, const void *timeout,
		  void *uaddr2, unsigned int val3)
{
	atomic_fetch_add_explicit(&round_ops, 1, memory_order_relaxed);
	if (op & FUTEX_ATTACHED)
		atomic_fetch_add_explicit(&round_att_ops, 1, memory_order_relaxed);
	my_ops++;
	return syscall(SYS_futex, uaddr, op, val, timeout, uaddr2, val3);
}

static long xprctl(long a, long b, long c)
{
	atomic_fetch_add_explicit(&round_ops, 1, memory_order_relaxed);
	return prctl(PR_FUTEX_HASH, a, b, c, 0);
}

static void step(struct worker *w, const char *op)
{
	w->op = op;
	atomic_fetch_add_explicit(&w->progress, 1, memory_order_relaxed);
}

static const char *att_sfx(int att)
{
	return att ? "|FUTEX_ATTACHED" : "";
}

/* FUTEX_WAIT, with FUTEX_ATTACHED if @att (the caller attached @addr) */
static void fwait_att(struct worker *w, atomic_uint *addr, unsigned int val, const char *op, int att)
{
	w->op = op;
	if (futex(addr, att ? ATT(FUTEX_WAIT) : PRIV(FUTEX_WAIT), val, NULL, NULL, 0) &&
	    errno != EAGAIN && errno != EINTR)
		die("%s: %s: FUTEX_WAIT%s: %s", w->name, op, att_sfx(att), strerror(errno));
}

static void fwait(struct worker *w, atomic_uint *addr, unsigned int val, const char *op)
{
	fwait_att(w, addr, val, op, 0);
}

static long fwake_att(struct worker *w, atomic_uint *addr, int nr, const char *op, int att)
{
	long r;

	w->op = op;
	r = futex(addr, att ? ATT(FUTEX_WAKE) : PRIV(FUTEX_WAKE), nr, NULL, NULL, 0);
	if (r < 0)
		die("%s: %s: FUTEX_WAKE%s: %s", w->name, op, att_sfx(att), strerror(errno));
	return r;
}

static long fwake(struct worker *w, atomic_uint *addr, int nr, const char *op)
{
	return fwake_att(w, addr, nr, op, 0);
}

/* FUTEX_ATTACH or FUTEX_DETACH (@cmd) of @addr: 0 or the errno */
static int fattach(void *addr, int cmd)
{
	if (futex(addr, ATT(cmd), 0, NULL, NULL, 0))
		return errno;
	if (cmd == FUTEX_ATTACH)
		atomic_store(&att_any, 1);
	return 0;
}

static const char *attach_name(int cmd)
{
	return cmd == FUTEX_ATTACH ? "FUTEX_ATTACH" : "FUTEX_DETACH";
}

/* FUTEX_ATTACH or FUTEX_DETACH that must succeed */
static void xattach(struct worker *w, void *addr, int cmd, const char *op)
{
	int e;

	w->op = op;
	e = fattach(addr, cmd);
	if (e)
		die("%s: %s: %s: %s", w->name, op, attach_name(cmd), strerror(e));
}

/* A result @r of @cmd that must be the error @err */
static void expect_err(struct worker *w, long r, int err, const char *op, const char *cmd)
{
	if (r != -1 || errno != err)
		die("%s: %s: %s returned %ld (%s), expected %s", w->name, op, cmd, r,
		    r < 0 ? strerror(errno) : "-", strerrorname_np(err));
}

/* "attached:" of /proc/thread-self/futex_attached, -1 without the file */
static long attached_count(void)
{
	char buf[128], key[64];
	long v, ret = -1;
	FILE *f = fopen("/proc/thread-self/futex_attached", "r");

	if (!f)
		return -1;
	while (fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "%63[^:]: %ld", key, &v) == 2 && !strcmp(key, "attached"))
			ret = v;
	fclose(f);
	return ret;
}

static unsigned int rnd(unsigned int *seed)
{
	*seed = *seed * 1103515245 + 12345;
	return (*seed >> 16) & 0x7fff;
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static int done(void)
{
	return atomic_load(&stop) || atomic_load_explicit(&round_ops, memory_order_relaxed) >= round_target;
}

/* ---- wake: ping-pong through one word -------------------------------- */

/*
 * With att (the attached pair), both sides attach the word; in hand-off i
 * each side wakes attached if bit 0 of i is clear and waits attached if
 * bit 1 is clear, so that every four hand-offs meet each combination of
 * an attached or unattached waiter with an attached or unattached waker.
 * With f2 (the numa pairs), every wait and wake is futex_wait()/futex_wake()
 * with the futex2 flags f2, FUTEX2_NUMA among them: w and node are the
 * pair {value, node}, aligned to 8 bytes.
 */
struct pp {
	atomic_uint w;
	atomic_uint node;
	struct worker *drv, *fol;
	int att;
	unsigned int f2;
	int shflag;	/* FUTEX_WAIT/FUTEX_WAKE without FUTEX_PRIVATE_FLAG */
} __attribute__((aligned(8)));

static int numa_on;		/* FUTEX2_NUMA works here (probe) */
static int nnodes = 1;		/* possible nodes: 0 .. nnodes - 1 */
static struct pp *numa_mpol_pair;	/* the shared pair, with FUTEX2_MPOL */
static int numa_mpol_node = -1;	/* its preferred node, -1 if mbind() failed */

static long futex2_wait(void *uaddr, unsigned int val, unsigned int flags)
{
	atomic_fetch_add_explicit(&round_ops, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&round_numa_ops, 1, memory_order_relaxed);
	my_ops++;
	return syscall(__NR_futex_wait, uaddr, (unsigned long)val, (unsigned long)FUTEX_BITSET_MATCH_ANY, flags,
		       NULL, 0);
}

static long futex2_wake(void *uaddr, int nr, unsigned int flags)
{
	atomic_fetch_add_explicit(&round_ops, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&round_numa_ops, 1, memory_order_relaxed);
	my_ops++;
	return syscall(__NR_futex_wake, uaddr, (unsigned long)FUTEX_BITSET_MATCH_ANY, nr, flags);
}

static const char *f2_name(unsigned int f)
{
	return f & FUTEX2_MPOL ? "FUTEX2_NUMA|FUTEX2_MPOL" : f & FUTEX2_PRIVATE ? "FUTEX2_NUMA|FUTEX2_PRIVATE" :
	       "FUTEX2_NUMA";
}

/* The pair's wait: FUTEX_WAIT (with FUTEX_ATTACHED if @att), or futex_wait() with its flags */
static void pp_wait(struct pp *p, struct worker *w, unsigned int val, const char *op, int att)
{
	if (p->shflag) {
		w->op = op;
		if (futex(&p->w, FUTEX_WAIT, val, NULL, NULL, 0) && errno != EAGAIN && errno != EINTR)
			die("%s: %s: FUTEX_WAIT without FUTEX_PRIVATE_FLAG: %s", w->name, op, strerror(errno));
		return;
	}
	if (!p->f2) {
		fwait_att(w, &p->w, val, op, att);
		return;
	}
	w->op = op;
	if (futex2_wait(&p->w, val, p->f2) && errno != EAGAIN && errno != EINTR)
		die("%s: %s: futex_wait(%s): %s", w->name, op, f2_name(p->f2), strerror(errno));
}

static long pp_wake(struct pp *p, struct worker *w, const char *op, int att)
{
	long r;

	if (p->shflag) {
		w->op = op;
		r = futex(&p->w, FUTEX_WAKE, 1, NULL, NULL, 0);
		if (r < 0)
			die("%s: %s: FUTEX_WAKE without FUTEX_PRIVATE_FLAG: %s", w->name, op, strerror(errno));
		return r;
	}
	if (!p->f2)
		return fwake_att(w, &p->w, 1, op, att);
	w->op = op;
	r = futex2_wake(&p->w, 1, p->f2);
	if (r < 0)
		die("%s: %s: futex_wake(%s): %s", w->name, op, f2_name(p->f2), strerror(errno));
	return r;
}

/*
 * The node word of a numa pair after a call: written back (a possible
 * node, @want if that is >= 0) and, once written, never changed (*seen).
 */
static void pp_node_check(struct pp *p, struct worker *w, int want, unsigned int *seen)
{
	unsigned int n = atomic_load(&p->node);

	if (n == (unsigned int)FUTEX_NO_NODE || n >= (unsigned int)nnodes || (want >= 0 && n != (unsigned int)want))
		die("%s: node word of the %s pair is %#x after a call, expected %s %d", w->name, f2_name(p->f2), n,
		    want >= 0 ? "the preferred node" : "a possible node below", want >= 0 ? want : nnodes);
	if (*seen != (unsigned int)FUTEX_NO_NODE && n != *seen)
		die("%s: node word of the %s pair changed from %u to %u", w->name, f2_name(p->f2), *seen, n);
	*seen = n;
}

static void *pp_follower(void *arg)
{
	struct pp *p = arg;
	unsigned int v, n = 0;
	int a;

	if (p->att)
		xattach(p->fol, &p->w, FUTEX_ATTACH, "attach(pong)");
	for (;;) {
		v = atomic_load(&p->w);
		if (v == 3) {
			p->fol->op = NULL;
			return NULL;
		}
		if (v == 1) {
			atomic_store(&p->w, 2);
			/*
			 * -X: lose the wake-ups of the first pair on purpose
			 * (harness self-test); one of them finds its driver
			 * asleep in FUTEX_WAIT, which then never returns.
			 */
			if (drop_wake && p == drop_pair) {
				step(p->fol, "idle");
				continue;
			}
			a = p->att && !(n & 1);
			pp_wake(p, p->fol, a ? "wake(pong, attached)" : "wake(pong)", a);
			/* Now and then detach and attach again, the driver waiting */
			if (p->att && (++n & 255) == 0) {
				xattach(p->fol, &p->w, FUTEX_DETACH, "detach(pong)");
				xattach(p->fol, &p->w, FUTEX_ATTACH, "attach(pong)");
			}
			step(p->fol, "idle");
			continue;
		}
		a = p->att && !(n & 2);
		pp_wait(p, p->fol, v, a ? "wait(ping, attached)" : "wait(ping)", a);
	}
}

static void *pp_driver(void *arg)
{
	struct pp *p = arg;
	unsigned int i = 0, seen = FUTEX_NO_NODE;
	int a;

	if (p->att)
		xattach(p->drv, &p->w, FUTEX_ATTACH, "attach(ping)");
	for (;;) {
		atomic_store(&p->w, 1);
		a = p->att && !(i & 1);
		pp_wake(p, p->drv, a ? "wake(ping, attached)" : "wake(ping)", a);
		if (p->f2)
			pp_node_check(p, p->drv, p == numa_mpol_pair ? numa_mpol_node : -1, &seen);
		a = p->att && !(i & 2);
		while (atomic_load(&p->w) == 1)
			pp_wait(p, p->drv, 1, a ? "wait(pong, attached)" : "wait(pong)", a);
		atomic_fetch_add(&st->handoffs, 1);
		step(p->drv, "idle");
		i++;
		if (done())
			break;
	}
	atomic_store(&p->w, 3);
	a = p->att && (i & 1);
	pp_wake(p, p->drv, "wake(stop)", a);
	if (p->f2)
		pp_node_check(p, p->drv, p == numa_mpol_pair ? numa_mpol_node : -1, &seen);
	p->drv->op = NULL;
	return NULL;
}

/* ---- waitv: one waiter on 4 words ------------------------------------ */

static atomic_uint wv[4], wv_ack, wv_cur;
static struct worker *wv_drv, *wv_fol;

static void *wv_follower(void *arg)
{
	struct futex_waitv v[4];
	long r;
	int i, k, last = -1;

	(void)arg;
	for (;;) {
		memset(v, 0, sizeof(v));
		for (i = 0; i < 4; i++) {
			v[i].uaddr = (uintptr_t)&wv[i];
			v[i].val = 0;
			v[i].flags = FUTEX2_SIZE_U32 | FUTEX2_PRIVATE;
		}
		wv_fol->op = "futex_waitv";
		atomic_fetch_add_explicit(&round_ops, 1, memory_order_relaxed);
		r = syscall(SYS_futex_waitv, v, 4, 0, NULL, CLOCK_MONOTONIC);
		if (r < 0 && errno != EAGAIN && errno != EINTR)
			die("waitv: futex_waitv: %s", strerror(errno));
		/*
		 * The driver's store and its wake are not atomic: the wake of
		 * the round we handled after an EAGAIN can still arrive, so
		 * index 'last' is legitimate even with its word back at 0.
		 * Any other index must be the word signalled now.
		 */
		if (r >= 0 && r < 4 && r != last && (unsigned int)r != atomic_load(&wv_cur))
			die("waitv: futex_waitv returned index %ld, but word %u was signalled (last handled %d)",
			    r, atomic_load(&wv_cur), last);
		if (r >= 4)
			die("waitv: futex_waitv returned index %ld of 4", r);
		for (k = -1, i = 0; i < 4; i++) {
			if (atomic_load(&wv[i]) == 2) {
				wv_fol->op = NULL;
				return NULL;
			}
			if (atomic_load(&wv[i]) == 1)
				k = i;
		}
		if (k < 0)
			continue;	/* EAGAIN before the signal: wait again */
		last = k;
		atomic_store(&wv[k], 0);
		atomic_store(&wv_ack, 1);
		fwake(wv_fol, &wv_ack, 1, "wake(ack)");
		step(wv_fol, "idle");
	}
}

static void *wv_driver(void *arg)
{
	unsigned int seed = 7;
	int k;

	(void)arg;
	for (;;) {
		k = rnd(&seed) % 4;
		atomic_store(&wv_cur, k);
		if (done()) {
			atomic_store(&wv[k], 2);
			fwake(wv_drv, &wv[k], 1, "wake(stop)");
			wv_drv->op = NULL;
			return NULL;
		}
		atomic_store(&wv[k], 1);
		fwake(wv_drv, &wv[k], 1, "wake(waitv word)");
		while (atomic_load(&wv_ack) == 0)
			fwait(wv_drv, &wv_ack, 0, "wait(waitv ack)");
		atomic_store(&wv_ack, 0);
		atomic_fetch_add(&st->handoffs, 1);
		step(wv_drv, "idle");
	}
}

/* ---- requeue and requeue-PI: rounds of N waiters --------------------- */

struct rq {
	int pi, n;
	atomic_uint go, a, b, arrived, finished, eagain;
	struct worker *drv, *w[NREQ];
};

struct rq_arg { struct rq *q; int i; };

static void *rq_waiter(void *arg)
{
	struct rq_arg *ra = arg;
	struct rq *q = ra->q;
	struct worker *w = q->w[ra->i];
	unsigned int last = 0, g, a;
	pid_t tid = gettid_();
	long r;

	for (;;) {
		while ((g = atomic_load(&q->go)) == last)
			fwait(w, &q->go, last, "wait(round start)");
		last = g;
		if (g == UINT_MAX) {
			w->op = NULL;
			return NULL;
		}
		a = atomic_load(&q->a);
		atomic_fetch_add(&q->arrived, 1);
		fwake(w, &q->arrived, 1, "wake(arrived)");
		if (q->pi) {
			w->op = "FUTEX_WAIT_REQUEUE_PI";
			r = futex(&q->a, PRIV(FUTEX_WAIT_REQUEUE_PI), a, NULL, &q->b, 0);
		} else {
			w->op = "FUTEX_WAIT(requeue source)";
			r = futex(&q->a, PRIV(FUTEX_WAIT), a, NULL, NULL, 0);
		}
		if (r && errno == EAGAIN) {
			atomic_fetch_add(&q->eagain, 1);
		} else if (r) {
			die("%s: %s: %s", w->name, w->op, strerror(errno));
		} else if (q->pi) {
			unsigned int m = atomic_load(&q->b);

			if ((m & FUTEX_TID_MASK) != (unsigned int)tid)
				die("reqpi: woken from FUTEX_WAIT_REQUEUE_PI without owning the PI futex (value %#x, tid %d)",
				    m, tid);
			m = tid;
			if (!atomic_compare_exchange_strong(&q->b, &m, 0)) {
				w->op = "FUTEX_UNLOCK_PI";
				if (futex(&q->b, PRIV(FUTEX_UNLOCK_PI), 0, NULL, NULL, 0))
					die("reqpi: FUTEX_UNLOCK_PI: %s", strerror(errno));
			}
		}
		atomic_fetch_add(&q->finished, 1);
		fwake(w, &q->finished, 1, "wake(finished)");
		step(w, "idle");
	}
}

static void *rq_driver(void *arg)
{
	struct rq *q = arg;
	unsigned int g = 0, v, a, queued, eag;
	long r, woken;

	for (;;) {
		if (done()) {
			atomic_store(&q->go, UINT_MAX);
			fwake(q->drv, &q->go, INT_MAX, "wake(stop)");
			q->drv->op = NULL;
			return NULL;
		}
		atomic_store(&q->arrived, 0);
		atomic_store(&q->finished, 0);
		atomic_store(&q->eagain, 0);
		atomic_store(&q->go, ++g);
		fwake(q->drv, &q->go, INT_MAX, "wake(round start)");
		while ((v = atomic_load(&q->arrived)) < (unsigned int)q->n)
			fwait(q->drv, &q->arrived, v, "wait(waiters arrive)");
		a = atomic_fetch_add(&q->a, 1) + 1;
		if (q->pi) {
			q->drv->op = "FUTEX_CMP_REQUEUE_PI";
			r = futex(&q->a, PRIV(FUTEX_CMP_REQUEUE_PI), 1, (void *)(long)INT_MAX, &q->b, a);
		} else {
			q->drv->op = "FUTEX_CMP_REQUEUE";
			r = futex(&q->a, PRIV(FUTEX_CMP_REQUEUE), 1, (void *)(long)INT_MAX, &q->b, a);
		}
		if (r < 0)
			die("%s: %s: %s", q->drv->name, q->drv->op, strerror(errno));
		woken = 0;
		if (!q->pi)
			woken = fwake(q->drv, &q->b, INT_MAX, "wake(requeue target)");
		while ((v = atomic_load(&q->finished)) < (unsigned int)q->n)
			fwait(q->drv, &q->finished, v, "wait(waiters finish)");
		/*
		 * slept: waiters that returned 0.  A waiter may also return
		 * EAGAIN after the requeue counted it: a spurious wake-up
		 * (e.g. the delayed wake_q wake of an earlier futex operation)
		 * unqueues it, and its retry finds the value changed.  So:
		 * every waiter that slept was moved (slept <= r <= n), and
		 * without PI, the waiters that slept are exactly the one the
		 * requeue woke plus those the wake on the target found.
		 */
		eag = atomic_load(&q->eagain);
		queued = q->n - eag;
		if (r < queued || r > q->n) {
			atomic_fetch_add(&st->lost, labs((long)queued - r));
			die("%s: %s moved %ld waiters, but %u returned woken (of %d)", q->drv->name,
			    q->pi ? "FUTEX_CMP_REQUEUE_PI" : "FUTEX_CMP_REQUEUE", r, queued, q->n);
		}
		if (!q->pi && (long)queued != (r > 0) + woken) {
			atomic_fetch_add(&st->lost, 1);
			die("requeue: %u waiters returned woken, FUTEX_CMP_REQUEUE woke %d and the wake on the target %ld",
			    queued, r > 0, woken);
		}
		if (r != queued)
			atomic_fetch_add(&st->spurious, r - queued);
		atomic_fetch_add(&st->handoffs, queued);
		step(q->drv, "idle");
	}
}

/* ---- pilock: PI mutex ------------------------------------------------ */

static atomic_uint pi_m;
static long pi_count, pi_expect_local[NPI];

static void *pi_worker(void *arg)
{
	long i = (long)arg;
	struct worker *w = worker_new("pilock");
	pid_t tid = gettid_();
	unsigned int e;
	long c;

	while (!done()) {
		e = 0;
		if (!atomic_compare_exchange_strong(&pi_m, &e, tid)) {
			w->op = "FUTEX_LOCK_PI";
			while (futex(&pi_m, PRIV(FUTEX_LOCK_PI), 0, NULL, NULL, 0)) {
				if (errno != EINTR && errno != EAGAIN)
					die("pilock: FUTEX_LOCK_PI: %s", strerror(errno));
			}
		}
		if ((atomic_load(&pi_m) & FUTEX_TID_MASK) != (unsigned int)tid)
			die("pilock: lock acquired, but the futex names owner %#x, not %d",
			    atomic_load(&pi_m), tid);
		c = pi_count;
		if ((c & 15) == 0)
			sched_yield();
		pi_count = c + 1;
		pi_expect_local[i]++;
		e = tid;
		if (!atomic_compare_exchange_strong(&pi_m, &e, 0)) {
			w->op = "FUTEX_UNLOCK_PI";
			if (futex(&pi_m, PRIV(FUTEX_UNLOCK_PI), 0, NULL, NULL, 0))
				die("pilock: FUTEX_UNLOCK_PI: %s", strerror(errno));
		}
		step(w, "idle");
	}
	w->op = NULL;
	return NULL;
}

/* ---- attached: a PI counter, attached, mixed and unattached ---------- */

/*
 * apilock-att attaches the word before the others start (a first
 * FUTEX_ATTACH with unattached PI waiters queued fails with EBUSY) and uses
 * FUTEX_ATTACHED for all its PI operations; apilock-mix locks and unlocks
 * with or without it in turn, detaches and attaches again now and then,
 * and checks that FUTEX_DETACH fails with EBUSY while it owns the lock;
 * apilock never attaches.  Their attachments keep the word's state alive
 * until apilock-att finishes (api_gone): only then may a FUTEX_ATTACH of
 * the word fail with EBUSY.
 */
static atomic_uint api_m, api_ready, api_gone;
static long api_count, api_local[NAPI];

static void *api_worker(void *arg)
{
	static const char *const names[NAPI] = { "apilock-att", "apilock-mix", "apilock" };
	long i = (long)arg;
	struct worker *w = worker_new(names[i]);
	pid_t tid = gettid_();
	unsigned int n = 0, x;
	int attached = 0, kernel, la, ua, lop, e;
	long r, c;

	if (i == 0) {
		xattach(w, &api_m, FUTEX_ATTACH, "attach(pi)");
		attached = 1;
		atomic_store(&api_ready, 1);
		fwake(w, &api_ready, INT_MAX, "wake(pi ready)");
	} else {
		while (!atomic_load(&api_ready))
			fwait(w, &api_ready, 0, "wait(pi ready)");
		if (i == 1) {
			xattach(w, &api_m, FUTEX_ATTACH, "attach(pi)");
			attached = 1;
		}
	}
	while (!done()) {
		la = attached && (i == 0 || (n & 1));
		ua = attached && (i == 0 || (n & 4));
		lop = n & 2 ? FUTEX_LOCK_PI2 : FUTEX_LOCK_PI;
		kernel = 0;
		x = 0;
		if (!atomic_compare_exchange_strong(&api_m, &x, tid)) {
			if (la && (n & 8)) {
				w->op = "FUTEX_TRYLOCK_PI|FUTEX_ATTACHED";
				r = futex(&api_m, ATT(FUTEX_TRYLOCK_PI), 0, NULL, NULL, 0);
				if (!r)
					kernel = 1;
				else if (errno != EAGAIN)
					die("%s: %s: %s", w->name, w->op, strerror(errno));
			}
			if (!kernel) {
				w->op = lop == FUTEX_LOCK_PI2 ?
					(la ? "FUTEX_LOCK_PI2|FUTEX_ATTACHED" : "FUTEX_LOCK_PI2") :
					(la ? "FUTEX_LOCK_PI|FUTEX_ATTACHED" : "FUTEX_LOCK_PI");
				while (futex(&api_m, la ? ATT(lop) : PRIV(lop), 0, NULL, NULL, 0)) {
					if (errno != EINTR && errno != EAGAIN)
						die("%s: %s: %s", w->name, w->op, strerror(errno));
				}
				kernel = 1;
			}
		}
		if ((atomic_load(&api_m) & FUTEX_TID_MASK) != (unsigned int)tid)
			die("%s: lock acquired, but the futex names owner %#x, not %d",
			    w->name, atomic_load(&api_m), tid);
		/* Owned after a PI operation on its state: no detaching */
		if (kernel && la && i == 1) {
			w->op = "FUTEX_DETACH(owner)";
			r = futex(&api_m, ATT(FUTEX_DETACH), 0, NULL, NULL, 0);
			expect_err(w, r, EBUSY, "detach(pi, owner)", "FUTEX_DETACH");
		}
		c = api_count;
		if ((c & 15) == 0)
			sched_yield();
		api_count = c + 1;
		api_local[i]++;
		x = tid;
		if (!atomic_compare_exchange_strong(&api_m, &x, 0)) {
			w->op = ua ? "FUTEX_UNLOCK_PI|FUTEX_ATTACHED" : "FUTEX_UNLOCK_PI";
			if (futex(&api_m, ua ? ATT(FUTEX_UNLOCK_PI) : PRIV(FUTEX_UNLOCK_PI), 0, NULL, NULL, 0))
				die("%s: %s: %s", w->name, w->op, strerror(errno));
		}
		/* Not the owner: detaching succeeds, attaching finds the state */
		if (++n % 64 == 0 && i == 1) {
			if (attached)
				xattach(w, &api_m, FUTEX_DETACH, "detach(pi)");
			w->op = "attach(pi)";
			e = fattach(&api_m, FUTEX_ATTACH);
			attached = !e;
			if (e && (e != EBUSY || !atomic_load(&api_gone)))
				die("%s: attach(pi): FUTEX_ATTACH: %s", w->name, strerror(e));
		}
		step(w, "idle");
	}
	if (i == 0)
		atomic_store(&api_gone, 1);
	w->op = NULL;
	return NULL;
}

/* ---- attached: attach/detach churn ---------------------------------- */

static struct pp apair;		/* the attached ping-pong pair */
static atomic_uint *churn_words[3];	/* words others wait on, wake, lock */
static atomic_uint *many;	/* words the churner attaches in bulk */
static atomic_uint fork_word;	/* attached by the forker, not its children */

static void check_count(struct worker *w, const char *what, long want)
{
	long n = attached_count();

	if (n >= 0 && n != want)
		die("%s: %s: /proc/thread-self/futex_attached says %ld attached, expected %ld",
		    w->name, what, n, want);
}

/*
 * Attach @n distinct words (@stride apart from word @off of the array, so
 * that the cache grows), use them
 * (wakes that find nobody, a wait on a wrong value, an expired wait with
 * FUTEX_CLOCK_REALTIME, PI lock and unlock with a detach in between that
 * must fail), at @limit fill up to kernel.futex_attached_max and expect
 * ENOSPC, and detach them all.  The churner holds no other attachment.
 */
static void churn_many(struct worker *w, unsigned int n, unsigned int stride, unsigned int off,
		       int limit)
{
	static const struct timespec past = { 0, 0 };	/* CLOCK_REALTIME: expired */
	atomic_uint *base = many + off;
	unsigned int k, top = n;
	pid_t tid = gettid_();
	long r;
	int e;

	for (k = 0; k < n; k++)
		xattach(w, &base[k * stride], FUTEX_ATTACH, "attach(many)");
	check_count(w, "after attaching many", n);
	for (k = 0; k < n; k++) {
		w->op = "wake(many, attached)";
		r = futex(&base[k * stride], ATT(FUTEX_WAKE), 1, NULL, NULL, 0);
		if (r)
			die("%s: %s: FUTEX_WAKE|FUTEX_ATTACHED on a word nobody waits on returned %ld (%s)",
			    w->name, w->op, r, r < 0 ? strerror(errno) : "-");
	}
	w->op = "wait(many, wrong value)";
	r = futex(&base[0], ATT(FUTEX_WAIT), 1, NULL, NULL, 0);
	expect_err(w, r, EAGAIN, w->op, "FUTEX_WAIT|FUTEX_ATTACHED");
	w->op = "wait(many, expired)";
	r = futex(&base[0], ATT(FUTEX_WAIT_BITSET) | FUTEX_CLOCK_REALTIME, 0, &past, NULL,
		  FUTEX_BITSET_MATCH_ANY);
	expect_err(w, r, ETIMEDOUT, w->op, "FUTEX_WAIT_BITSET|FUTEX_CLOCK_REALTIME|FUTEX_ATTACHED");

	/* PI on an attached word of its own: the owner cannot detach */
	w->op = "lock(many)";
	r = futex(&base[stride], ATT(FUTEX_LOCK_PI2) | FUTEX_CLOCK_REALTIME, 0, NULL, NULL, 0);
	if (r || atomic_load(&base[stride]) != (unsigned int)tid)
		die("%s: %s: FUTEX_LOCK_PI2|FUTEX_CLOCK_REALTIME|FUTEX_ATTACHED of a free word returned %ld (%s), word %#x",
		    w->name, w->op, r, r < 0 ? strerror(errno) : "-", atomic_load(&base[stride]));
	w->op = "detach(many, owner)";
	r = futex(&base[stride], ATT(FUTEX_DETACH), 0, NULL, NULL, 0);
	expect_err(w, r, EBUSY, w->op, "FUTEX_DETACH");
	w->op = "unlock(many)";
	if (futex(&base[stride], ATT(FUTEX_UNLOCK_PI), 0, NULL, NULL, 0) || atomic_load(&base[stride]))
		die("%s: %s: FUTEX_UNLOCK_PI|FUTEX_ATTACHED: %s, word %#x", w->name, w->op,
		    strerror(errno), atomic_load(&base[stride]));
	w->op = "trylock(many)";
	if (futex(&base[stride], ATT(FUTEX_TRYLOCK_PI), 0, NULL, NULL, 0) ||
	    futex(&base[stride], ATT(FUTEX_UNLOCK_PI), 0, NULL, NULL, 0) || atomic_load(&base[stride]))
		die("%s: %s: FUTEX_TRYLOCK_PI/FUTEX_UNLOCK_PI|FUTEX_ATTACHED: %s, word %#x", w->name,
		    w->op, strerror(errno), atomic_load(&base[stride]));

	/* The limit: ENOSPC for the one beyond kernel.futex_attached_max */
	if (limit && att_max <= NLIMIT_MAX) {
		for (; top < (unsigned int)att_max; top++)
			xattach(w, &base[top * stride], FUTEX_ATTACH, "attach(up to the limit)");
		check_count(w, "at kernel.futex_attached_max", top);
		w->op = "attach(beyond the limit)";
		e = fattach(&base[top * stride], FUTEX_ATTACH);
		if (e != ENOSPC)
			die("%s: %s: FUTEX_ATTACH of word %u with kernel.futex_attached_max=%d: %s, expected ENOSPC",
			    w->name, w->op, top + 1, att_max, e ? strerror(e) : "success");
	}
	for (k = 0; k < top; k++)
		xattach(w, &base[k * stride], FUTEX_DETACH, "detach(many)");
	check_count(w, "after detaching all", 0);
	w->op = "wake(many, detached)";
	r = futex(&base[0], ATT(FUTEX_WAKE), 1, NULL, NULL, 0);
	expect_err(w, r, EBADF, w->op, "FUTEX_WAKE|FUTEX_ATTACHED");
}

static void *churner(void *arg)
{
	static const char *const what[3] = { "ping-pong word", "attached ping-pong word", "PI word" };
	struct worker *w = worker_new("attach-churn");
	unsigned int seed = 4711, cycle = 0, n;
	atomic_uint *a;
	long r;
	int t, e;

	(void)arg;
	while (!done()) {
		/* At most an eighth of the round's operations */
		while (my_ops * 8 > atomic_load(&round_ops) && !done()) {
			usleep(1000);
			step(w, "idle(throttle)");
		}
		for (t = 0; t < 3; t++) {
			a = churn_words[t];
			w->op = what[t];
			e = fattach(a, FUTEX_ATTACH);
			if (e == EBUSY && t == 2 && atomic_load(&api_gone))
				continue;
			if (e)
				die("%s: attach(%s): FUTEX_ATTACH: %s", w->name, what[t], strerror(e));
			/* Attaching again does nothing; one detach undoes it */
			e = fattach(a, FUTEX_ATTACH);
			if (e)
				die("%s: attach(%s) again: FUTEX_ATTACH: %s", w->name, what[t], strerror(e));
			if (t < 2) {
				/* A spurious wake-up for the pair, and a wait that must not block */
				r = fwake_att(w, a, 1, "wake(churn, attached)", 1);
				if (r > 1)
					die("%s: FUTEX_WAKE|FUTEX_ATTACHED of 1 on the %s woke %ld",
					    w->name, what[t], r);
				w->op = "wait(churn, wrong value)";
				r = futex(a, ATT(FUTEX_WAIT), 0xdead0000, NULL, NULL, 0);
				expect_err(w, r, EAGAIN, w->op, "FUTEX_WAIT|FUTEX_ATTACHED");
			}
			xattach(w, a, FUTEX_DETACH, "detach(churn)");
			w->op = "detach(churn, detached)";
			r = futex(a, ATT(FUTEX_DETACH), 0, NULL, NULL, 0);
			expect_err(w, r, EBADF, w->op, "FUTEX_DETACH");
			w->op = "wake(churn, detached)";
			r = futex(a, ATT(FUTEX_WAKE), 1, NULL, NULL, 0);
			expect_err(w, r, EBADF, w->op, "FUTEX_WAKE|FUTEX_ATTACHED");
		}
		if ((cycle & 15) == 0) {
			n = NMANY_MIN + rnd(&seed) % (NMANY_MAX - NMANY_MIN + 1);
			if (n > (unsigned int)att_max)
				n = att_max;
			churn_many(w, n, rnd(&seed) & 1 ? 16 : 1, rnd(&seed) % 64, cycle == 0);
		}
		cycle++;
		step(w, "idle");
	}
	w->op = NULL;
	return NULL;
}

/* ---- collide: many short-lived waiters on distinct words ------------- */

static atomic_uint *cw;		/* NCOLLIDE words, one per 64 bytes */
static atomic_uint c_arrived;
static atomic_int c_ret[NCOLLIDE];

static void *c_waiter(void *arg)
{
	long i = (long)arg;
	atomic_uint *word = &cw[i * 16];
	long r;

	atomic_fetch_add(&c_arrived, 1);
	futex(&c_arrived, PRIV(FUTEX_WAKE), 1, NULL, NULL, 0);
	do {
		r = futex(word, PRIV(FUTEX_WAIT), 0, NULL, NULL, 0);
	} while (r && errno == EINTR);
	atomic_store(&c_ret[i], r ? -errno : 0);
	return NULL;
}

static void *c_driver(void *arg)
{
	struct worker *w = worker_new("collide");
	pthread_t t[NCOLLIDE];
	long i, woken, slept;
	unsigned int v;

	(void)arg;
	while (!done()) {
		atomic_store(&c_arrived, 0);
		for (i = 0; i < NCOLLIDE; i++) {
			atomic_store(&cw[i * 16], 0);
			atomic_store(&c_ret[i], 1);
			w->op = "pthread_create";
			if (pthread_create(&t[i], NULL, c_waiter, (void *)i))
				die("collide: pthread_create failed");
		}
		while ((v = atomic_load(&c_arrived)) < NCOLLIDE)
			fwait(w, &c_arrived, v, "wait(collide arrive)");
		usleep(2000);	/* let most of them queue */
		woken = 0;
		for (i = 0; i < NCOLLIDE; i++) {
			atomic_store(&cw[i * 16], 1);
			woken += fwake(w, &cw[i * 16], 1, "wake(collide word)");
		}
		w->op = "pthread_join(collide waiter)";
		for (i = 0; i < NCOLLIDE; i++)
			pthread_join(t[i], NULL);
		slept = 0;
		for (i = 0; i < NCOLLIDE; i++) {
			int r = atomic_load(&c_ret[i]);

			if (r == 0)
				slept++;
			else if (r != -EAGAIN)
				die("collide: waiter %ld: FUTEX_WAIT: %s", i, strerror(-r));
		}
		if (slept != woken) {
			atomic_fetch_add(&st->lost, labs(slept - woken));
			die("collide: %ld waiters returned from FUTEX_WAIT, the wakes woke %ld", slept, woken);
		}
		atomic_fetch_add(&st->handoffs, woken);
		step(w, "idle");
	}
	w->op = NULL;
	return NULL;
}

/* ---- resize ---------------------------------------------------------- */

static long get_slots(void)
{
	return xprctl(PR_FUTEX_HASH_GET_SLOTS, 0, 0);
}

/*
 * What GET_SLOTS may say after this resizer set @want slots: exactly that
 * when it is alone; with others racing it, any size one of them may have
 * set (a power of two up to the maximum), or 0 once resizer 0 chose the
 * global table.
 */
static void check_slots(const char *what, unsigned int want, long g)
{
	if (nresizers == 1 && g != want)
		die("resize: %s(%u), GET_SLOTS says %ld", what, want, g);
	if (g == 0 && atomic_load(&global_chosen))
		return;
	if (g < 2 || g > (1L << max_bits) || (g & (g - 1)))
		die("resize: %s(%u), GET_SLOTS says %ld: no size any resizer set", what, want, g);
}

/* Another resizer moved the process to the global table meanwhile. */
static int lost_to_global(long r)
{
	return r < 0 && errno == EBUSY && atomic_load(&global_chosen);
}

static void *resizer(void *arg)
{
	int id = (long)arg >> 8;
	enum mode m = (enum mode)((long)arg & 0xff);
	struct worker *w = worker_new(id ? "resize2" : "resize");
	unsigned int seed = 12345 + m + 1000 * id, want;
	long r;
	int global = 0, busy_checked = 0;

	while (!done()) {
		usleep(500);
		if (m == M_AUTO) {
			step(w, "idle");
			continue;
		}
		if (m == M_GLOBAL && !global && id == 0 &&
		    atomic_load(&round_ops) > round_target / 2) {
			w->op = "PR_FUTEX_HASH_SET_SLOTS(0)";
			atomic_store(&global_chosen, 1);
			r = xprctl(PR_FUTEX_HASH_SET_SLOTS, 0, 0);
			if (policy == 0 && r && errno == EPERM)
				continue;
			if (r)
				die("resize: SET_SLOTS(0): %s", strerror(errno));
			global = 1;
			if (get_slots() != 0)
				die("resize: GET_SLOTS after SET_SLOTS(0) is not 0");
			if (xprctl(PR_FUTEX_HASH_SET_SLOTS, 16, 0) != -1 || errno != EBUSY)
				die("resize: SET_SLOTS(16) after SET_SLOTS(0): expected EBUSY, got %s",
				    strerror(errno));
			if (futex(NULL, PRIV(FUTEX_PREALLOC_HASH), 16, NULL, NULL, 0) != -1 || errno != EBUSY)
				die("resize: FUTEX_PREALLOC_HASH after SET_SLOTS(0): expected EBUSY, got %s",
				    strerror(errno));
			/* Attached futexes need the private table the process gave up */
			if (att_avail) {
				static atomic_uint gword;

				w->op = "FUTEX_ATTACH after SET_SLOTS(0)";
				r = futex(&gword, ATT(FUTEX_ATTACH), 0, NULL, NULL, 0);
				expect_err(w, r, EPERM, w->op, "FUTEX_ATTACH");
			}
			atomic_fetch_add(&st->resizes, 1);
			step(w, "idle");
			continue;
		}
		if (global || (id && atomic_load(&global_chosen) && get_slots() == 0)) {
			step(w, "idle");
			continue;
		}
		/* Once the process attached a futex, it cannot choose the global hash */
		if (m == M_PRCTL && id == 0 && att_on && !busy_checked && atomic_load(&att_any)) {
			w->op = "PR_FUTEX_HASH_SET_SLOTS(0) after FUTEX_ATTACH";
			r = xprctl(PR_FUTEX_HASH_SET_SLOTS, 0, 0);
			expect_err(w, r, EBUSY, w->op, "PR_FUTEX_HASH_SET_SLOTS(0)");
			busy_checked = 1;
		}
		want = 1u << (1 + rnd(&seed) % 10);
		if (m == M_PREALLOC || (rnd(&seed) & 3) == 0) {
			w->op = "FUTEX_PREALLOC_HASH";
			r = futex(NULL, PRIV(FUTEX_PREALLOC_HASH), want, NULL, NULL, 0);
			if ((policy == 0 && r < 0 && errno == EPERM) || lost_to_global(r)) {
				step(w, "idle");
				continue;
			}
			if (r < 0)
				die("resize: FUTEX_PREALLOC_HASH(%u): %s", want, strerror(errno));
			if (r < (long)want && r < (1L << max_bits))
				die("resize: FUTEX_PREALLOC_HASH(%u) returned %ld slots", want, r);
			check_slots("FUTEX_PREALLOC_HASH", r, get_slots());
		} else {
			w->op = "PR_FUTEX_HASH_SET_SLOTS";
			r = xprctl(PR_FUTEX_HASH_SET_SLOTS, want, 0);
			if ((policy == 0 && r < 0 && errno == EPERM) || lost_to_global(r)) {
				step(w, "idle");
				continue;
			}
			if (r)
				die("resize: SET_SLOTS(%u): %s", want, strerror(errno));
			check_slots("SET_SLOTS", want, get_slots());
		}
		atomic_fetch_add(&st->resizes, 1);
		step(w, "idle");
	}
	w->op = NULL;
	return NULL;
}

/* ---- fork / exec / exit ---------------------------------------------- */

static void check_no_table(const char *who)
{
	long s = prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_GET_SLOTS, 0, 0, 0);

	if (s == -1 && errno == EPERM && policy == 0)
		return;
#ifdef HOSTTEST
	return;
#endif
	if (s != 0) {
		printf("# torture: FAIL: %s starts with a private table of %ld slots (errno %s)\n",
		       who, s, s < 0 ? strerror(errno) : "-");
		fflush(stdout);
		_exit(1);
	}
}

/*
 * A forked child (a copy of the forker, which attached fork_word) or an
 * exec'd one (which attached it before its exec) has no attachments.
 */
static void check_no_attachments(const char *who)
{
	long r = syscall(SYS_futex, &fork_word, ATT(FUTEX_WAKE), 1, NULL, NULL, 0);
	int e = errno;
	long n = attached_count();

	if ((r != -1 || (e != EBADF && e != ENOSYS)) || n > 0) {
		printf("# torture: FAIL: %s: FUTEX_WAKE|FUTEX_ATTACHED of the forker's word returned %ld (%s), expected EBADF; %ld attached\n",
		       who, r, r < 0 ? strerror(e) : "-", n);
		fflush(stdout);
		_exit(1);
	}
}

static int child_pingpong(int n)
{
	static struct pp p;
	static struct worker a = { .name = "child-ping" }, b = { .name = "child-pong" };
	pthread_t t1, t2;

	p.drv = &a;
	p.fol = &b;
	round_target = LONG_MAX;
	atomic_store(&round_ops, 0);
	atomic_store(&stop, 0);
	if (pthread_create(&t1, NULL, pp_follower, &p))
		return 1;
	/* drive n hand-offs by hand */
	while (n--) {
		atomic_store(&p.w, 1);
		fwake(&a, &p.w, 1, "wake(ping)");
		while (atomic_load(&p.w) == 1)
			fwait(&a, &p.w, 1, "wait(pong)");
	}
	atomic_store(&p.w, 3);
	fwake(&a, &p.w, 1, "wake(stop)");
	(void)t2;
	pthread_join(t1, NULL);
	return 0;
}

static void *forker(void *arg)
{
	struct worker *w = worker_new("fork");
	unsigned int i = 0;
	int status;
	pid_t pid;

	(void)arg;
	if (att_on)
		xattach(w, &fork_word, FUTEX_ATTACH, "attach(fork word)");
	while (!done()) {
		w->op = "fork";
		pid = fork();
		if (pid < 0)
			die("fork: %s", strerror(errno));
		if (pid == 0) {
			switch (i % 3) {
			case 0:
				check_no_table("forked child");
				if (att_on)
					check_no_attachments("forked child");
				_exit(0);
			case 1:
				/* Attachments end at exec: checked by --exec-child */
				if (att_on && fattach(&fork_word, FUTEX_ATTACH)) {
					printf("# torture: FAIL: forked child: FUTEX_ATTACH before exec: %s\n",
					       strerror(errno));
					fflush(stdout);
					_exit(1);
				}
				execl("/proc/self/exe", argv0, "--exec-child", (char *)NULL);
				_exit(127);
			default:
				check_no_table("forked child");
				_exit(child_pingpong(50));
			}
		}
		w->op = "waitpid";
		if (waitpid(pid, &status, 0) != pid)
			die("fork: waitpid: %s", strerror(errno));
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			die("fork: child variant %u failed (status %#x)", i % 3, status);
		atomic_fetch_add(&st->forks, 1);
		if (i % 3 == 1)
			atomic_fetch_add(&st->execs, 1);
		i++;
		step(w, "idle");
	}
	w->op = NULL;
	return NULL;
}

/* ---- round ----------------------------------------------------------- */

static void read_hash_stats(void)
{
	char buf[256], key[64];
	long v;
	FILE *f = fopen("/proc/self/futex_hash", "r");

	if (!f)
		return;
	while (fgets(buf, sizeof(buf), f)) {
		if (sscanf(buf, "%63[^:]: %ld", key, &v) != 2)
			continue;
		if (!strcmp(key, "switches"))
			atomic_fetch_add(&st->switches, v);
		else if (!strcmp(key, "growths"))
			atomic_fetch_add(&st->growths, v);
		else if (!strcmp(key, "migrated"))
			atomic_fetch_add(&st->migrated, v);
	}
	fclose(f);
}

static void dump_hash(void)
{
	char buf[512];
	FILE *f = fopen("/proc/self/futex_hash", "r");

	if (!f)
		return;
	while (fgets(buf, sizeof(buf), f))
		printf("# torture:   futex_hash %s", buf);
	fclose(f);
}

static void *watchdog(void *arg)
{
	long last[MAXW] = { 0 };
	int idle[MAXW] = { 0 };
	int i, n;

	(void)arg;
	for (;;) {
		sleep(1);
		n = atomic_load(&nworkers);
		for (i = 0; i < n; i++) {
			long p = atomic_load(&workers[i].progress);

			if (!workers[i].op)
				continue;	/* finished */
			if (p != last[i]) {
				last[i] = p;
				idle[i] = 0;
				continue;
			}
			if (++idle[i] >= watchdog_s) {
				printf("# torture: FAIL: STUCK: worker '%s' made no progress for %d s, blocked in %s\n",
				       workers[i].name, watchdog_s, workers[i].op);
				for (n = 0; n < atomic_load(&nworkers); n++)
					printf("# torture:   worker %-8s progress %ld op %s\n", workers[n].name,
					       atomic_load(&workers[n].progress),
					       workers[n].op ? workers[n].op : "(finished)");
				dump_hash();
				fflush(stdout);
				_exit(3);
			}
		}
	}
	return NULL;
}

/*
 * The numa pairs of a round: a private one in this process's memory, and a
 * shared one with FUTEX2_MPOL in a MAP_SHARED page preferring the last
 * possible node; both node words FUTEX_NO_NODE at the start.
 */
static void numa_pairs(pthread_t *t, int *nt)
{
	static struct pp npriv;
	unsigned long mask;
	struct pp *nsh;

	nsh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (nsh == MAP_FAILED)
		die("mmap(numa pair): %s", strerror(errno));
	mask = 1UL << (nnodes - 1);
	/* MPOL_PREFERRED (1): FUTEX2_MPOL takes its node; maxnode as libnuma passes it */
	if (nnodes <= 64 && !syscall(SYS_mbind, nsh, 4096, 1, &mask, 65, 0))
		numa_mpol_node = nnodes - 1;
	else
		printf("# torture: mbind(MPOL_PREFERRED, node %d) of the shared numa pair: %s: its node is not checked against the policy\n",
		       nnodes - 1, strerror(errno));
	npriv.f2 = FUTEX2_SIZE_U32 | FUTEX2_PRIVATE | FUTEX2_NUMA;
	nsh->f2 = FUTEX2_SIZE_U32 | FUTEX2_NUMA | FUTEX2_MPOL;
	numa_mpol_pair = nsh;
	npriv.drv = worker_new("numa-ping");
	npriv.fol = worker_new("numa-pong");
	nsh->drv = worker_new("numa-mpol-ping");
	nsh->fol = worker_new("numa-mpol-pong");
	atomic_store(&npriv.node, FUTEX_NO_NODE);
	atomic_store(&nsh->node, FUTEX_NO_NODE);
	pthread_create(&t[(*nt)++], NULL, pp_follower, &npriv);
	pthread_create(&t[(*nt)++], NULL, pp_driver, &npriv);
	pthread_create(&t[(*nt)++], NULL, pp_follower, nsh);
	pthread_create(&t[(*nt)++], NULL, pp_driver, nsh);
}

static int run_round(enum mode m, long target)
{
	static struct pp pp[2];
	static struct rq rq, rqpi;
	static struct rq_arg ra[NREQ], rpa[NREQPI];
	pthread_t t[MAXW];
	pthread_t wd;
	int nt = 0, i;
	long sum = 0;

	round_target = target;
	cw = calloc(NCOLLIDE * 16, sizeof(*cw));
	if (!cw)
		die("calloc");
	if (pthread_create(&wd, NULL, watchdog, NULL))
		die("pthread_create(watchdog)");

	drop_pair = &pp[0];
	/* A key of the process's private memory without the private flag */
	pp[1].shflag = 1;
	for (i = 0; i < 2; i++) {
		pp[i].drv = worker_new("wake-ping");
		pp[i].fol = worker_new("wake-pong");
		pthread_create(&t[nt++], NULL, pp_follower, &pp[i]);
		pthread_create(&t[nt++], NULL, pp_driver, &pp[i]);
	}
	if (numa_on)
		numa_pairs(t, &nt);
	wv_drv = worker_new("waitv-drv");
	wv_fol = worker_new("waitv");
	pthread_create(&t[nt++], NULL, wv_follower, NULL);
	pthread_create(&t[nt++], NULL, wv_driver, NULL);

	rq.n = NREQ;
	rq.drv = worker_new("requeue-drv");
	for (i = 0; i < NREQ; i++) {
		rq.w[i] = worker_new("requeue-waiter");
		ra[i].q = &rq;
		ra[i].i = i;
		pthread_create(&t[nt++], NULL, rq_waiter, &ra[i]);
	}
	pthread_create(&t[nt++], NULL, rq_driver, &rq);

	rqpi.n = NREQPI;
	rqpi.pi = 1;
	rqpi.drv = worker_new("reqpi-drv");
	for (i = 0; i < NREQPI; i++) {
		rqpi.w[i] = worker_new("reqpi-waiter");
		rpa[i].q = &rqpi;
		rpa[i].i = i;
		pthread_create(&t[nt++], NULL, rq_waiter, &rpa[i]);
	}
	pthread_create(&t[nt++], NULL, rq_driver, &rqpi);

	for (i = 0; i < NPI; i++)
		pthread_create(&t[nt++], NULL, pi_worker, (void *)(long)i);
	if (att_on) {
		many = calloc((NLIMIT_MAX + 2) * 16 + 64, sizeof(*many));
		if (!many)
			die("calloc");
		apair.att = 1;
		apair.drv = worker_new("att-ping");
		apair.fol = worker_new("att-pong");
		pthread_create(&t[nt++], NULL, pp_follower, &apair);
		pthread_create(&t[nt++], NULL, pp_driver, &apair);
		for (i = 0; i < NAPI; i++)
			pthread_create(&t[nt++], NULL, api_worker, (void *)(long)i);
		churn_words[0] = &pp[1].w;
		churn_words[1] = &apair.w;
		churn_words[2] = &api_m;
		pthread_create(&t[nt++], NULL, churner, NULL);
	}
	pthread_create(&t[nt++], NULL, c_driver, NULL);
	for (i = 0; i < nresizers; i++)
		pthread_create(&t[nt++], NULL, resizer, (void *)(long)(m | i << 8));
	pthread_create(&t[nt++], NULL, forker, NULL);

	for (i = 0; i < nt; i++)
		pthread_join(t[i], NULL);

	for (i = 0; i < NPI; i++)
		sum += pi_expect_local[i];
	if (sum != pi_count)
		die("pilock: %ld critical sections, counter says %ld: mutual exclusion broken", sum, pi_count);
	atomic_fetch_add(&st->handoffs, sum);
	if (att_on) {
		for (sum = 0, i = 0; i < NAPI; i++)
			sum += api_local[i];
		if (sum != api_count)
			die("apilock: %ld critical sections, counter says %ld: mutual exclusion broken",
			    sum, api_count);
		if (atomic_load(&api_m))
			die("apilock: the PI futex is %#x after all threads unlocked it", atomic_load(&api_m));
		atomic_fetch_add(&st->handoffs, sum);
	}
	atomic_fetch_add(&st->att_ops, atomic_load(&round_att_ops));
	atomic_fetch_add(&st->numa_ops, atomic_load(&round_numa_ops));
	read_hash_stats();
	printf("# torture: round mode=%s ops=%ld slots-at-end=%d\n", mode_names[m],
	       atomic_load(&round_ops), prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_GET_SLOTS, 0, 0, 0));
	dump_hash();
	atomic_fetch_add(&st->ops, atomic_load(&round_ops));
	fflush(stdout);
	return 0;
}


int main(int argc, char **argv)
{
	long ops = 1000000;
	int rounds = 8, nmodes = 0, i, c, failed = 0, no_att = 0;
	const char *att_why = "on", *numa_why = "on";
	static atomic_uint probe;
	long r;
	enum mode modes[M_NR * 4];
	char *mlist = strdup("auto,prctl,prealloc,global"), *tok;
	struct timespec t0, t1;

	argv0 = argv[0];
	setvbuf(stdout, NULL, _IOLBF, 0);
	policy = ff_read_int("/proc/sys/kernel/futex_private_hash", -1);
	max_bits = ff_read_int("/proc/sys/kernel/futex_private_max_hash_bits", 16);

	if (argc > 1 && !strcmp(argv[1], "--exec-child")) {
		check_no_table("exec'd child");
		check_no_attachments("exec'd child");
		return child_pingpong(50);
	}
	while ((c = getopt(argc, argv, "n:r:w:m:R:AX")) != -1) {
		switch (c) {
		case 'A': no_att = 1; break;
		case 'X': drop_wake = 1; break;
		case 'n': ops = atol(optarg); break;
		case 'r': rounds = atoi(optarg); break;
		case 'w': watchdog_s = atoi(optarg); break;
		case 'm': free(mlist); mlist = strdup(optarg); break;
		case 'R': nresizers = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: ff-torture [-n OPS] [-r ROUNDS] [-w WATCHDOG_S] [-m auto,prctl,prealloc,global] [-R RESIZERS] [-A] [-X]\n");
			return 2;
		}
	}
	for (tok = strtok(mlist, ","); tok && nmodes < M_NR * 4; tok = strtok(NULL, ",")) {
		for (i = 0; i < M_NR && strcmp(tok, mode_names[i]); i++)
			;
		if (i == M_NR) {
			fprintf(stderr, "ff-torture: unknown mode %s\n", tok);
			return 2;
		}
		modes[nmodes++] = (enum mode)i;
	}
#ifdef HOSTTEST
	policy = 0;
#endif
	if (policy < 0) {
		printf("KTAP version 1\n1..0 # SKIP kernel without the fastfutex series\n");
		return 4;
	}
	if (rounds < 1 || ops < rounds || !nmodes || nresizers < 1 || nresizers > 4)
		return 2;
	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (st == MAP_FAILED)
		return 2;

	/*
	 * Attached futexes: FUTEX_ATTACH and FUTEX_DETACH of a private word
	 * (this process only: the rounds are fork children, which start
	 * without attachments and may still choose the global hash).
	 */
	att_max = ff_read_int("/proc/sys/kernel/futex_attached_max", 256);
	if (no_att) {
		att_why = "off (-A)";
	} else {
		r = syscall(SYS_futex, &probe, ATT(FUTEX_ATTACH), 0, NULL, NULL, 0);
		if (r == -1 && errno == ENOSYS) {
			att_why = "off (kernel without FUTEX_ATTACH: ENOSYS)";
		} else if (r == -1 && errno == EPERM && policy == 0) {
			att_why = "off (attached futexes need a private table: policy 0, FUTEX_ATTACH EPERM)";
		} else if (r) {
			die("FUTEX_ATTACH of a private word returned %ld (%s), expected success%s",
			    r, strerror(errno), policy == 0 ? ", EPERM (policy 0)" : "");
		} else if (policy == 0) {
			die("FUTEX_ATTACH of a private word succeeded under policy 0, expected EPERM");
		} else {
			r = syscall(SYS_futex, &probe, ATT(FUTEX_DETACH), 0, NULL, NULL, 0);
			if (r)
				die("FUTEX_DETACH of the attached probe word returned %ld (%s)", r,
				    strerror(errno));
			r = syscall(SYS_futex, &probe, ATT(FUTEX_DETACH), 0, NULL, NULL, 0);
			if (r != -1 || errno != EBADF)
				die("FUTEX_DETACH of a detached word returned %ld (%s), expected EBADF", r,
				    r < 0 ? strerror(errno) : "-");
			att_avail = 1;
			if (att_max < 4)
				att_why = "off (kernel.futex_attached_max below 4)";
			else
				att_on = 1;
		}
	}

	/*
	 * FUTEX2_NUMA: a futex_wake() on a pair holding FUTEX_NO_NODE must
	 * write a possible node back; EINVAL: a kernel without it.
	 */
	{
		static struct { atomic_uint val, node; } __attribute__((aligned(8))) np = { 0, FUTEX_NO_NODE };
		FILE *f = fopen("/sys/devices/system/node/possible", "r");
		char buf[256], *q;

		if (f && fgets(buf, sizeof(buf), f)) {
			/* "0-1", "0,2-3": the last number is the highest node */
			for (q = buf + strlen(buf); q > buf && (q[-1] < '0' || q[-1] > '9'); q--)
				;
			while (q > buf && q[-1] >= '0' && q[-1] <= '9')
				q--;
			nnodes = atoi(q) + 1;
		}
		if (f)
			fclose(f);
		r = syscall(__NR_futex_wake, &np, (unsigned long)FUTEX_BITSET_MATCH_ANY, 1,
			    FUTEX2_SIZE_U32 | FUTEX2_PRIVATE | FUTEX2_NUMA);
		if (r == -1 && errno == EINVAL) {
			numa_why = "off (kernel without FUTEX2_NUMA: EINVAL)";
		} else if (r) {
			die("futex_wake(FUTEX2_NUMA) of a pair with FUTEX_NO_NODE returned %ld (%s), expected 0 or EINVAL",
			    r, r < 0 ? strerror(errno) : "-");
		} else if (atomic_load(&np.node) >= (unsigned int)nnodes) {
			die("futex_wake(FUTEX2_NUMA) of a pair with FUTEX_NO_NODE left node word %#x, expected a node below %d",
			    atomic_load(&np.node), nnodes);
		} else {
			numa_on = 1;
		}
	}

	printf("KTAP version 1\n1..%d\n", rounds);
	printf("# torture: policy %d, %ld operations in %d rounds, watchdog %d s\n",
	       policy, ops, rounds, watchdog_s);
	printf("# torture: attached futexes: %s%s, kernel.futex_attached_max=%d\n", att_why,
	       att_on ? " (not in the global mode's rounds: SET_SLOTS 0 and FUTEX_ATTACH exclude each other)" : "",
	       att_max);
	printf("# torture: FUTEX2_NUMA pairs: %s, %d possible node(s)\n", numa_why, nnodes);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < rounds; i++) {
		enum mode m = modes[i % nmodes];
		int status;
		pid_t pid = fork();

		if (pid < 0)
			return 2;
		if (!pid) {
			if (m == M_GLOBAL)
				att_on = 0;
			_exit(run_round(m, ops / rounds));
		}
		waitpid(pid, &status, 0);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			printf("ok %d round_%d_%s\n", i + 1, i + 1, mode_names[m]);
		} else {
			printf("not ok %d round_%d_%s # status %#x%s\n", i + 1, i + 1, mode_names[m], status,
			       WIFEXITED(status) && WEXITSTATUS(status) == 3 ? " (stuck worker)" : "");
			failed++;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("# torture-summary: policy=%d ops=%ld handoffs=%ld resizes=%ld switches=%ld growths=%ld migrated=%ld forks=%ld execs=%ld lost=%ld spurious=%ld failed_rounds=%d seconds=%.1f attached_ops=%ld numa_ops=%ld\n",
	       policy, atomic_load(&st->ops), atomic_load(&st->handoffs), atomic_load(&st->resizes),
	       atomic_load(&st->switches), atomic_load(&st->growths), atomic_load(&st->migrated),
	       atomic_load(&st->forks), atomic_load(&st->execs), atomic_load(&st->lost), atomic_load(&st->spurious), failed,
	       (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, atomic_load(&st->att_ops),
	       atomic_load(&st->numa_ops));
	return failed ? 1 : 0;
}
