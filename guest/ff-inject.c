// SPDX-License-Identifier: GPL-2.0
/*
 * ff-inject: fault injection aimed at the private futex hash allocation.
 *
 * failslab and fail_page_alloc are set up with task-filter=Y,
 * ignore-gfp-wait=N, probability 100, min-order 0 (fail_page_alloc), and
 * armed through their 'times' file only while a trigger runs; the tasks
 * that may fail are marked with /proc/thread-self/make-it-fail.  Each
 * scenario runs in a fresh process with waiters queued on private futexes
 * and triggers a table allocation:
 *
 *   prealloc   FUTEX_PREALLOC_HASH(256) from the global table    -> ENOMEM
 *   prctl      PR_FUTEX_HASH_SET_SLOTS(512) from a 16-slot table -> ENOMEM
 *   first_op   policy 2, the first private futex operation (and the
 *              conflicts of 384 waiters) -> the allocations fail
 *              silently, the process stays global
 *   grow       policy 2, a 16-slot table from the first op, 96 waiters on
 *              distinct words (collisions beyond 16) -> growth fails
 *              silently
 *   conflict   policy 1, 384 waiters on distinct words -> the first
 *              conflict's allocation fails silently
 *
 * and checks: the faults were injected, the call failed with ENOMEM or the
 * automatic switch did not happen, /proc/self/futex_hash is unchanged,
 * every queued waiter is still woken by exactly one FUTEX_WAKE; then with
 * injection off the same switch succeeds and the waiters move with it.
 *
 * Without /sys/kernel/debug/failslab (kernel without CONFIG_FAILSLAB) it
 * prints "# SKIP no failslab" and exits 4.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
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
#define SYSCTL_POLICY	"/proc/sys/kernel/futex_private_hash"
#define SYSCTL_DEFBITS	"/proc/sys/kernel/futex_private_default_hash_bits"
#define MAXWAIT		400
/*
 * Waiters on distinct words that must make a conflict in the global table:
 * with b buckets, n waiters all miss each other with a chance of about
 * exp(-n(n-1)/2b), 14% for 128 waiters in the 4,096 buckets of
 * make coverage's futex_hashsize=4096, 2e-8 for 384.
 */
#define CONFLICT_WAITERS	384
#define TIMES		1000000

static const char *const fi_dirs[] = { "/sys/kernel/debug/failslab", "/sys/kernel/debug/fail_page_alloc" };
static int *shared;		/* [0] tests, [1] failed, [2] faults injected */

static void result(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d ", ok ? "ok" : "not ok", ++shared[0]);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		shared[1]++;
}

static long futex(void *uaddr, int op, unsigned int val, const void *timeout,
		  void *uaddr2, unsigned int val3)
{
	return syscall(SYS_futex, uaddr, op, val, timeout, uaddr2, val3);
}


static void set_int(const char *path, int v)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d", v);
	if (ff_write_file(path, buf)) {
		printf("# inject: cannot write %d to %s\n", v, path);
		_exit(1);
	}
}

/*
 * Arm (times = TIMES) or disarm (times = 0) both; return the faults
 * injected since arming.  The debugfs files do not seek: open them each
 * time, always from a thread whose make-it-fail is 0.
 */
static long arm(int on)
{
	static long armed;
	char path[256], buf[32];
	long injected = 0;
	int i, fd;
	ssize_t n;

	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/times", fi_dirs[i]);
		if (!on) {
			fd = open(path, O_RDONLY);
			memset(buf, 0, sizeof(buf));
			n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
			if (fd >= 0)
				close(fd);
			if (n > 0 && armed)
				injected += armed - atol(buf);
		}
		snprintf(buf, sizeof(buf), "%d", on ? TIMES : 0);
		n = ff_write_file(path, buf);
		if (n) {
			printf("# inject: cannot %s %s: %s\n", on ? "arm" : "disarm", path, strerror(n));
			_exit(1);
		}
	}
	armed = on ? TIMES : 0;
	if (!on)
		shared[2] += injected;
	return injected;
}

