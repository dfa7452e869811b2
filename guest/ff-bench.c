// SPDX-License-Identifier: GPL-2.0
/*
 * ff-bench: fastfutex benchmarks, run inside the guest.
 *
 * Every result is one line on stdout,
 *
 *   BENCH <workload> <kernel>/<mode> <param> <metric> <value>
 *
 * which scripts/bench.sh extracts from the console log; progress goes to
 * stdout as "FFB-PROGRESS ..." lines and errors as "FFB-ERROR ..." lines
 * (and a non-zero exit status).  Absolute timings under QEMU TCG are noise:
 * the host only reports ratios between results of one run.
 *
 * KERNEL defaults to ff.label= of the kernel command line.
 *
 *   ff-bench noisy  -k KERNEL [-q] [-m MODES] [-n LEVELS]
 *	Noisy neighbour: a forked process keeps N waiters queued (futex_waitv,
 *	128 private futexes a thread); a fresh single-threaded victim process
 *	measures its FUTEX_WAKE latency, then a wait/wake round trip between
 *	two of its threads; the neighbour measures its own FUTEX_WAKE.
 *   ff-bench switch -k KERNEL [-q] [-n LEVELS]
 *	Cost of the switch to a private table with N waiters queued.
 *   ff-bench mem    -k KERNEL [-m MODES]
 *	Private table size (slots) per process for each policy.
 *   ff-bench perf   -k KERNEL [-q] [-m MODE] [-r REPEATS] [-t THREADS]
 *		     [-w WORKLOADS] [-s SECS]
 *	perf bench futex hash, wake, wake-parallel, requeue, lock-pi.
 *   ff-bench markers -k KERNEL [-m MODES] [-n LEVELS]
 *	Attached neighbour: a process whose THREADS threads attach
 *	ATTACHMENTS futexes each (LEVELS: comma list of THREADSxATTACHMENTS,
 *	default 0x0,256x256; MODES: 0, 1, global, default all three, global
 *	being policy 1 with the neighbour on the global table by
 *	PR_FUTEX_HASH_SET_SLOTS 0); a fresh victim which never attached
 *	times FUTEX_WAKE and FUTEX_WAIT (EAGAIN) on a private and a shared
 *	futex, the fastest of 20 loops of 1,000 calls (under -icount:
 *	instructions per call, the clock reads included). Run each mode's
 *	0x0 (a neighbour which attaches nothing, with a private table under
 *	policy 1) before its other levels: the first attachment since boot
 *	is part of what a level costs.
 *   ff-bench ahash  -k KERNEL [-r REPEATS] [-t THREADS] [-s SECS]
 *	perf bench futex hash's load (FUTEX_WAKE of nobody, 64 futexes per
 *	thread) on the global table, a preallocated private table and with
 *	every futex attached (FUTEX_ATTACHED), in ops/s.
 *   ff-bench numa   -k KERNEL [-q] [-n LEVELS]
 *	NUMA noisy neighbour on SHARED futexes, which always use the global
 *	table (in per-node parts on a kernel with FUTEX2_NUMA).  First the
 *	table's memory as the kernel logged it at boot (numa-mem: each
 *	part's KiB, buckets and node, or the single table's size); then for
 *	each level N (default 0,8192,65536; -q: 0,65536) a neighbour process
 *	pinned to node 1's CPUs keeps N waiters queued (futex_waitv, 128
 *	futexes a thread, in a MAP_SHARED mapping) with FUTEX2_NUMA and node
 *	1 in their node words, or without the flag where the kernel refuses
 *	it with EINVAL (vanilla), and a fresh victim process pinned to node
 *	0 times futex_wake(2) of shared futexes nobody waits on: mode
 *	"noflag" without flags and, where the kernel takes FUTEX2_NUMA,
 *	mode "numa" with it and node 0 in the node words (numa-wake; the
 *	two take turns, in 10 blocks).  Both processes first check that the
 *	kernel turns FUTEX_NO_NODE in a node word into their node.  The
 *	nodes' CPUs come from /sys/devices/system/node/node{0,1}/cpulist;
 *	without two nodes with CPUs, exit status 4 (skip).
 *
 * MODES: comma list of 0, 1, 2, 3 (kernel.futex_private_hash) and prealloc
 * (policy 1, victim and neighbour call FUTEX_PREALLOC_HASH first); noisy
 * also takes attached (policy 1, the victim's threads attach every futex
 * they use, which gives the victim a private table of the default size,
 * and call with FUTEX_ATTACHED).  An attached mode (noisy's, ahash's) is
 * skipped, with a progress line, when a FUTEX_ATTACH tried under its
 * policy fails with ENOSYS (kernel without attached futexes) or EPERM
 * (attached futexes need a private table: policy 0).  On a kernel without
 * /proc/sys/kernel/futex_private_hash the only mode is "global".
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ff-abi.h"
#include "ff-util.h"

#define SYSCTL_POLICY	"/proc/sys/kernel/futex_private_hash"
#define WAITV_MAX	128
#define WAITER_STACK	(64 * 1024)
#define NPROBE		64	/* distinct futexes a wake test cycles over */
#define STRIDE		16	/* u32s between them: one cacheline */
#define BUCKET_BYTES	64	/* sizeof(struct futex_hash_bucket), cacheline aligned */

static const char *kernel_label = "kernel";
static int quick;

/* ---- output ---- */

#define bench(wl, km, param, metric, fmt, ...) \
	ff_out("BENCH %s %s %s %s " fmt, wl, km, param, metric, __VA_ARGS__)
