// SPDX-License-Identifier: GPL-2.0
/*
 * ff-icount: instructions per futex system call, for a guest booted with
 * QEMU -icount shift=0 (scripts/boot.sh with FF_ICOUNT=1).  There the guest
 * clock advances exactly one nanosecond per executed instruction, so a
 * single-threaded loop timed with clock_gettime(CLOCK_MONOTONIC) reads the
 * number of instructions per call (all vCPUs' instructions count, so the
 * other vCPUs must be idle: nothing else runs during a loop).  Without
 * icount the figures are wall-clock nanoseconds of the guest and mean little.
 *
 * For each operation: the fastest of LOOPS loops of CALLS calls, printed as
 *
 *   BENCH icount <kernel>/<mode> <op> insn_per_call <value>
 *
 * plus, per mode, "BENCH icount-slots <kernel>/<mode> - slots <n>": the
 * private table the measuring process had (0 = global table; -1 = kernel
 * without /proc/self/futex_hash).
 *
 * Every operation returns at once without sleeping or waking anybody:
 *   getpid			the system call floor
 *   wake_{private,shared}	FUTEX_WAKE, nobody waiting
 *   wait_{private,shared}	FUTEX_WAIT, value mismatch (EAGAIN)
 *   trylock_pi_{private,shared}	FUTEX_TRYLOCK_PI on a word owned by a live
 *				task: the word holds the TID of a helper
 *				thread of the measuring process, sleeping in
 *				pause() (a thread of the same process: newer
 *				kernels refuse a private PI owner in another
 *				mm with EPERM).  The kernel attaches a
 *				pi_state to the owner, queues, sees trylock
 *				and returns EWOULDBLOCK (EAGAIN): no sleep, no
 *				EDEADLK (the caller is not the owner).  After
 *				the first call the word also has FUTEX_WAITERS
 *				set, which changes nothing.  The kernel finds
 *				the owner by its TID in the PID radix tree,
 *				one level below TID 64 and two from 64 to
 *				4095 (18 instructions more): the program
 *				first forks until new PIDs are at least 64,
 *				so that the lookup costs the same on every
 *				kernel, however many kernel threads it has.
 *   cmp_requeue_{private,shared}	FUTEX_CMP_REQUEUE(1, 1), no waiters (two
 *				lookups, both buckets locked)
 *   wake_op_{private,shared}	FUTEX_WAKE_OP, SET 0 on a word that is 0,
 *				condition true, nobody waiting on either word
 *   waitv_{private,shared}	futex_waitv (449), one futex, value mismatch
 *   futex2_wake_{private,shared}	futex_wake (454), nobody waiting
 *   futex2_wait_{private,shared}	futex_wait (455), value mismatch
 * Shared words live in a MAP_SHARED anonymous mapping (shmem keys).
 * Only in mode "attached" (kernels with FUTEX_ATTACH), on futexes the
 * measuring thread attached:
 *   attached_wake		FUTEX_WAKE | FUTEX_ATTACHED, nobody waiting
 *   attached_wait		FUTEX_WAIT | FUTEX_ATTACHED, value mismatch
 *   attached_trylock_pi	FUTEX_TRYLOCK_PI | FUTEX_ATTACHED on an owned
 *				word, as trylock_pi_private
 *   attach_detach		FUTEX_ATTACH then FUTEX_DETACH of one more
 *				futex (per pair; the cache is already sized)
 *   attach_grow		per FUTEX_ATTACH of 64 futexes, one per cache
 *				line, by a new thread whose cache starts empty
 *				and grows as it fills (growths in
 *				"BENCH icount-attach <kernel>/attached -
 *				growths <n>"); detached again afterwards
 *   attach_random		per FUTEX_ATTACH of 4,096 random addresses (a
 *				random word in each of 4,096 pages), by a new
 *				thread, with kernel.futex_attached_max raised to
 *				4,096: refusals, cache bytes per attachment,
 *				slots, growths and rebuilds in "BENCH
 *				icount-attach <kernel>/attached - random_<x>"
 *
 * Modes (each measured in a freshly forked process, which first creates
 * the helper thread, so it always has two threads; the helper never runs
 * again):
 *   global	a kernel without kernel.futex_private_hash (vanilla): as is
 *   0		policy 0 (off)
 *   1		policy 1 (first conflict); the process never conflicts, so it
 *		stays on the global table
 *   1on	the same once private tables are in use in the system (a
 *		child preallocates one and exits first): the global path
 *		of a process without a table when the static key is on
 *   2		policy 2 (first private op): one private FUTEX_WAKE first, which
 *		gives the process its private table
 *   3		policy 3 (second thread): the helper thread is the second
 *		thread that gives the process its table
 *   prealloc	policy 1 + FUTEX_PREALLOC_HASH(16) first
 *   prctl	policy 1 + prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, 16) first
 *   attached	policy 1, the measuring thread attached two futexes (the
 *		attached_* operations' words) first, which gives the
 *		process a private table of the default size: every
 *		operation, the attached ones included; skipped on a kernel
 *		without FUTEX_ATTACH (ENOSYS) and when FUTEX_ATTACH fails
 *		with EPERM (attached futexes need a private table: policy 0)
 *   1key, 2key	as 1 and 2, once another process attached a futex (a
 *		child attaches one and exits first; the static key of the
 *		attached hooks stays on for good): what a process which
 *		never attached pays for attachments elsewhere; skipped
 *		where FUTEX_ATTACH fails (ENOSYS, EPERM).  After "attached"
 *		in the default list: modes before them see the key off
 * On a kernel without the policy sysctl only "global" is measured.
 *
 * With -t (trace mode, for scripts/trace-path.sh) the futex words and the
 * futex_waitv array live at fixed addresses, FF_TRACE_BASE (private page)
 * and FF_TRACE_BASE + 4096 (shared page), so that a debugger attached to
 * QEMU's gdbstub can pick out the calls of this program; every operation
 * is called CALLS times (default 3) in one loop.
 *
 * usage: ff-icount [-k KERNEL] [-m MODES] [-o OPS] [-l LOOPS] [-n CALLS] [-t]
 *   KERNEL	label (default: ff.label= of the kernel command line)
 *   MODES	comma list (default 0,1,1on,2,3,prealloc,prctl,attached,1key,2key)
 *   OPS	comma list of operation names (default: all)
 *   LOOPS	loops per operation, the fastest counts (default 40)
 *   CALLS	calls per loop (default 1000)
 * The defaults keep a loop shorter than a timer tick of the bench kernels
 * (HZ=250: 4,000,000 instructions; the longest operation, shared
 * trylock-PI, takes about 2,100 per call), so that some loops run without
 * a tick: the fastest of them counts the system call's path alone, where
 * loops of 20,000 calls each took 5 to 10 ticks, whose handler added one
 * to three instructions per call, different from boot to boot.
 * Exit status: 0, or 1 after an FFB-ERROR line (an operation returned
 * something unexpected, a mode could not be set up).
 */