/*
 * Mark the calling thread as one that may fail (or not).  The file is
 * opened once per thread, while it cannot fail yet: once marked and armed,
 * an open() would fail, and so would any page fault needing a page (the
 * fault is then retried forever), so a marked thread only runs the
 * trigger between make_it_fail(1) and make_it_fail(0).
 */
static __thread int mif_fd = -1;

static void make_it_fail(int on)
{
	if (mif_fd < 0)
		mif_fd = open("/proc/thread-self/make-it-fail", O_WRONLY);
	if (mif_fd < 0 || write(mif_fd, on ? "1" : "0", 1) != 1) {
		int e = errno;

		if (on)
			printf("# inject: /proc/thread-self/make-it-fail: %s\n", strerror(e));
		_exit(1);
	}
}

/* ---- waiters --------------------------------------------------------- */

static atomic_uint words[MAXWAIT * 16];
static atomic_uint arrived;
static atomic_int wret[MAXWAIT];
static pthread_t wt[MAXWAIT];
static int nwait, waiters_fail;

static void *waiter(void *arg)
{
	long i = (long)arg;
	long r;

	make_it_fail(0);	/* opens the file while nothing can fail */
	if (waiters_fail)
		make_it_fail(1);
	atomic_fetch_add(&arrived, 1);
	do {
		r = futex(&words[i * 16], PRIV(FUTEX_WAIT), 0, NULL, NULL, 0);
	} while (r && errno == EINTR);
	atomic_store(&wret[i], r ? -errno : 0);
	return NULL;
}

static void start_waiters(int n, int fail)
{
	int i;

	nwait = n;
	waiters_fail = fail;
	atomic_store(&arrived, 0);
	for (i = 0; i < n; i++) {
		atomic_store(&words[i * 16], 0);
		atomic_store(&wret[i], 1);
		if (pthread_create(&wt[i], NULL, waiter, (void *)(long)i)) {
			printf("# inject: pthread_create failed\n");
			exit(1);
		}
	}
	while (atomic_load(&arrived) < (unsigned int)n)
		usleep(1000);
	usleep(300000);	/* let them queue; late ones are accounted as EAGAIN */
}

/* Wake every waiter with its own FUTEX_WAKE; all must be accounted for. */
static void wake_all(const char *name)
{
	long woken = 0, slept = 0, r;
	int i, bad = 0;

	for (i = 0; i < nwait; i++) {
		atomic_store(&words[i * 16], 1);
		r = futex(&words[i * 16], PRIV(FUTEX_WAKE), 1, NULL, NULL, 0);
		if (r < 0)
			bad++;
		else
			woken += r;
	}
	for (i = 0; i < nwait; i++) {
		pthread_join(wt[i], NULL);
		r = atomic_load(&wret[i]);
		if (r == 0)
			slept++;
		else if (r != -EAGAIN)
			bad++;
	}
	result(!bad && woken == slept && slept > 0,
	       "%s_waiters_woken # %d waiters: %ld woken by FUTEX_WAKE, %ld returned from a wait, %d errors",
	       name, nwait, woken, slept, bad);
}

/* ---- futex_hash ------------------------------------------------------ */

struct hs { long slots, switches, growths, migrated, failures; char origin[32]; };

static void hash_state(struct hs *h)
{
	char line[128];
	FILE *f = fopen("/proc/self/futex_hash", "r");

	memset(h, 0, sizeof(*h));
	h->slots = -1;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "slots: %ld", &h->slots);
		sscanf(line, "switches: %ld", &h->switches);
		sscanf(line, "growths: %ld", &h->growths);
		sscanf(line, "migrated: %ld", &h->migrated);
		sscanf(line, "failures: %ld", &h->failures);
		sscanf(line, "origin: %31s", h->origin);
	}
	fclose(f);
}

/*
 * Read the state into @h until it shows at least @failures failures or
 * @switches switches (-1: either not waited for), for up to 10 s.
 */
static void wait_state(struct hs *h, long failures, long switches)
{
	int i;

	for (i = 0; i < 1000; i++) {
		hash_state(h);
		if ((failures >= 0 && h->failures >= failures) ||
		    (switches >= 0 && h->switches >= switches))
			return;
		usleep(10000);
	}
}