/* Progress, stamped with the guest's uptime to match the kernel log */
#define progress(fmt, ...) \
	ff_out("FFB-PROGRESS [%.2f] " fmt, ff_uptime_s(), ##__VA_ARGS__)
#define error(fmt, ...) ff_out("FFB-ERROR " fmt, ##__VA_ARGS__)

/* ---- helpers ---- */

static long futex(uint32_t *uaddr, int op, uint32_t val, unsigned long val2,
		  uint32_t *uaddr2, uint32_t val3)
{
	return syscall(SYS_futex, uaddr, op, val, val2, uaddr2, val3);
}

/* FUTEX_ATTACHED in the victim of noisy mode "attached", else 0 */
static int att_flag;

static long futex_wake(uint32_t *f, int n)
{
	return futex(f, FUTEX_WAKE_PRIVATE | att_flag, n, 0, NULL, 0);
}

static long futex_wait(uint32_t *f, uint32_t val)
{
	return futex(f, FUTEX_WAIT_PRIVATE | att_flag, val, 0, NULL, 0);
}

/* Attach @f to the calling thread (noisy mode "attached") */
static int futex_attach(uint32_t *f)
{
	if (futex(f, FUTEX_ATTACH | FUTEX_ATTACHED | FUTEX_PRIVATE_FLAG, 0, 0,
		  NULL, 0)) {
		error("FUTEX_ATTACH: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Number of waiters queued on @f, without waking any: requeue onto itself. */
static long futex_count(uint32_t *f)
{
	return futex(f, FUTEX_CMP_REQUEUE_PRIVATE, 0, INT_MAX, f, *f);
}

/* futex_wake(2): wake up to @nr waiters of @f, futex2 @flags */
static long futex2_wake(uint32_t *f, int nr, unsigned int flags)
{
	return syscall(__NR_futex_wake, f, (unsigned long)FUTEX_BITSET_MATCH_ANY, nr, flags);
}

/* futex_count() with futex_requeue(2) and futex2 @flags (FUTEX2_NUMA: its node word) */
static long futex2_count(uint32_t *f, unsigned int flags)
{
	struct futex_waitv v[2];

	memset(v, 0, sizeof(v));
	v[0].uaddr = v[1].uaddr = (uintptr_t)f;
	v[0].flags = v[1].flags = flags;
	v[0].val = *f;
	return syscall(__NR_futex_requeue, v, 0, 0, INT_MAX);
}

static long futex_prealloc(unsigned int slots)
{
	return futex(NULL, FUTEX_PREALLOC_HASH | FUTEX_PRIVATE_FLAG, slots, 0, NULL, 0);
}

static int have_policy(void)
{
	return access(SYSCTL_POLICY, F_OK) == 0;
}

/*
 * Whether attached futexes can be used under the current policy: 0, or the
 * errno of a FUTEX_ATTACH or FUTEX_DETACH of a private word (ENOSYS: a
 * kernel without them; EPERM: they need a private table, which policy 0
 * does not give).  Tried in a child process, so that this one neither
 * attaches nor gets a private table.
 */
static int attach_probe(void)
{
	static uint32_t probe;
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return errno;
	if (pid == 0) {
		if (futex(&probe, FUTEX_ATTACH | FUTEX_ATTACHED | FUTEX_PRIVATE_FLAG, 0, 0, NULL, 0) ||
		    futex(&probe, FUTEX_DETACH | FUTEX_ATTACHED | FUTEX_PRIVATE_FLAG, 0, 0, NULL, 0))
			_exit(errno > 0 && errno < 256 ? errno : 255);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid)
		return errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : ECHILD;
}

/*
 * An attached mode (@what) under the policy just set: 0 runs it, 1 skips
 * it (ENOSYS, EPERM: a progress line), -1 is an error (an FFB-ERROR line).
 */
static int attach_skip(const char *what)
{
	int e = attach_probe();

	if (!e)
		return 0;
	if (e == ENOSYS) {
		progress("%s: no FUTEX_ATTACH in this kernel, skipped", what);
	} else if (e == EPERM) {
		progress("%s: FUTEX_ATTACH fails with EPERM (attached futexes need a private table: policy 0), skipped",
			 what);
	} else {
		error("%s: FUTEX_ATTACH/FUTEX_DETACH of a private word: %s", what, strerror(e));
		return -1;
	}
	return 1;
}

static int write_file(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -1;
	ret = fputs(val, f) < 0 ? -1 : 0;
	if (fclose(f))
		ret = -1;
	return ret;
}

static int set_policy(int mode)
{
	char v[16];

	if (!have_policy())
		return 0;
	snprintf(v, sizeof(v), "%d\n", mode);
	if (write_file(SYSCTL_POLICY, v)) {
		error("cannot set %s to %d: %s", SYSCTL_POLICY, mode, strerror(errno));
		return -1;
	}
	return 0;
}

/* Report the numeric lines of /proc/self/futex_hash; return its slots or -1. */
static long report_hash(const char *wl, const char *km, const char *param)
{
	char line[128], key[64], val[64];
	long slots = -1;
	FILE *f = fopen("/proc/self/futex_hash", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *end;
		long v;

		if (sscanf(line, "%63[^:]: %63s", key, val) != 2)
			continue;
		v = strtol(val, &end, 10);
		if (*end)
			continue;
		if (!strcmp(key, "slots"))
			slots = v;
		if (wl)
			bench(wl, km, param, key, "%ld", v);
	}
	fclose(f);
	if (wl && slots >= 0)
		bench(wl, km, param, "bytes", "%ld", slots * BUCKET_BYTES);
	return slots;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void report_lat(const char *wl, const char *km, const char *param,
		       uint64_t *lat, size_t n)
{
	static const struct { const char *name; double q; } pct[] = {
		{ "p50_ns", 0.50 }, { "p99_ns", 0.99 }, { "p99.9_ns", 0.999 },
	};
	uint64_t sum = 0;
	size_t i;

	qsort(lat, n, sizeof(*lat), cmp_u64);
	for (i = 0; i < n; i++)
		sum += lat[i];
	for (i = 0; i < sizeof(pct) / sizeof(pct[0]); i++)
		bench(wl, km, param, pct[i].name, "%llu",
		      (unsigned long long)lat[(size_t)(pct[i].q * (n - 1))]);
	bench(wl, km, param, "max_ns", "%llu", (unsigned long long)lat[n - 1]);
	bench(wl, km, param, "mean_ns", "%.0f", (double)sum / n);
}

/* Time @iters FUTEX_WAKEs of nobody, cycling over NPROBE futexes. */
static int time_wakes(uint32_t *probe, uint64_t *lat, size_t iters, size_t warmup)
{
	size_t i;

	for (i = 0; i < warmup + iters; i++) {
		uint32_t *f = &probe[(i % NPROBE) * STRIDE];
		uint64_t t0 = ff_now_ns();
		long r = futex_wake(f, 1);
		uint64_t t1 = ff_now_ns();

		if (r < 0) {
			error("FUTEX_WAKE: %s", strerror(errno));
			return -1;
		}
		if (i >= warmup)
			lat[i - warmup] = t1 - t0;
	}
	return 0;
}

/* ---- a set of queued waiters: threads blocked in futex_waitv ---- */

/* noisy's waiters: private futexes */
#define WF_PRIVATE	(FUTEX2_SIZE_U32 | FUTEX2_PRIVATE)
/* u32s per futex: with FUTEX2_NUMA a pair {value, node} */
#define WF_WORDS(flags)	((flags) & FUTEX2_NUMA ? 2 : 1)

struct waiters {
	int n;
	int nthreads;
	unsigned int flags;	/* futex2 flags of every futex */
	uint32_t *f;		/* n futexes of WF_WORDS(flags) u32s; shared: mmap()ed */
	size_t bytes;
	pthread_t *th;
	long *res;
	atomic_int ready;
	atomic_int exited;	/* threads whose futex_waitv returned */
};

static uint32_t *waiter_word(struct waiters *w, int i)
{
	return &w->f[(size_t)i * WF_WORDS(w->flags)];
}

struct waiter_arg {
	struct waiters *w;
	int idx;
};

static void *waiter_fn(void *p)
{
	struct waiter_arg *a = p;
	struct waiters *w = a->w;
	struct futex_waitv v[WAITV_MAX];
	int j, base = a->idx * WAITV_MAX;
	long r;

	memset(v, 0, sizeof(v));
	for (j = 0; j < WAITV_MAX; j++) {
		v[j].val = 0;
		v[j].uaddr = (uintptr_t)waiter_word(w, base + j);
		v[j].flags = w->flags;
	}
	atomic_fetch_add(&w->ready, 1);
	do {
		r = syscall(SYS_futex_waitv, v, WAITV_MAX, 0, NULL, CLOCK_MONOTONIC);
	} while (r < 0 && errno == EINTR);
	w->res[a->idx] = r < 0 ? -errno : r;
	atomic_fetch_add(&w->exited, 1);
	return NULL;
}

static long waiters_count(struct waiters *w)
{
	long sum = 0, r;
	int i;

	for (i = 0; i < w->n; i++) {
		r = w->flags == WF_PRIVATE ? futex_count(&w->f[i]) :
		    futex2_count(waiter_word(w, i), w->flags);
		if (r < 0) {
			error("counting waiters (requeue onto itself, flags %#x): %s",
			      w->flags, strerror(errno));
			return -1;
		}
		sum += r;
	}
	return sum;
}

/* A waiter thread whose futex_waitv returned before its wake-up */
static int waiters_early(struct waiters *w)
{
	int i;

	if (!atomic_load(&w->exited))
		return 0;
	for (i = 0; i < w->nthreads; i++)
		if (w->res[i] < 0)
			error("waiter thread %d: futex_waitv (flags %#x): %s", i, w->flags,
			      strerror(-w->res[i]));
	error("%d of %d waiter threads returned before their wake-up",
	      atomic_load(&w->exited), w->nthreads);
	return -1;
}

/*
 * Start @n waiters (a multiple of 128) on futexes with futex2 @flags and
 * return once all are queued: shared futexes (no FUTEX2_PRIVATE) in a
 * MAP_SHARED mapping, with FUTEX2_NUMA each with @node in its node word.
 */
static int waiters_queue(struct waiters *w, int n, unsigned int flags, uint32_t node)
{
	static struct waiter_arg *args;
	pthread_attr_t attr;
	uint64_t t0;
	long got = 0;
	int i;

	memset(w, 0, sizeof(*w));
	w->n = n;
	w->nthreads = n / WAITV_MAX;
	w->flags = flags;
	if (!n)
		return 0;
	w->bytes = (size_t)n * WF_WORDS(flags) * sizeof(*w->f);
	if (flags & FUTEX2_PRIVATE) {
		w->f = calloc(1, w->bytes);
	} else {
		w->f = mmap(NULL, w->bytes, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (w->f == MAP_FAILED)
			w->f = NULL;
	}
	if (w->f && (flags & FUTEX2_NUMA))
		for (i = 0; i < n; i++)
			waiter_word(w, i)[1] = node;
	w->th = calloc(w->nthreads, sizeof(*w->th));
	w->res = calloc(w->nthreads, sizeof(*w->res));
	args = calloc(w->nthreads, sizeof(*args));
	if (!w->f || !w->th || !w->res || !args) {
		error("out of memory for %d waiters", n);
		return -1;
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, WAITER_STACK);
	for (i = 0; i < w->nthreads; i++) {
		args[i].w = w;
		args[i].idx = i;
		errno = pthread_create(&w->th[i], &attr, waiter_fn, &args[i]);
		if (errno) {
			error("pthread_create waiter %d of %d: %s", i, w->nthreads, strerror(errno));
			return -1;
		}
	}
	pthread_attr_destroy(&attr);
	t0 = ff_now_ns();
	while (atomic_load(&w->ready) < w->nthreads) {
		if (waiters_early(w))
			return -1;
		if (ff_now_ns() - t0 > 120000000000ull) {
			error("only %d of %d waiter threads started after 120 s",
			      atomic_load(&w->ready), w->nthreads);
			return -1;
		}
		usleep(2000);
	}
	/* Every thread is about to call futex_waitv: count the queued waiters. */
	for (;;) {
		got = waiters_count(w);
		if (got < 0 || waiters_early(w))
			return -1;
		if (got == n)
			return 0;
		if (ff_now_ns() - t0 > 120000000000ull) {
			error("only %ld of %d waiters queued after 120 s", got, n);
			return -1;
		}
		usleep(20000);
	}
}

/* Start @n waiters on private futexes (noisy, switch, mem) */
static int waiters_start(struct waiters *w, int n)
{
	return waiters_queue(w, n, WF_PRIVATE, 0);
}

/* Check all @n are still queued, wake them all and join the threads. */
static int waiters_stop(struct waiters *w)
{
	int i, ret = 0;
	long got;

	if (!w->n)
		return 0;
	got = waiters_count(w);
	if (got != w->n) {
		error("teardown: %ld of %d waiters still queued", got, w->n);
		ret = -1;
	}
	for (i = 0; i < w->n; i++) {
		if (w->flags == WF_PRIVATE)
			futex_wake(&w->f[i], INT_MAX);
		else
			futex2_wake(waiter_word(w, i), INT_MAX, w->flags);
	}
	for (i = 0; i < w->nthreads; i++) {
		pthread_join(w->th[i], NULL);
		if (w->res[i] < 0) {
			error("waiter thread %d: futex_waitv: %s", i, strerror(-w->res[i]));
			ret = -1;
		}
	}
	if (w->flags & FUTEX2_PRIVATE)
		free(w->f);
	else
		munmap(w->f, w->bytes);
	free(w->th);
	free(w->res);
	return ret;
}

/* ---- noisy neighbour ---- */

struct cfg {
	size_t wake_iters;
	size_t rtt_iters;
};

static int read_byte(int fd, int timeout_s)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	if (poll(&p, 1, timeout_s * 1000) != 1)
		return -1;
	if (read(fd, &c, 1) != 1)
		return -1;
	return c;
}

/*
 * A neighbour's end: report ready ('R') on @wfd, hold @w's waiters queued
 * until the controller asks for the teardown ('T') on @rfd, then stop them.
 */
static int neighbour_hold(struct waiters *w, int rfd, int wfd, const char *who)
{
	int ret = 0;

	if (write(wfd, "R", 1) != 1)
		return 1;
	if (read_byte(rfd, 3600) != 'T') {
		error("%s: no teardown request from the controller", who);
		ret = 1;
	}
	if (waiters_stop(w))
		ret = 1;
	return ret;
}

static uint32_t own_probe[NPROBE * STRIDE] __attribute__((aligned(64)));

static int neighbour(const char *km, int n, int prealloc, int rfd, int wfd,
		     const struct cfg *c)
{
	struct waiters w;
	char param[32];
	uint64_t *lat;

	snprintf(param, sizeof(param), "%d", n);
	if (prealloc) {
		long s = futex_prealloc(n > 16 ? n : 0);

		if (s < 0) {
			error("neighbour: FUTEX_PREALLOC_HASH(%d): %s", n, strerror(errno));
			return 1;
		}
		bench("neigh-prealloc", km, param, "slots", "%ld", s);
	}
	if (waiters_start(&w, n))
		return 1;
	bench("neigh-queued", km, param, "waiters", "%d", n);

	/* Fewer iterations: with a small table its ops are very slow (policy 3). */
	lat = calloc(c->wake_iters / 5, sizeof(*lat));
	if (!lat || time_wakes(own_probe, lat, c->wake_iters / 5, 200))
		return 1;
	report_lat("neigh-wake", km, param, lat, c->wake_iters / 5);
	free(lat);
	report_hash("neigh-hash", km, param);

	return neighbour_hold(&w, rfd, wfd, "neighbour");
}

static uint32_t vprobe[NPROBE * STRIDE] __attribute__((aligned(64)));
static uint32_t ping, pong;
static size_t rtt_total;

static void *pong_fn(void *p)
{
	size_t i;

	(void)p;
	/* Attachments are per thread: a victim that attached attaches here too. */
	if (att_flag && (futex_attach(&ping) || futex_attach(&pong)))
		exit(1);
	for (i = 1; i <= rtt_total; i++) {
		while (__atomic_load_n(&ping, __ATOMIC_ACQUIRE) != i)
			futex_wait(&ping, i - 1);
		__atomic_store_n(&pong, i, __ATOMIC_RELEASE);
		futex_wake(&pong, 1);
	}
	return NULL;
}

static int victim(const char *km, int n, int prealloc, int attached,
		  const struct cfg *c)
{
	size_t warm = quick ? 100 : 300, i;
	char param[32];
	pthread_t th;
	uint64_t *lat;

	snprintf(param, sizeof(param), "%d", n);
	if (attached) {
		/* Every futex of the victim attached: its probes, ping, pong */
		for (i = 0; i < NPROBE; i++)
			if (futex_attach(&vprobe[i * STRIDE]))
				return 1;
		if (futex_attach(&ping) || futex_attach(&pong))
			return 1;
		att_flag = FUTEX_ATTACHED;
	}
	if (prealloc) {
		long s = futex_prealloc(0);

		if (s < 0) {
			error("victim: FUTEX_PREALLOC_HASH(0): %s", strerror(errno));
			return 1;
		}
		bench("victim-prealloc", km, param, "slots", "%ld", s);
	}
	lat = calloc(c->wake_iters > c->rtt_iters ? c->wake_iters : c->rtt_iters,
		     sizeof(*lat));
	if (!lat)
		return 1;
	/* Single-threaded: FUTEX_WAKE of a private futex nobody waits on. */
	if (time_wakes(vprobe, lat, c->wake_iters, 1000))
		return 1;
	report_lat("victim-wake", km, param, lat, c->wake_iters);
	report_hash("victim-hash-st", km, param);

	/* Wait/wake round trip between two threads. */
	rtt_total = warm + c->rtt_iters;
	errno = pthread_create(&th, NULL, pong_fn, NULL);
	if (errno) {
		error("victim: pthread_create: %s", strerror(errno));
		return 1;
	}
	for (i = 1; i <= rtt_total; i++) {
		uint64_t t0 = ff_now_ns();

		__atomic_store_n(&ping, i, __ATOMIC_RELEASE);
		futex_wake(&ping, 1);
		while (__atomic_load_n(&pong, __ATOMIC_ACQUIRE) != i)
			futex_wait(&pong, i - 1);
		if (i > warm)
			lat[i - warm - 1] = ff_now_ns() - t0;
	}
	pthread_join(th, NULL);
	report_lat("victim-rtt", km, param, lat, c->rtt_iters);
	report_hash("victim-hash-mt", km, param);
	free(lat);
	return 0;
}

static int wait_child(pid_t pid, const char *who, int n)
{
	int st;

	if (waitpid(pid, &st, 0) != pid) {
		error("waitpid %s: %s", who, strerror(errno));
		return -1;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (WIFSIGNALED(st))
		error("%s (N=%d) killed by signal %d", who, n, WTERMSIG(st));
	else
		error("%s (N=%d) failed with exit status %d", who, n, WEXITSTATUS(st));
	return -1;
}

/*
 * Run a neighbour process, @nfn(@arg, rfd, wfd), which writes 'R' to wfd
 * once ready and then waits for 'T' on rfd, and once it is ready a victim
 * process, @vfn(@arg); @what (with @n) names them in messages. Return 0,
 * or -1 if either failed.
 */
static int run_pair(const char *what, int n, int ready_s,
		    int (*nfn)(void *arg, int rfd, int wfd),
		    int (*vfn)(void *arg), void *arg)
{
	int p2n[2], n2p[2], ret = 0;
	char who[64];
	pid_t nb, v;

	if (pipe(p2n) || pipe(n2p))
		return -1;
	nb = fork();
	if (nb < 0)
		return -1;
	if (nb == 0) {
		close(p2n[1]);
		close(n2p[0]);
		_exit(nfn(arg, p2n[0], n2p[1]));
	}
	close(p2n[0]);
	close(n2p[1]);
	snprintf(who, sizeof(who), "%s neighbour", what);
	if (read_byte(n2p[0], ready_s) != 'R') {
		error("%s (N=%d) did not get ready", who, n);
		kill(nb, SIGKILL);
		wait_child(nb, who, n);
		return -1;
	}
	v = fork();
	if (v < 0)
		return -1;
	if (v == 0)
		_exit(vfn(arg));
	snprintf(who, sizeof(who), "%s victim", what);
	if (wait_child(v, who, n))
		ret = -1;
	if (write(p2n[1], "T", 1) != 1)
		ret = -1;
	snprintf(who, sizeof(who), "%s neighbour", what);
	if (wait_child(nb, who, n))
		ret = -1;
	close(p2n[1]);
	close(n2p[0]);
	return ret;
}

struct noisy_arg {
	const char *km;
	int n, prealloc, attached;
	const struct cfg *c;
};

static int noisy_neighbour(void *arg, int rfd, int wfd)
{
	struct noisy_arg *a = arg;

	return neighbour(a->km, a->n, a->prealloc, rfd, wfd, a->c);
}

static int noisy_victim(void *arg)
{
	struct noisy_arg *a = arg;

	return victim(a->km, a->n, a->prealloc, a->attached, a->c);
}

static int noisy_level(const char *km, int n, int prealloc, int attached,
		       const struct cfg *c)
{
	struct noisy_arg a = { km, n, prealloc, attached, c };

	return run_pair(km, n, 600, noisy_neighbour, noisy_victim, &a);
}

/*
 * Parse MODES into policies (-1: global, 4: prealloc, 5: attached, i.e.
 * policy 1 with every futex of the victim attached); return the count.
 */
static int parse_modes(const char *s, int *modes, int max)
{
	char buf[128], *tok, *save;
	int n = 0;

	if (!have_policy()) {
		modes[0] = -1;
		return 1;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok && n < max; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "prealloc"))
			modes[n++] = 4;
		else if (!strcmp(tok, "attached"))
			modes[n++] = 5;
		else if (tok[0] >= '0' && tok[0] <= '3' && !tok[1])
			modes[n++] = tok[0] - '0';
		else
			error("unknown mode '%s' ignored", tok);
	}
	return n;
}

static void mode_label(char *km, size_t sz, int mode)
{
	if (mode < 0)
		snprintf(km, sz, "%s/global", kernel_label);
	else if (mode == 4)
		snprintf(km, sz, "%s/prealloc", kernel_label);
	else if (mode == 5)
		snprintf(km, sz, "%s/attached", kernel_label);
	else
		snprintf(km, sz, "%s/m%d", kernel_label, mode);
}

static int parse_levels(const char *s, int *lv, int max)
{
	char buf[256], *tok, *save;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok && n < max; tok = strtok_r(NULL, ",", &save)) {
		int v = atoi(tok);

		if (v < 0 || v % WAITV_MAX) {
			error("waiter count %d is not a multiple of %d", v, WAITV_MAX);
			continue;
		}
		lv[n++] = v;
	}
	return n;
}

static int cmd_noisy(const char *modes_s, const char *levels_s)
{
	struct cfg c = {
		.wake_iters = quick ? 10000 : 50000,
		.rtt_iters = quick ? 2000 : 10000,
	};
	int modes[8], lv[16], nm, nl, i, j, ret = 0;
	char km[64];

	nm = parse_modes(modes_s, modes, 8);
	nl = parse_levels(levels_s, lv, 16);
	if (!have_policy())
		bench("info", kernel_label, "-", "policy_sysctl", "%d", 0);
	for (i = 0; i < nm; i++) {
		mode_label(km, sizeof(km), modes[i]);
		if (set_policy(modes[i] >= 4 ? 1 : modes[i]))
			return 1;
		if (modes[i] == 5) {
			char what[96];
			int sk;

			snprintf(what, sizeof(what), "noisy %s", km);
			sk = attach_skip(what);
			if (sk < 0)
				ret = 1;
			if (sk)
				continue;
		}
		for (j = 0; j < nl; j++) {
			uint64_t t0 = ff_now_ns();

			progress("noisy %s N=%d starts", km, lv[j]);
			if (noisy_level(km, lv[j], modes[i] == 4, modes[i] == 5, &c)) {
				error("noisy: %s with %d neighbour waiters failed", km, lv[j]);
				ret = 1;
				continue;
			}
			progress("noisy %s N=%d done in %.1f s", km, lv[j],
				 (ff_now_ns() - t0) / 1e9);
		}
	}
	set_policy(1);
	return ret;
}

/* ---- NUMA noisy neighbour: shared futexes, per-node parts of the table ---- */

/* Shared futexes (no FUTEX2_PRIVATE): always in the global table */
#define NUMA_FLAGS	FUTEX2_SIZE_U32
#define NUMA_BLOCKS	10	/* the victim's variants take turns, block by block */
#define NUMA_MAX_NODES	64

struct numa_arg {
	int n;
	int numa;		/* the kernel takes FUTEX2_NUMA */
	size_t iters;		/* timed wakes per variant */
	cpu_set_t cpus[2];	/* the CPUs of nodes 0 and 1 */
};

/* The CPUs of NUMA node @node, from sysfs; -1 without the node or CPUs. */
static int node_cpus(int node, cpu_set_t *set)
{
	char path[64], buf[1024], *tok, *save;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", node);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	CPU_ZERO(set);
	for (tok = strtok_r(buf, ",\n", &save); tok; tok = strtok_r(NULL, ",\n", &save)) {
		int a, b, k = sscanf(tok, "%d-%d", &a, &b);

		if (k == 1)
			b = a;
		else if (k != 2)
			continue;
		for (; a >= 0 && a <= b && a < CPU_SETSIZE; a++)
			CPU_SET(a, set);
	}
	return CPU_COUNT(set) ? 0 : -1;
}

static int pin_node(const cpu_set_t *set, int node, const char *who)
{
	if (sched_setaffinity(0, sizeof(*set), set)) {
		error("numa %s: sched_setaffinity to node %d's CPUs: %s", who, node, strerror(errno));
		return -1;
	}
	return 0;
}

/* A page of shared memory (MAP_SHARED: futex keys are shared keys) */
static uint32_t *shared_page(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		error("numa: mmap: %s", strerror(errno));
		return NULL;
	}
	return p;
}

/*
 * FUTEX2_NUMA on a pair whose node word is FUTEX_NO_NODE, by a caller
 * pinned to @node's CPUs: the kernel must write @node there.
 */
static int numa_no_node(uint32_t *pair, int node, const char *who)
{
	pair[0] = 0;
	pair[1] = (uint32_t)FUTEX_NO_NODE;
	if (futex2_wake(pair, 1, NUMA_FLAGS | FUTEX2_NUMA) < 0) {
		error("numa %s: futex_wake FUTEX2_NUMA, FUTEX_NO_NODE: %s", who, strerror(errno));
		return -1;
	}
	if (pair[1] != (uint32_t)node) {
		error("numa %s: futex_wake FUTEX2_NUMA on node %d turned FUTEX_NO_NODE into node %d",
		      who, node, (int)pair[1]);
		return -1;
	}
	return 0;
}

/*
 * Whether the kernel takes FUTEX2_NUMA on a shared futex: 1; 0 when
 * futex_wake and futex_waitv both refuse it with EINVAL (vanilla 6.12);
 * -1 (an FFB-ERROR line) otherwise.
 */
static int numa_supported(void)
{
	uint32_t *p = shared_page();
	struct futex_waitv v;
	long rw, rv;
	int ew, ev;

	if (!p)
		return -1;
	p[0] = 0;
	p[1] = 0;	/* node 0 */
	rw = futex2_wake(p, 1, NUMA_FLAGS | FUTEX2_NUMA);
	ew = errno;
	memset(&v, 0, sizeof(v));
	v.uaddr = (uintptr_t)p;
	v.val = 1;	/* not the value: EAGAIN, once the key is made */
	v.flags = NUMA_FLAGS | FUTEX2_NUMA;
	rv = syscall(SYS_futex_waitv, &v, 1, 0, NULL, CLOCK_MONOTONIC);
	ev = errno;
	munmap(p, 4096);
	if (rw == 0 && rv < 0 && ev == EAGAIN)
		return 1;
	if (rw < 0 && ew == EINVAL && rv < 0 && ev == EINVAL)
		return 0;
	error("numa: FUTEX2_NUMA, node 0: futex_wake returned %ld (%s), futex_waitv %ld (%s); "
	      "expected 0 and EAGAIN, or EINVAL from both", rw, rw < 0 ? strerror(ew) : "ok",
	      rv, rv < 0 ? strerror(ev) : "ok");
	return -1;
}

/*
 * The neighbour, pinned to node 1: N waiters on shared futexes, with
 * FUTEX2_NUMA and node 1 in their node words when the kernel takes it.
 */
static int numa_neighbour(void *arg, int rfd, int wfd)
{
	struct numa_arg *a = arg;
	unsigned int flags = NUMA_FLAGS | (a->numa ? FUTEX2_NUMA : 0);
	char km[64], param[32];
	struct waiters w;
	uint32_t *pair;

	snprintf(km, sizeof(km), "%s/%s", kernel_label, a->numa ? "numa" : "noflag");
	snprintf(param, sizeof(param), "%d", a->n);
	if (pin_node(&a->cpus[1], 1, "neighbour"))
		return 1;
	if (a->numa) {
		pair = shared_page();
		if (!pair || numa_no_node(pair, 1, "neighbour"))
			return 1;
		munmap(pair, 4096);
	}
	if (waiters_queue(&w, a->n, flags, 1))
		return 1;
	bench("numa-neigh", km, param, "waiters", "%d", a->n);

	return neighbour_hold(&w, rfd, wfd, "numa neighbour");
}

/*
 * time_wakes() with futex_wake(2) and futex2 @flags: a loop of its own,
 * so that noisy's measured loop keeps its instructions.
 */
static int time_wakes2(uint32_t *probe, unsigned int flags, uint64_t *lat,
		       size_t iters, size_t warmup)
{
	size_t i;

	for (i = 0; i < warmup + iters; i++) {
		uint32_t *f = &probe[(i % NPROBE) * STRIDE];
		uint64_t t0 = ff_now_ns();
		long r = futex2_wake(f, 1, flags);
		uint64_t t1 = ff_now_ns();

		if (r < 0) {
			error("futex_wake (flags %#x): %s", flags, strerror(errno));
			return -1;
		}
		if (i >= warmup)
			lat[i - warmup] = t1 - t0;
	}
	return 0;
}

/*
 * The victim, a fresh process pinned to node 0: futex_wake(2) of shared
 * futexes nobody waits on (NPROBE in turn, one a cache line), (a) without
 * flags ("noflag") and (b) with FUTEX2_NUMA and node 0 in their node words
 * ("numa", when the kernel takes it), in turns of 1/NUMA_BLOCKS each.
 */
static int numa_victim(void *arg)
{
	static const char *const name[] = { "noflag", "numa" };
	const unsigned int flags[] = { NUMA_FLAGS, NUMA_FLAGS | FUTEX2_NUMA };
	struct numa_arg *a = arg;
	size_t per = a->iters / NUMA_BLOCKS, b;
	int nv = a->numa ? 2 : 1, v, i;
	uint64_t *lat[2] = { NULL, NULL };
	char km[64], param[32];
	uint32_t *probe, *pair;

	snprintf(param, sizeof(param), "%d", a->n);
	if (pin_node(&a->cpus[0], 0, "victim"))
		return 1;
	probe = shared_page();
	pair = shared_page();
	if (!probe || !pair)
		return 1;
	/* NPROBE * STRIDE u32s: the page; node words: node 0 */
	for (i = 0; i < NPROBE; i++)
		probe[i * STRIDE + 1] = 0;
	if (a->numa && numa_no_node(pair, 0, "victim"))
		return 1;
	for (v = 0; v < nv; v++) {
		lat[v] = calloc(per * NUMA_BLOCKS, sizeof(*lat[v]));
		if (!lat[v])
			return 1;
	}
	for (b = 0; b < NUMA_BLOCKS; b++)
		for (v = 0; v < nv; v++)
			if (time_wakes2(probe, flags[v], lat[v] + b * per, per, b ? 0 : 1000))
				return 1;
	for (v = 0; v < nv; v++) {
		snprintf(km, sizeof(km), "%s/%s", kernel_label, name[v]);
		report_lat("numa-wake", km, param, lat[v], per * NUMA_BLOCKS);
		free(lat[v]);
	}
	return 0;
}

/*
 * The global table's memory as the kernel logged it at boot: per part,
 * "futex: node N: buckets A-B, K KiB on node M"; without parts, the size
 * of the single table from "futex hash table entries: E (..., B bytes,
 * ...)".  BENCH numa-mem KERNEL/pernode nodeN {kib,buckets,on_node} and
 * KERNEL/{pernode,global} all {kib,buckets}.
 */
static int numa_mem(void)
{
	struct { unsigned long part, b0, b1, kib; int on; } pt[NUMA_MAX_NODES];
	unsigned long entries = 0, bytes = 0, kib = 0, bk = 0;
	int len = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0), got, np = 0, i;
	char *buf, *line, *save, *p, km[64], param[32];
	int have_entries = 0;

	buf = len > 0 ? malloc(len + 1) : NULL;
	if (!buf) {
		error("numa-mem: kernel log buffer: %s", len < 0 ? strerror(errno) : "out of memory");
		return -1;
	}
	got = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, len);
	if (got < 0) {
		error("numa-mem: reading the kernel log: %s", strerror(errno));
		free(buf);
		return -1;
	}
	buf[got] = 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		p = strstr(line, "futex: node ");
		if (p && np < NUMA_MAX_NODES &&
		    sscanf(p, "futex: node %lu: buckets %lu-%lu, %lu KiB on node %d",
			   &pt[np].part, &pt[np].b0, &pt[np].b1, &pt[np].kib, &pt[np].on) == 5) {
			np++;
			continue;
		}
		p = strstr(line, "futex hash table entries: ");
		if (p && !have_entries) {
			char *q = strstr(p, " bytes");

			entries = strtoul(p + strlen("futex hash table entries: "), NULL, 10);
			/* the number before " bytes": "(order: 4, 65536 bytes" or "(65536 bytes" */
			while (q && q > p && q[-1] >= '0' && q[-1] <= '9')
				q--;
			bytes = q ? strtoul(q, NULL, 10) : 0;
			have_entries = 1;
		}
	}
	free(buf);
	snprintf(km, sizeof(km), "%s/%s", kernel_label, np ? "pernode" : "global");
	for (i = 0; i < np; i++) {
		snprintf(param, sizeof(param), "node%lu", pt[i].part);
		bench("numa-mem", km, param, "kib", "%lu", pt[i].kib);
		bench("numa-mem", km, param, "buckets", "%lu", pt[i].b1 - pt[i].b0 + 1);
		bench("numa-mem", km, param, "on_node", "%d", pt[i].on);
		kib += pt[i].kib;
		bk += pt[i].b1 - pt[i].b0 + 1;
	}
	if (!np && !have_entries) {
		error("numa-mem: no \"futex hash table entries\" line in the kernel log");
		return -1;
	}
	bench("numa-mem", km, "all", "kib", "%lu", np ? kib : bytes / 1024);
	bench("numa-mem", km, "all", "buckets", "%lu", np ? bk : entries);
	return 0;
}