#define _GNU_SOURCE
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

#define SYSCTL_POLICY	"/proc/sys/kernel/futex_private_hash"
#define MATCH_ANY	0xffffffffUL

static const char *kernel_label = "kernel";
static int loops = 40, calls = 1000;
/*
 * The two-futex operations lock their buckets in address order, which
 * depends on where the words hash in this boot: one instruction more or
 * less.  measure() swaps the words every other loop, so that the fastest
 * loop takes the same order on every boot and kernel.
 */
static int swap_ab;

#define error(fmt, ...) ff_out("FFB-ERROR ff-icount: " fmt, ##__VA_ARGS__)

/* The futex words: private ones in .bss, shared ones in a shmem page. */
static uint32_t pw_bss[128] __attribute__((aligned(64)));
static uint32_t grow_words[64 * 16] __attribute__((aligned(64)));
static uint32_t *pw = pw_bss, *sw;
static struct futex_waitv *waitv;	/* -t: at a fixed address too */
#define FF_TRACE_BASE	0x7f0000000000UL
static volatile pid_t owner_tid;

/* One cache line each; W_AT, W_API and W_AD for the attached operations */
enum { W_A = 0, W_B = 16, W_PI = 32, W_AT = 64, W_API = 80, W_AD = 96 };
#define FA	(FUTEX_ATTACHED | FUTEX_PRIVATE_FLAG)

static uint32_t *word(int shared, int which)
{
	return shared ? &sw[which] : &pw[which];
}