static void same_state(const char *name, const struct hs *a, const struct hs *b)
{
	result(a->slots == b->slots && a->switches == b->switches && a->growths == b->growths &&
	       !strcmp(a->origin, b->origin),
	       "%s_table_unchanged # before: slots %ld origin %s switches %ld growths %ld; after: slots %ld origin %s switches %ld growths %ld",
	       name, a->slots, a->origin, a->switches, a->growths,
	       b->slots, b->origin, b->switches, b->growths);
}

/* ---- scenarios (each in its own process) ----------------------------- */

static long prealloc(unsigned int n)
{
	return futex(NULL, PRIV(FUTEX_PREALLOC_HASH), n, NULL, NULL, 0);
}

static long set_slots(unsigned long n)
{
	return prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, n, 0, 0);
}

/* An explicit call (prealloc or prctl) under injection. */
static int explicit_call(const char *name, int use_prctl, unsigned int start, unsigned int want)
{
	struct hs a, b;
	long r, inj;
	int e;

	if (start && set_slots(start)) {
		result(0, "%s_setup # SET_SLOTS(%u): %s", name, start, strerror(errno));
		return 1;
	}
	start_waiters(8, 0);
	hash_state(&a);
	make_it_fail(0);
	arm(1);
	make_it_fail(1);
	r = use_prctl ? set_slots(want) : prealloc(want);
	e = errno;
	make_it_fail(0);
	inj = arm(0);
	hash_state(&b);
	result(r == -1 && e == ENOMEM, "%s_enomem # returned %ld (%s), %ld faults injected", name, r,
	       r == -1 ? strerrorname_np(e) : "no error", inj);
	result(inj > 0, "%s_fault_injected # %ld faults", name, inj);
	same_state(name, &a, &b);
	wake_all(name);

	/* injection off: the same request succeeds, with waiters queued */
	start_waiters(8, 0);
	r = use_prctl ? set_slots(want) : prealloc(want);
	hash_state(&b);
	result((use_prctl ? r == 0 : r == want) && b.slots == want && b.migrated > a.migrated,
	       "%s_succeeds_without_injection # returned %ld, slots %ld (want %u), migrated %ld", name, r,
	       b.slots, want, b.migrated);
	wake_all(name);
	return 0;
}

static int sc_prealloc(void)
{
	return explicit_call("prealloc", 0, 0, 256);
}

static int sc_prctl(void)
{
	return explicit_call("prctl", 1, 16, 512);
}

/*
 * Automatic allocations: the waiters themselves may fail, their queueing
 * triggers the allocation (first op, conflict) or the growth.
 */
static int automatic(const char *name, int n, int expect_table_before)
{
	struct hs a, b;
	long inj;

	/* A table made by the worker: wait until its switch is complete */
	if (expect_table_before)
		wait_state(&a, -1, 1);
	else
		hash_state(&a);
	if (expect_table_before && a.slots <= 0) {
		result(0, "%s_setup # no private table to grow (slots %ld)", name, a.slots);
		return 1;
	}
	make_it_fail(0);
	arm(1);
	start_waiters(n, 1);
	/* one more private op of a failing task, in case a switch is pending */
	make_it_fail(1);
	futex(&words[MAXWAIT * 16 - 1], PRIV(FUTEX_WAKE), 1, NULL, NULL, 0);
	make_it_fail(0);
	/*
	 * A kernel worker performs the switch, with the mark of the task
	 * which queued it: keep injection armed until it has failed.
	 */
	wait_state(&b, a.failures + 1, -1);
	inj = arm(0);
	result(inj > 0, "%s_fault_injected # %ld faults", name, inj);
	result(b.failures > a.failures, "%s_failure_counted # failures %ld -> %ld", name,
	       a.failures, b.failures);
	same_state(name, &a, &b);
	wake_all(name);

	/*
	 * injection off: the automatic switch happens, once the back-off
	 * after a failed automatic allocation (one second) has passed
	 */
	sleep(2);
	start_waiters(n, 0);
	futex(&words[MAXWAIT * 16 - 1], PRIV(FUTEX_WAKE), 1, NULL, NULL, 0);
	wait_state(&b, -1, a.switches + 1);
	result(b.slots > (a.slots > 0 ? a.slots : 0) && b.switches > a.switches,
	       "%s_switch_without_injection # slots %ld -> %ld, switches %ld -> %ld, migrated %ld",
	       name, a.slots, b.slots, a.switches, b.switches, b.migrated);
	wake_all(name);
	return 0;
}