/*
 * ff-bench numa -n LEVELS: the kernel log's table memory (numa_mem), then
 * for each level N a neighbour on node 1 with N shared waiters and a
 * victim on node 0, see numa_neighbour() and numa_victim().
 */
static int cmd_numa(const char *levels_s)
{
	struct numa_arg a;
	int lv[16], nl, j, ret = 0;
	char what[64];

	memset(&a, 0, sizeof(a));
	a.iters = (quick ? 10000 : 50000) / NUMA_BLOCKS * NUMA_BLOCKS;
	if (numa_mem())
		ret = 1;
	if (node_cpus(0, &a.cpus[0]) || node_cpus(1, &a.cpus[1])) {
		progress("numa: skipped: needs NUMA nodes 0 and 1 with CPUs (/sys/devices/system/node/node{0,1}/cpulist)");
		return ret ? ret : 4;
	}
	a.numa = numa_supported();
	if (a.numa < 0)
		return 1;
	bench("numa-info", kernel_label, "-", "futex2_numa", "%d", a.numa);
	if (!a.numa)
		progress("numa: FUTEX2_NUMA refused (EINVAL): the neighbour queues without it, the victim times futex_wake without flags only");
	nl = parse_levels(levels_s, lv, 16);
	for (j = 0; j < nl; j++) {
		uint64_t t0 = ff_now_ns();

		a.n = lv[j];
		progress("numa %s N=%d starts", kernel_label, a.n);
		snprintf(what, sizeof(what), "numa %s", kernel_label);
		if (run_pair(what, a.n, 600, numa_neighbour, numa_victim, &a)) {
			error("numa: %s with %d neighbour waiters failed", kernel_label, a.n);
			ret = 1;
			continue;
		}
		progress("numa %s N=%d done in %.1f s", kernel_label, a.n,
			 (ff_now_ns() - t0) / 1e9);
	}
	return ret;
}