static long fx(uint32_t *u, int op, uint32_t val, unsigned long val2,
	       uint32_t *u2, uint32_t val3)
{
	return syscall(SYS_futex, u, op, val, val2, u2, val3);
}

/*
 * XOR @a or @b with it to swap them if swap_ab is set, without a branch:
 * the same instructions either way, and (a volatile read) only in the
 * operations that use it.
 */
static inline uintptr_t swap_mask(uint32_t *a, uint32_t *b)
{
	return ((uintptr_t)a ^ (uintptr_t)b) &
	       -(uintptr_t)*(volatile int *)&swap_ab;
}

/* One call of operation @id; returns the syscall's result (-errno). */
static long do_op(int id, int shared)
{
	int pf = shared ? 0 : FUTEX_PRIVATE_FLAG;
	unsigned int f2 = FUTEX2_SIZE_U32 | (shared ? 0 : FUTEX2_PRIVATE);
	uint32_t *a = word(shared, W_A), *b = word(shared, W_B);
	struct futex_waitv sv, *v = waitv ? waitv : &sv;
	uintptr_t x;
	long r;

	switch (id) {
	case 0:
		r = syscall(SYS_getpid);
		break;
	case 1:
		r = fx(a, FUTEX_WAKE | pf, 1, 0, NULL, 0);
		break;
	case 2:
		r = fx(a, FUTEX_WAIT | pf, 1, 0, NULL, 0);
		break;
	case 3:
		r = fx(word(shared, W_PI), FUTEX_TRYLOCK_PI | pf, 0, 0, NULL, 0);
		break;
	case 4:
		x = swap_mask(a, b);
		r = fx((uint32_t *)((uintptr_t)a ^ x), FUTEX_CMP_REQUEUE | pf,
		       1, 1, (uint32_t *)((uintptr_t)b ^ x), 0);
		break;
	case 5:
		x = swap_mask(a, b);
		r = fx((uint32_t *)((uintptr_t)a ^ x), FUTEX_WAKE_OP | pf, 1, 1,
		       (uint32_t *)((uintptr_t)b ^ x),
		       FUTEX_OP(FUTEX_OP_SET, 0, FUTEX_OP_CMP_EQ, 0));
		break;
	case 6:
		memset(v, 0, sizeof(*v));
		v->val = 1;
		v->uaddr = (uintptr_t)a;
		v->flags = f2;
		r = syscall(SYS_futex_waitv, v, 1, 0, NULL, CLOCK_MONOTONIC);
		break;
	case 7:
		r = syscall(__NR_futex_wake, a, MATCH_ANY, 1, f2);
		break;
	case 8:
		r = syscall(__NR_futex_wait, a, 1UL, MATCH_ANY, f2, NULL, 0);
		break;
	case 9:
		r = fx(&pw[W_AT], FUTEX_WAKE | FA, 1, 0, NULL, 0);
		break;
	case 10:
		r = fx(&pw[W_AT], FUTEX_WAIT | FA, 1, 0, NULL, 0);
		break;
	case 11:
		r = fx(&pw[W_API], FUTEX_TRYLOCK_PI | FA, 0, 0, NULL, 0);
		break;
	case 12:
		r = fx(&pw[W_AD], FUTEX_ATTACH | FA, 0, 0, NULL, 0);
		if (!r)
			r = fx(&pw[W_AD], FUTEX_DETACH | FA, 0, 0, NULL, 0);
		break;
	default:
		return -EINVAL;
	}
	return r < 0 ? -errno : r;
}