static int sc_first_op(void)
{
	/*
	 * The first op's allocation fails; the process then stays global
	 * until a conflict, so queue enough waiters for one afterwards.
	 */
	return automatic("first_op", CONFLICT_WAITERS, 0);
}

static int sc_conflict(void)
{
	return automatic("conflict", CONFLICT_WAITERS, 0);
}

static int sc_grow(void)
{
	/* policy 2: the first op allocates a default (16-slot) table */
	futex(&words[MAXWAIT * 16 - 1], PRIV(FUTEX_WAKE), 1, NULL, NULL, 0);
	return automatic("grow", 96, 1);
}

static void scenario(const char *name, int policy, int (*fn)(void))
{
	int status = 0, i;
	pid_t pid;

	set_int(SYSCTL_POLICY, policy);
	printf("# inject: scenario %s (policy %d)\n", name, policy);
	fflush(stdout);
	pid = fork();
	if (!pid)
		_exit(fn());
	/*
	 * A scenario stuck with injection armed (e.g. a marked task retrying
	 * a page fault) is a failure; disarm so that it can finish.
	 */
	for (i = 0; i < 3000 && waitpid(pid, &status, WNOHANG) == 0; i++)
		usleep(100000);
	if (i == 3000) {
		arm(0);
		result(0, "%s_stuck # no result after 300 s with injection armed", name);
		waitpid(pid, &status, 0);
	}
	arm(0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		result(0, "%s_completed # status %#x", name, status);
}

int main(void)
{
	static const char *const setup[][2] = {
		{ "task-filter", "Y" }, { "ignore-gfp-wait", "N" }, { "probability", "100" },
		{ "interval", "1" }, { "times", "0" }, { "verbose", "0" }, { "space", "0" },
	};
	char path[256];
	int policy, defbits, i, j;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("KTAP version 1\n");
	if (access(fi_dirs[0], F_OK) || access(fi_dirs[1], F_OK)) {
		printf("1..0 # SKIP no failslab (kernel without CONFIG_FAILSLAB/CONFIG_FAIL_PAGE_ALLOC/CONFIG_FAULT_INJECTION_DEBUG_FS)\n");
		return 4;
	}
	policy = ff_read_int(SYSCTL_POLICY, INT_MIN);
	defbits = ff_read_int(SYSCTL_DEFBITS, INT_MIN);
	if (policy == INT_MIN) {
		printf("1..0 # SKIP kernel without the fastfutex series\n");
		return 4;
	}
	shared = mmap(NULL, 3 * sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		return 2;
	for (i = 0; i < 2; i++) {
		for (j = 0; j < (int)(sizeof(setup) / sizeof(setup[0])); j++) {
			snprintf(path, sizeof(path), "%s/%s", fi_dirs[i], setup[j][0]);
			if (ff_write_file(path, setup[j][1]))
				printf("# inject: %s: %s\n", path, strerror(errno));
		}
	}
	snprintf(path, sizeof(path), "%s/min-order", fi_dirs[1]);
	ff_write_file(path, "0");
	snprintf(path, sizeof(path), "%s/ignore-gfp-highmem", fi_dirs[1]);
	ff_write_file(path, "N");
	set_int(SYSCTL_DEFBITS, 4);

	scenario("prealloc", 1, sc_prealloc);
	scenario("prctl", 1, sc_prctl);
	scenario("first_op", 2, sc_first_op);
	scenario("conflict", 1, sc_conflict);
	scenario("grow", 2, sc_grow);

	arm(0);
	set_int(SYSCTL_POLICY, policy);
	set_int(SYSCTL_DEFBITS, defbits);
	printf("1..%d\n", shared[0]);
	printf("# inject-summary: cases=%d failed=%d faults_injected=%d\n", shared[0], shared[1], shared[2]);
	return shared[1] ? 1 : 0;
}