/* ---- switch cost ---- */

static uint32_t sprobe[NPROBE * STRIDE] __attribute__((aligned(64)));

/*
 * In a fresh process: queue @n waiters under policy @queue_mode, then
 * switch to policy 1 and
 *  variant 0 "conflict": time the first 32 private ops (conflict detection
 *	and switch) against the next 32;
 *  variant 1 "prealloc-call": time one FUTEX_PREALLOC_HASH(@n) call;
 *  variant 2 "prealloc-first": preallocated before queueing: the first
 *	32 ops against the next 32.
 */
static int switch_child(int n, int variant)
{
	static const char *const name[] = { "conflict", "prealloc-call", "prealloc-first" };
	char km[64], param[32];
	uint64_t first = 0, steady = 0, fmax = 0, t0, t1;
	struct waiters w;
	int i, ret = 0;

	snprintf(km, sizeof(km), "%s/%s", kernel_label, name[variant]);
	snprintf(param, sizeof(param), "%d", n);
	if (set_policy(variant == 2 ? 1 : 0))
		return 1;
	if (variant == 2 && futex_prealloc(n > 16 ? n : 0) < 0) {
		error("switch: FUTEX_PREALLOC_HASH: %s", strerror(errno));
		return 1;
	}
	if (waiters_start(&w, n))
		return 1;
	if (set_policy(1))
		return 1;
	if (variant == 1) {
		long s;

		t0 = ff_now_ns();
		s = futex_prealloc(n > 16 ? n : 0);
		t1 = ff_now_ns();
		if (s < 0) {
			error("switch: FUTEX_PREALLOC_HASH with %d waiters: %s", n, strerror(errno));
			ret = 1;
		}
		bench("switch", km, param, "call_ns", "%llu", (unsigned long long)(t1 - t0));
		bench("switch", km, param, "slots", "%ld", s);
	} else {
		for (i = 0; i < 64; i++) {
			uint32_t *f = &sprobe[(i % NPROBE) * STRIDE];

			t0 = ff_now_ns();
			futex_wake(f, 1);
			t1 = ff_now_ns();
			if (i < 32) {
				first += t1 - t0;
				if (t1 - t0 > fmax)
					fmax = t1 - t0;
			} else {
				steady += t1 - t0;
			}
		}
		bench("switch", km, param, "first32_ns", "%llu", (unsigned long long)first);
		bench("switch", km, param, "next32_ns", "%llu", (unsigned long long)steady);
		bench("switch", km, param, "first_max_ns", "%llu", (unsigned long long)fmax);
		bench("switch", km, param, "extra_ns", "%lld",
		      (long long)first - (long long)steady);
	}
	report_hash("switch-hash", km, param);
	if (waiters_stop(&w))
		ret = 1;
	return ret;
}