static const struct op {
	const char *name;
	int id, shared;
	long expect;	/* return value, or -errno */
	int attached;	/* only in mode "attached" */
} ops[] = {
	{ "getpid", 0, 0, 1, 0 },	/* any positive PID */
	{ "wake_private", 1, 0, 0, 0 },
	{ "wake_shared", 1, 1, 0, 0 },
	{ "wait_private", 2, 0, -EAGAIN, 0 },
	{ "wait_shared", 2, 1, -EAGAIN, 0 },
	{ "trylock_pi_private", 3, 0, -EAGAIN, 0 },
	{ "trylock_pi_shared", 3, 1, -EAGAIN, 0 },
	{ "cmp_requeue_private", 4, 0, 0, 0 },
	{ "cmp_requeue_shared", 4, 1, 0, 0 },
	{ "wake_op_private", 5, 0, 0, 0 },
	{ "wake_op_shared", 5, 1, 0, 0 },
	{ "waitv_private", 6, 0, -EAGAIN, 0 },
	{ "waitv_shared", 6, 1, -EAGAIN, 0 },
	{ "futex2_wake_private", 7, 0, 0, 0 },
	{ "futex2_wake_shared", 7, 1, 0, 0 },
	{ "futex2_wait_private", 8, 0, -EAGAIN, 0 },
	{ "futex2_wait_shared", 8, 1, -EAGAIN, 0 },
	{ "attached_wake", 9, 0, 0, 1 },
	{ "attached_wait", 10, 0, -EAGAIN, 1 },
	{ "attached_trylock_pi", 11, 0, -EAGAIN, 1 },
	{ "attach_detach", 12, 0, 0, 1 },
};
#define NOPS (int)(sizeof(ops) / sizeof(ops[0]))

static int wanted(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	if (!list)
		return 1;
	while ((p = strstr(p, name))) {
		if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return 1;
		p += n;
	}
	return 0;
}

/* Time one operation; print its line.  Returns 0 or -1. */
static int measure(const char *km, const struct op *o)
{
	uint64_t best = UINT64_MAX;
	long r;
	int l, i;

	/* Both orders of the words must return what is expected */
	for (l = 0; l < 2; l++) {
		swap_ab = l;
		r = do_op(o->id, o->shared);
		swap_ab = 0;
		if (o->id == 0 ? r <= 0 : r != o->expect) {
			error("%s %s: returned %ld (%s), expected %ld", km,
			      o->name, r, r < 0 ? strerror(-r) : "ok", o->expect);
			return -1;
		}
	}
	for (l = 0; l < loops; l++) {
		uint64_t t0, t;

		swap_ab = l & 1;
		t0 = ff_now_ns();
		for (i = 0; i < calls; i++)
			do_op(o->id, o->shared);
		t = ff_now_ns() - t0;
		if (t < best)
			best = t;
	}
	swap_ab = 0;
	ff_out("BENCH icount %s %s insn_per_call %.1f", km, o->name, (double)best / calls);
	return 0;
}

static void *sleeper(void *p)
{
	(void)p;
	owner_tid = gettid();
	for (;;)
		pause();
	return NULL;
}

/* A figure of /proc/self/task/<tid>/futex_attached, or -1 */
static long attached_figure(const char *name)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%d/futex_attached", gettid());
	return ff_read_field(path, name);
}

/* attach_grow: one loop, in a thread of its own (its cache starts empty) */
static void *attach_grow(void *p)
{
	uint64_t *t = p, t0;
	int i;

	t0 = ff_now_ns();
	for (i = 0; i < 64; i++)
		if (fx(&grow_words[i * 16], FUTEX_ATTACH | FA, 0, 0, NULL, 0))
			return (void *)(long)errno;
	t[0] = ff_now_ns() - t0;
	t[1] = attached_figure("growths");
	for (i = 0; i < 64; i++)
		if (fx(&grow_words[i * 16], FUTEX_DETACH | FA, 0, 0, NULL, 0))
			return (void *)(long)errno;
	return NULL;
}

static int measure_attach_grow(const char *km)
{
	uint64_t best = UINT64_MAX, t[2] = { 0, 0 };
	pthread_t th;
	void *r;
	int l;

	for (l = 0; l < loops; l++) {
		errno = pthread_create(&th, NULL, attach_grow, t);
		if (errno || pthread_join(th, &r) || r) {
			error("%s attach_grow: %s", km, strerror(errno ? errno : (int)(long)r));
			return -1;
		}
		if (t[0] < best)
			best = t[0];
	}
	ff_out("BENCH icount %s attach_grow insn_per_call %.1f", km, (double)best / 64);
	ff_out("BENCH icount-attach %s - growths %ld", km, (long)t[1]);
	return 0;
}

/*
 * attach_random: 4,096 random addresses, one random word in each page of
 * a mapping nobody writes (reads map the zero page); t[0] the time of the
 * attaches, then the refusals and the figures of the full cache.
 */
#define RANDOM_ATTACH	4096
#define ATTACHED_MAX	"/proc/sys/kernel/futex_attached_max"

static char *random_area;