static int cmd_switch(const char *levels_s)
{
	int lv[16], nl, i, v, ret = 0;
	pid_t pid;

	if (!have_policy()) {
		bench("info", kernel_label, "-", "policy_sysctl", "%d", 0);
		return 0;
	}
	nl = parse_levels(levels_s, lv, 16);
	for (i = 0; i < nl; i++) {
		for (v = 0; v < 3; v++) {
			pid = fork();
			if (pid == 0)
				_exit(switch_child(lv[i], v));
			if (pid < 0 || wait_child(pid, "switch", lv[i]))
				ret = 1;
		}
		progress("switch N=%d done", lv[i]);
	}
	set_policy(1);
	return ret;
}

/* ---- memory ---- */

static atomic_int mem_go;

static void *mem_thread(void *p)
{
	uint32_t *f = p;
	int i;

	for (i = 0; i < 100; i++)
		futex_wake(f, 1);
	while (!atomic_load(&mem_go))
		usleep(1000);
	return NULL;
}

/* A process with @threads threads doing private ops, and @n waiters. */
static int mem_child(const char *km, const char *scen, int threads, int n, int prealloc)
{
	static uint32_t f[64 * STRIDE];
	pthread_t th[64];
	struct waiters w;
	int i, ret = 0;

	if (prealloc && futex_prealloc(n > 16 ? n : 0) < 0) {
		error("mem: FUTEX_PREALLOC_HASH: %s", strerror(errno));
		return 1;
	}
	for (i = 0; i < 100; i++)
		futex_wake(&f[(i % 64) * STRIDE], 1);
	for (i = 1; i < threads; i++)
		if (pthread_create(&th[i], NULL, mem_thread, &f[i * STRIDE]))
			return 1;
	if (waiters_start(&w, n))
		return 1;
	/* Any switch decided above is done by the next private op. */
	for (i = 0; i < 64; i++)
		futex_wake(&f[i * STRIDE], 1);
	report_hash("mem", km, scen);
	atomic_store(&mem_go, 1);
	for (i = 1; i < threads; i++)
		pthread_join(th[i], NULL);
	if (waiters_stop(&w))
		ret = 1;
	return ret;
}

static int cmd_mem(const char *modes_s)
{
	static const struct { const char *name; int threads, n; } scen[] = {
		{ "1thread", 1, 0 },
		{ "2threads", 2, 0 },
		{ "16threads", 16, 0 },
		{ "8192waiters", 1, 8192 },
	};
	int modes[8], nm, i, j, ret = 0;
	char km[64];
	pid_t pid;

	if (!have_policy()) {
		bench("info", kernel_label, "-", "policy_sysctl", "%d", 0);
		return 0;
	}
	nm = parse_modes(modes_s, modes, 8);
	for (i = 0; i < nm; i++) {
		mode_label(km, sizeof(km), modes[i]);
		if (set_policy(modes[i] >= 4 ? 1 : modes[i]))
			return 1;
		if (modes[i] == 5) {
			char what[96];
			int sk;

			snprintf(what, sizeof(what), "mem %s", km);
			sk = attach_skip(what);
			if (sk < 0)
				ret = 1;
			if (sk)
				continue;
		}
		for (j = 0; j < (int)(sizeof(scen) / sizeof(scen[0])); j++) {
			pid = fork();
			if (pid == 0)
				_exit(mem_child(km, scen[j].name, scen[j].threads,
						scen[j].n, modes[i] == 4));
			if (pid < 0 || wait_child(pid, "mem", scen[j].n))
				ret = 1;
		}
	}
	set_policy(1);
	progress("mem done (%d modes)", nm);
	return ret;
}

/* ---- perf bench futex ---- */

static int perf_one(const char *km, const char *wl, const char *args, const char *param)
{
	char cmd[256], line[512], last[512] = "";
	double v = -1, a, b;
	const char *metric = "?";
	char wlname[64];
	FILE *p;
	int st;

	snprintf(cmd, sizeof(cmd), "/usr/bin/perf bench futex %s -s %s 2>&1", wl, args);
	p = popen(cmd, "r");
	if (!p) {
		error("perf: cannot run '%s'", cmd);
		return -1;
	}
	while (fgets(line, sizeof(line), p)) {
		if (sscanf(line, "Averaged %lf operations/sec", &a) == 1) {
			v = a;
			metric = "ops_per_s";
		} else if (sscanf(line, "Wokeup %lf of %lf threads in %lf ms", &a, &b, &v) == 3 ||
			   sscanf(line, "Requeued %lf of %lf threads in %lf ms", &a, &b, &v) == 3) {
			metric = "ms";
		} else if (strstr(line, "latency") && sscanf(strstr(line, " in ") ?: "", " in %lf ms", &a) == 1) {
			v = a;
			metric = "ms";
		}
		if (line[0] != '\n')
			snprintf(last, sizeof(last), "%s", line);
	}
	st = pclose(p);
	if (st || v < 0) {
		last[strcspn(last, "\n")] = 0;
		error("perf bench futex %s %s failed (status %d): %s", wl, args, st, last);
		return -1;
	}
	snprintf(wlname, sizeof(wlname), "perf-%s", wl);
	bench(wlname, km, param, metric, "%.4f", v);
	return 0;
}