static void *attach_random(void *p)
{
	uint64_t *t = p, t0;
	uint32_t *w[RANDOM_ATTACH];
	long refused = 0;
	int i;

	for (i = 0; i < RANDOM_ATTACH; i++)
		w[i] = (uint32_t *)(random_area + 4096L * i) + (random() & 1023);
	t0 = ff_now_ns();
	for (i = 0; i < RANDOM_ATTACH; i++)
		if (fx(w[i], FUTEX_ATTACH | FA, 0, 0, NULL, 0))
			refused++;
	t[0] = ff_now_ns() - t0;
	t[1] = refused;
	t[2] = attached_figure("attached");
	t[3] = attached_figure("bytes");
	t[4] = attached_figure("slots");
	t[5] = attached_figure("growths");
	t[6] = attached_figure("rehashes");
	for (i = 0; i < RANDOM_ATTACH; i++)
		fx(w[i], FUTEX_DETACH | FA, 0, 0, NULL, 0);
	return NULL;
}

static int measure_attach_random(const char *km)
{
	uint64_t best = UINT64_MAX, t[7] = { 0 };
	int max = ff_read_int(ATTACHED_MAX, -1);
	char buf[16];
	int l, ret = 0;
	pthread_t th;

	random_area = mmap(NULL, 4096L * RANDOM_ATTACH, PROT_READ,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	snprintf(buf, sizeof(buf), "%d", RANDOM_ATTACH);
	if (random_area == MAP_FAILED || max < 0 || ff_write_file(ATTACHED_MAX, buf)) {
		error("%s attach_random: setup: %s", km, strerror(errno));
		return -1;
	}
	srandom(getpid());
	for (l = 0; l < loops && !ret; l++) {
		errno = pthread_create(&th, NULL, attach_random, t);
		if (errno || pthread_join(th, NULL)) {
			error("%s attach_random: %s", km, strerror(errno));
			ret = -1;
		} else if (t[1]) {
			/* A refusal below the limit: report it, stop */
			error("%s attach_random: %ld of %d refused", km, (long)t[1], RANDOM_ATTACH);
			ret = -1;
		} else if (t[0] < best) {
			best = t[0];
		}
	}
	snprintf(buf, sizeof(buf), "%d", max);
	ff_write_file(ATTACHED_MAX, buf);
	munmap(random_area, 4096L * RANDOM_ATTACH);
	if (best != UINT64_MAX)
		ff_out("BENCH icount %s attach_random insn_per_call %.1f", km,
		       (double)best / RANDOM_ATTACH);
	ff_out("BENCH icount-attach %s - random_refused %ld", km, (long)t[1]);
	if (t[2] > 0)
		ff_out("BENCH icount-attach %s - random_bytes_per_attach %.1f", km,
		       (double)t[3] / t[2]);
	ff_out("BENCH icount-attach %s - random_slots %ld", km, (long)t[4]);
	ff_out("BENCH icount-attach %s - random_growths %ld", km, (long)t[5]);
	ff_out("BENCH icount-attach %s - random_rehashes %ld", km, (long)t[6]);
	return ret;
}

/* A figure of /proc/self/futex_hash ("slots", "switches"), -1 without it */
static long hash_figure(const char *name)
{
	return ff_read_field("/proc/self/futex_hash", name);
}

static long table_slots(void)
{
	return hash_figure("slots");
}

static int wait_ok(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* The exit status of @pid, -1 if it did not exit */
static int wait_status(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/*
 * PIDs of a PID namespace live in a radix tree of 64 slots per node: TIDs
 * 1-63 are found in one level, 64-4095 in two. Fork throw-away children
 * until a new PID is at least PID_FLOOR, so that the helper threads, whose
 * TIDs the trylock-PI operations look up, are in the two-level range on
 * every kernel; warn when a TID is past it.
 */
#define PID_FLOOR	64
#define PID_CEILING	4096

static int pid_floor(void)
{
	pid_t pid;

	do {
		pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid < 0 || wait_ok(pid)) {
			error("fork: %s", strerror(errno));
			return -1;
		}
	} while (pid < PID_FLOOR);
	return 0;
}

/* The measuring process: set the mode up, then every wanted operation. */
static int run_mode(const char *mode, const char *km, const char *oplist)
{
	long s = 0, slots;
	pthread_t th;
	int i, ret = 0;

	errno = pthread_create(&th, NULL, sleeper, NULL);
	if (errno) {
		error("%s: pthread_create: %s", km, strerror(errno));
		return 1;
	}
	while (!owner_tid)
		sched_yield();
	pw[W_PI] = sw[W_PI] = (uint32_t)owner_tid;
	if (owner_tid >= PID_CEILING)
		ff_out("FFB-PROGRESS icount %s: warning: owner TID %d >= %d: trylock_pi counts one more radix tree level than on a fresh boot",
		       km, (int)owner_tid, PID_CEILING);
	if (!strcmp(mode, "1key") || !strcmp(mode, "2key")) {
		/* Another process attaches a futex: the hooks' key is on */
		pid_t pid = fork();

		if (pid == 0)
			_exit(fx(&pw[W_AD], FUTEX_ATTACH | FA, 0, 0, NULL, 0) < 0 ? errno : 0);
		s = pid < 0 ? -1 : wait_status(pid);
		if (s) {
			ff_out("FFB-PROGRESS icount %s: FUTEX_ATTACH in another process failed (%s), skipped",
			       km, s > 0 ? strerror((int)s) : "fork");
			return 0;
		}
		mode = mode[0] == '2' ? "2" : "1";
	}
	if (!strcmp(mode, "2") || !strcmp(mode, "3")) {
		/*
		 * Policy 2: the switch; policy 3: asked for by clone(). A
		 * kernel worker makes it: wait for the table (up to 2 s).
		 */
		s = fx(&pw[W_A], FUTEX_WAKE_PRIVATE, 1, 0, NULL, 0);
		/*
		 * Until the switch is complete, not only published: while
		 * it drains the global table, lookups look there too.
		 */
		for (i = 0; i < 2000 && hash_figure("switches") < 1; i++)
			usleep(1000);
	} else if (!strcmp(mode, "prealloc")) {
		s = fx(NULL, FUTEX_PREALLOC_HASH | FUTEX_PRIVATE_FLAG, 16, 0, NULL, 0);
	} else if (!strcmp(mode, "prctl")) {
		s = prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, 16, 0, 0);
	} else if (!strcmp(mode, "1on")) {
		/* Another process gets a table: private hashing is in use */
		pid_t pid = fork();

		if (pid == 0)
			_exit(fx(NULL, FUTEX_PREALLOC_HASH | FUTEX_PRIVATE_FLAG, 16,
				 0, NULL, 0) < 0);
		s = pid < 0 || wait_ok(pid) ? -1 : 0;
	} else if (!strcmp(mode, "attached")) {
		pw[W_API] = (uint32_t)owner_tid;
		s = fx(&pw[W_AT], FUTEX_ATTACH | FA, 0, 0, NULL, 0);
		if (s < 0 && errno == EPERM) {
			ff_out("FFB-PROGRESS icount %s: FUTEX_ATTACH fails with EPERM (attached futexes need a private table: policy 0), skipped",
			       km);
			return 0;
		}
		if (!s)
			s = fx(&pw[W_API], FUTEX_ATTACH | FA, 0, 0, NULL, 0);
	}
	if (s < 0) {
		error("%s: setting up mode %s: %s", km, mode, strerror(errno));
		return 1;
	}
	for (i = 0; i < NOPS; i++)
		if ((!ops[i].attached || !strcmp(mode, "attached")) &&
		    wanted(oplist, ops[i].name) && measure(km, &ops[i]))
			ret = 1;
	if (!strcmp(mode, "attached") && wanted(oplist, "attach_grow") &&
	    measure_attach_grow(km))
		ret = 1;
	if (!strcmp(mode, "attached") && wanted(oplist, "attach_random") &&
	    measure_attach_random(km))
		ret = 1;
	slots = table_slots();
	ff_out("BENCH icount-slots %s - slots %ld", km, slots);
	/* Attached: the first FUTEX_ATTACH allocated the process's table */
	if (slots >= 0) {
		int want_table = !strcmp(mode, "2") || !strcmp(mode, "3") ||
				 !strcmp(mode, "prealloc") || !strcmp(mode, "prctl") ||
				 !strcmp(mode, "attached");

		if (want_table != (slots > 0)) {
			error("%s: private table has %ld slots after the run, expected %s",
			      km, slots, want_table ? "a table" : "the global table");
			ret = 1;
		}
	}
	return ret;
}

int main(int argc, char **argv)
{
	const char *modes = "0,1,1on,2,3,prealloc,prctl,attached,1key,2key", *oplist = NULL;
	int trace = 0;
	int have_policy = access(SYSCTL_POLICY, F_OK) == 0;
	int old_policy = ff_read_int(SYSCTL_POLICY, 1), opt, ret = 0;
	char buf[128], km[96], *tok, *save;

	setvbuf(stdout, NULL, _IONBF, 0);
	kernel_label = ff_cmdline_label(kernel_label);
	while ((opt = getopt(argc, argv, "k:m:o:l:n:t")) != -1) {
		switch (opt) {
		case 'k': kernel_label = optarg; break;
		case 'm': modes = optarg; break;
		case 'o': oplist = optarg; break;
		case 'l': loops = atoi(optarg); break;
		case 'n': calls = atoi(optarg); break;
		case 't': trace = 1; loops = 1; calls = 3; break;
		default:
			fprintf(stderr, "usage: ff-icount [-k KERNEL] [-m MODES] [-o OPS] [-l LOOPS] [-n CALLS] [-t]\n");
			return 2;
		}
	}
	if (loops < 1 || calls < 1)
		return 2;
	if (!have_policy)
		modes = "global";

	if (trace) {
		pw = mmap((void *)FF_TRACE_BASE, 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (pw == MAP_FAILED) {
			error("mmap at %#lx: %s", FF_TRACE_BASE, strerror(errno));
			return 1;
		}
		waitv = (struct futex_waitv *)(pw + 512);
	}
	sw = mmap(trace ? (void *)(FF_TRACE_BASE + 4096) : NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS | (trace ? MAP_FIXED_NOREPLACE : 0), -1, 0);
	if (sw == MAP_FAILED) {
		error("mmap: %s", strerror(errno));
		return 1;
	}
	if (pid_floor())
		return 1;
	snprintf(buf, sizeof(buf), "%s", modes);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int policy = !strcmp(tok, "0") ? 0 :
			     !strcmp(tok, "2") || !strcmp(tok, "2key") ? 2 :
			     !strcmp(tok, "3") ? 3 : 1;
		pid_t pid;

		if (strcmp(tok, "global") && strcmp(tok, "0") && strcmp(tok, "1") &&
		    strcmp(tok, "1on") &&
		    strcmp(tok, "2") && strcmp(tok, "3") && strcmp(tok, "prealloc") &&
		    strcmp(tok, "prctl") && strcmp(tok, "attached") &&
		    strcmp(tok, "1key") && strcmp(tok, "2key")) {
			error("unknown mode %s", tok);
			ret = 1;
			continue;
		}
		/*
		 * A kernel without attached futexes: detaching fails with
		 * ENOSYS (not EBADF).  A FUTEX_ATTACH here would give this
		 * process a private table, and turn private hashing on for
		 * the modes measured after; the measuring process reports
		 * FUTEX_ATTACH's EPERM itself.
		 */
		if (!strcmp(tok, "attached") &&
		    fx(&pw[W_AD], FUTEX_DETACH | FA, 0, 0, NULL, 0) && errno == ENOSYS) {
			ff_out("FFB-PROGRESS icount attached: no FUTEX_ATTACH in this kernel, skipped");
			continue;
		}
		if (have_policy) {
			char v[16];

			snprintf(v, sizeof(v), "%d\n", policy);
			if (ff_write_file(SYSCTL_POLICY, v)) {
				error("cannot set the policy to %d", policy);
				ret = 1;
				continue;
			}
		}
		snprintf(km, sizeof(km), "%s/%s%s", kernel_label,
			 tok[0] >= '0' && tok[0] <= '3' ? "m" : "", tok);
		pid = fork();
		if (pid == 0)
			_exit(run_mode(tok, km, oplist));
		if (pid < 0 || wait_ok(pid)) {
			error("%s: measuring process failed", km);
			ret = 1;
		}
		ff_out("FFB-PROGRESS icount %s done", km);
	}
	if (have_policy) {
		snprintf(buf, sizeof(buf), "%d\n", old_policy);
		ff_write_file(SYSCTL_POLICY, buf);
	}
	return ret;
}