static int cmd_perf(int mode, int repeats, const char *threads_s, const char *wls, int secs)
{
	char km[64], args[64], param[16], buf[128], tbuf[64], *tok, *save, *t, *s2;
	int r, ret = 0;

	if (access("/usr/bin/perf", X_OK)) {
		error("perf: /usr/bin/perf missing from the guest (pack with perf)");
		return 1;
	}
	mode_label(km, sizeof(km), have_policy() ? mode : -1);
	if (set_policy(mode == 4 ? 1 : mode))
		return 1;
	for (r = 0; r < repeats; r++) {
		snprintf(buf, sizeof(buf), "%s", wls);
		for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (!strcmp(tok, "hash")) {
				snprintf(tbuf, sizeof(tbuf), "%s", threads_s);
				for (t = strtok_r(tbuf, ",", &s2); t; t = strtok_r(NULL, ",", &s2)) {
					snprintf(args, sizeof(args), "-r %d -t %s", secs, t);
					snprintf(param, sizeof(param), "t%s", t);
					if (perf_one(km, tok, args, param))
						ret = 1;
				}
			} else if (!strcmp(tok, "lock-pi")) {
				snprintf(args, sizeof(args), "-r %d -t 4", secs);
				if (perf_one(km, tok, args, "t4"))
					ret = 1;
			} else if (!strcmp(tok, "wake") || !strcmp(tok, "wake-parallel") ||
				   !strcmp(tok, "requeue")) {
				if (perf_one(km, tok, "-t 32", "t32"))
					ret = 1;
			} else {
				error("perf: unknown workload %s", tok);
				ret = 1;
			}
		}
		progress("perf %s repeat %d/%d done", km, r + 1, repeats);
	}
	set_policy(1);
	return ret;
}

/* ---- ahash: perf bench futex hash, with attached futexes ---- */

#define AH_FUTEXES	64	/* per thread, below kernel.futex_attached_max */

struct ah_thread {
	pthread_t th;
	uint32_t *words;	/* AH_FUTEXES words, one cache line each */
	int op;
	unsigned long ops;
	int err;
};

static atomic_int ah_go, ah_stop, ah_ready;

static void *ah_worker(void *arg)
{
	struct ah_thread *t = arg;
	unsigned long n = 0;
	int i;

	if (t->op & FUTEX_ATTACHED) {
		for (i = 0; i < AH_FUTEXES; i++) {
			if (futex_attach(&t->words[i * STRIDE])) {
				t->err = 1;
				break;
			}
		}
	}
	atomic_fetch_add(&ah_ready, 1);
	while (!atomic_load(&ah_go))
		sched_yield();
	while (!t->err && !atomic_load(&ah_stop)) {
		for (i = 0; i < AH_FUTEXES; i++) {
			if (futex(&t->words[i * STRIDE], t->op, 1, 0, NULL, 0)) {
				error("ahash: FUTEX_WAKE: %s", strerror(errno));
				t->err = 1;
				break;
			}
		}
		n += AH_FUTEXES;
	}
	t->ops = n;
	return NULL;
}

/* One measurement in its own process: @nt threads for @secs seconds */
static int ah_run(const char *km, const char *mode, int nt, int secs)
{
	struct ah_thread *t = calloc(nt, sizeof(*t));
	unsigned long total = 0;
	char param[16];
	uint64_t t0, t1;
	int i, ret = 0;

	if (!t)
		return 1;
	if (!strcmp(mode, "prealloc") && futex_prealloc(0) < 0) {
		error("ahash: FUTEX_PREALLOC_HASH: %s", strerror(errno));
		return 1;
	}
	for (i = 0; i < nt; i++) {
		t[i].words = aligned_alloc(64, AH_FUTEXES * STRIDE * sizeof(uint32_t));
		if (!t[i].words)
			return 1;
		memset(t[i].words, 0, AH_FUTEXES * STRIDE * sizeof(uint32_t));
		t[i].op = FUTEX_WAKE_PRIVATE |
			  (!strcmp(mode, "attached") ? FUTEX_ATTACHED : 0);
		errno = pthread_create(&t[i].th, NULL, ah_worker, &t[i]);
		if (errno) {
			error("ahash: pthread_create: %s", strerror(errno));
			return 1;
		}
	}
	while (atomic_load(&ah_ready) < nt)
		sched_yield();
	t0 = ff_now_ns();
	atomic_store(&ah_go, 1);
	sleep(secs);
	atomic_store(&ah_stop, 1);
	for (i = 0; i < nt; i++) {
		pthread_join(t[i].th, NULL);
		total += t[i].ops;
		ret |= t[i].err;
	}
	t1 = ff_now_ns();
	snprintf(param, sizeof(param), "%d", nt);
	if (!ret)
		bench("ahash", km, param, "ops_per_s", "%.0f", total / ((t1 - t0) / 1e9));
	return ret;
}

/*
 * FUTEX_WAKE of nobody by @threads threads, each on 64 futexes of its
 * own, as perf bench futex hash does: on the global table (policy 1, no
 * conflict), on a preallocated private table, and attached (each thread
 * attached its futexes, FUTEX_WAKE | FUTEX_ATTACHED).  TCG wall clock.
 */
static int cmd_ahash(int repeats, const char *threads_s, int secs)
{
	/* m1: policy 1 without a conflict, the global table; vanilla: global */
	const char *modes[] = { have_policy() ? "m1" : "global", "prealloc", "attached" };
	char buf[64], km[64], *tok, *save;
	int m, r, ret = 0, nmodes = have_policy() ? 3 : 1;

	if (set_policy(1))
		return 1;
	for (m = 0; m < nmodes; m++) {
		snprintf(km, sizeof(km), "%s/%s", kernel_label, modes[m]);
		if (!strcmp(modes[m], "attached")) {
			char what[96];
			int sk;

			snprintf(what, sizeof(what), "ahash %s", km);
			sk = attach_skip(what);
			if (sk < 0)
				ret = 1;
			if (sk)
				continue;
		}
		snprintf(buf, sizeof(buf), "%s", threads_s);
		for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			for (r = 0; r < repeats; r++) {
				pid_t pid = fork();

				if (pid < 0)
					return 1;
				if (pid == 0)
					_exit(ah_run(km, modes[m], atoi(tok), secs));
				if (wait_child(pid, "ahash", atoi(tok)))
					ret = 1;
			}
			progress("ahash %s %s threads done", km, tok);
		}
	}
	return ret;
}

/* ---- attached neighbour (markers) ---- */

#define MK_LOOPS	20
#define MK_CALLS	1000

static uint32_t mk_word __attribute__((aligned(64)));
static uint32_t *mk_shared;
static int mk_park[2];

struct mk_thread {
	uint32_t *futexes;
	int n;
	int attached;
	int err;
};

/* A neighbour thread: attach n futexes, then park in read() (not a futex) */
static void *mk_attacher(void *arg)
{
	struct mk_thread *t = arg;
	char c;
	int i;

	for (i = 0; i < t->n; i++) {
		if (futex(&t->futexes[i * STRIDE], FUTEX_ATTACH | FUTEX_ATTACHED |
			  FUTEX_PRIVATE_FLAG, 0, 0, NULL, 0)) {
			t->err = errno;
			break;
		}
		t->attached++;
	}
	__atomic_fetch_add(&mk_word, 1, __ATOMIC_RELEASE);
	if (read(mk_park[0], &c, 1) < 0)
		t->err = errno;
	return NULL;
}

/*
 * The neighbour: @nt threads attach @na futexes each (a private futex
 * each, one cache line apart). @table: -1, PR_FUTEX_HASH_SET_SLOTS 0
 * first (the global table: FUTEX_ATTACH then fails with EPERM, as under
 * policy 0); 1, a neighbour which attaches nothing takes a private table
 * of 16 slots (SET_SLOTS 16), as its first FUTEX_ATTACH would give it
 * one: a quiet reference with private tables in use. Reports how many
 * attachments it holds, then waits for teardown.
 */
static int mk_neighbour(const char *km, const char *param, int nt, int na,
			int table, int rfd, int wfd)
{
	uint32_t *futexes = calloc((size_t)nt * na * STRIDE, sizeof(uint32_t));
	struct mk_thread *t = calloc(nt ? nt : 1, sizeof(*t));
	pthread_t *th = calloc(nt ? nt : 1, sizeof(*th));
	long attached = 0, err = 0;
	pthread_attr_t attr;
	int i, ret = 0;

	if (!futexes || !t || !th || pipe(mk_park))
		return 1;
	if ((table < 0 || (table > 0 && !(nt && na))) &&
	    prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, table < 0 ? 0 : 16, 0, 0)) {
		error("markers neighbour: PR_FUTEX_HASH_SET_SLOTS %d: %s",
		      table < 0 ? 0 : 16, strerror(errno));
		return 1;
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, WAITER_STACK);
	for (i = 0; i < nt; i++) {
		t[i].futexes = futexes + (size_t)i * na * STRIDE;
		t[i].n = na;
		errno = pthread_create(&th[i], &attr, mk_attacher, &t[i]);
		if (errno) {
			error("markers neighbour: pthread_create %d: %s", i, strerror(errno));
			return 1;
		}
	}
	while (__atomic_load_n(&mk_word, __ATOMIC_ACQUIRE) < (uint32_t)nt)
		usleep(1000);
	for (i = 0; i < nt; i++) {
		attached += t[i].attached;
		if (t[i].err && !err)
			err = t[i].err;
	}
	bench("markers-neigh", km, param, "attached", "%ld", attached);
	if (err) {
		/* EPERM: no private table (policy 0, SET_SLOTS 0); ENOSYS: none */
		bench("markers-neigh", km, param, "attach_errno", "%ld", err);
		if (err != EPERM && err != ENOSYS) {
			error("markers neighbour: FUTEX_ATTACH: %s", strerror(err));
			ret = 1;
		}
	}
	bench("markers-neigh", km, param, "slots", "%d",
	      prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_GET_SLOTS, 0, 0, 0));
	if (write(wfd, "R", 1) != 1)
		ret = 1;
	if (read_byte(rfd, 3600) != 'T') {
		error("markers neighbour: no teardown request from the controller");
		ret = 1;
	}
	close(mk_park[1]);
	for (i = 0; i < nt; i++)
		pthread_join(th[i], NULL);
	return ret;
}

/* Fastest of MK_LOOPS loops of MK_CALLS calls, per call (instructions under icount) */
static uint64_t mk_time(uint32_t *f, int op, uint32_t val)
{
	uint64_t best = UINT64_MAX;
	int l, i;

	for (l = 0; l < MK_LOOPS; l++) {
		uint64_t t0 = ff_now_ns(), dt;

		for (i = 0; i < MK_CALLS; i++)
			futex(f, op, val, 0, NULL, 0);
		dt = ff_now_ns() - t0;
		if (dt < best)
			best = dt;
	}
	return best / MK_CALLS;
}

/*
 * The victim: a fresh process which never attached times FUTEX_WAKE
 * (nobody waiting) and FUTEX_WAIT (value mismatch, EAGAIN) on a private
 * and a shared futex.
 */
static int mk_victim(const char *km, const char *param)
{
	static const struct { const char *name; int shared, wait; } ops[] = {
		{ "wake_private", 0, 0 }, { "wake_shared", 1, 0 },
		{ "wait_private", 0, 1 }, { "wait_shared", 1, 1 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		uint32_t *f = ops[i].shared ? mk_shared : &mk_word;
		int op = ops[i].wait ? FUTEX_WAIT : FUTEX_WAKE;

		if (!ops[i].shared)
			op |= FUTEX_PRIVATE_FLAG;
		/* FUTEX_WAIT expects 1, the word is 0: EAGAIN; FUTEX_WAKE wakes 1 */
		if (futex(f, op, 1, 0, NULL, 0) < 0 && (!ops[i].wait || errno != EAGAIN)) {
			error("markers victim: %s: %s", ops[i].name, strerror(errno));
			return 1;
		}
		bench("markers", km, param, ops[i].name, "%llu",
		      (unsigned long long)mk_time(f, op, 1));
	}
	return 0;
}

struct mk_arg {
	const char *km;
	char param[32];
	int nt, na, table;
};

static int mk_neighbour_fn(void *arg, int rfd, int wfd)
{
	struct mk_arg *a = arg;

	return mk_neighbour(a->km, a->param, a->nt, a->na, a->table, rfd, wfd);
}

static int mk_victim_fn(void *arg)
{
	struct mk_arg *a = arg;

	return mk_victim(a->km, a->param);
}

static int mk_level(const char *km, int nt, int na, int table)
{
	struct mk_arg a = { .km = km, .nt = nt, .na = na, .table = table };

	snprintf(a.param, sizeof(a.param), "%dx%d", nt, na);
	return run_pair(km, nt * na, 1800, mk_neighbour_fn, mk_victim_fn, &a);
}

/*
 * ff-bench markers -m MODES -n LEVELS: MODES of 0, 1 (the policy) and
 * global (policy 1, the neighbour calls PR_FUTEX_HASH_SET_SLOTS 0 first);
 * LEVELS of THREADSxATTACHMENTS (0x0: a neighbour which attaches nothing,
 * the quiet reference).
 */
static int cmd_markers(const char *modes_s, const char *levels_s)
{
	char mb[64], lb[128], km[64], *m, *l, *ms, *ls;
	int ret = 0;

	mk_shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (mk_shared == MAP_FAILED) {
		error("markers: mmap: %s", strerror(errno));
		return 1;
	}
	snprintf(mb, sizeof(mb), "%s", modes_s);
	for (m = strtok_r(mb, ",", &ms); m; m = strtok_r(NULL, ",", &ms)) {
		int global = !strcmp(m, "global");

		if (!global && strcmp(m, "0") && strcmp(m, "1")) {
			error("markers: unknown mode '%s' (0, 1, global)", m);
			return 1;
		}
		if (!have_policy()) {
			if (strcmp(m, "1"))
				continue;
			snprintf(km, sizeof(km), "%s/global", kernel_label);
		} else {
			snprintf(km, sizeof(km), "%s/m%s", kernel_label,
				 global ? "1global" : m);
			if (set_policy(global ? 1 : atoi(m)))
				return 1;
		}
		snprintf(lb, sizeof(lb), "%s", levels_s);
		for (l = strtok_r(lb, ",", &ls); l; l = strtok_r(NULL, ",", &ls)) {
			int nt = 0, na = 0;

			if (sscanf(l, "%dx%d", &nt, &na) != 2 || nt < 0 || na < 0) {
				error("markers: level '%s' is not THREADSxATTACHMENTS", l);
				return 1;
			}
			progress("markers %s %s starts", km, l);
			mk_word = 0;
			if (mk_level(km, nt, na, global ? -1 :
				     have_policy() && !strcmp(m, "1")))
				ret = 1;
			progress("markers %s %s done", km, l);
		}
	}
	set_policy(1);
	return ret;
}

int main(int argc, char **argv)
{
	const char *modes = "0,1,2,3,prealloc";
	const char *levels = NULL, *threads = "1,2,4";
	const char *wls = "hash,wake,wake-parallel,requeue,lock-pi";
	const char *cmd = argc > 1 ? argv[1] : "";
	int opt, repeats = 3, secs = 2, mode = 1, levels_given = 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	kernel_label = ff_cmdline_label(kernel_label);
	optind = 2;
	while ((opt = getopt(argc, argv, "k:qm:n:r:t:w:s:")) != -1) {
		switch (opt) {
		case 'k': kernel_label = optarg; break;
		case 'q': quick = 1; break;
		case 'm': modes = optarg; mode = !strcmp(optarg, "prealloc") ? 4 : atoi(optarg); break;
		case 'n': levels = optarg; levels_given = 1; break;
		case 'r': repeats = atoi(optarg); break;
		case 't': threads = optarg; break;
		case 'w': wls = optarg; break;
		case 's': secs = atoi(optarg); break;
		default: goto usage;
		}
	}
	if (!levels)
		levels = quick ? "0,8192,65536" : "0,2048,8192,32768,65536";
	if (!strcmp(cmd, "noisy"))
		return cmd_noisy(modes, levels);
	if (!strcmp(cmd, "switch"))
		return cmd_switch(levels);
	if (!strcmp(cmd, "mem"))
		return cmd_mem(modes);
	if (!strcmp(cmd, "perf"))
		return cmd_perf(mode, repeats, threads, wls, secs);
	if (!strcmp(cmd, "ahash"))
		return cmd_ahash(repeats, threads, secs);
	if (!strcmp(cmd, "numa"))
		return cmd_numa(levels_given ? levels : quick ? "0,65536" : "0,8192,65536");
	if (!strcmp(cmd, "markers"))
		return cmd_markers(strcmp(modes, "0,1,2,3,prealloc") ? modes : "0,1,global",
				   levels_given ? levels : "0x0,256x256");
usage:
	fprintf(stderr, "usage: ff-bench noisy|switch|mem|perf|ahash|markers|numa -k KERNEL [-q] [-m MODES] [-n LEVELS]\n"
		"       [-r REPEATS] [-t THREADS] [-w WORKLOADS] [-s SECS]\n");
	return 2;
}
