// SPDX-License-Identifier: GPL-2.0
/*
 * ff-pilat: a SCHED_FIFO thread's FUTEX_LOCK_PI/FUTEX_UNLOCK_PI while a
 * SCHED_OTHER sibling in the same process switches the process's futex
 * hash table under fault injection (reliability suite, issue 10 item 2:
 * no allocation, reclaim or table-mutex wait inside an ordinary futex
 * operation; a failed allocation stays with the thread that allocates).
 *
 * One process, three threads, all pinned to CPU (0), on one private PI
 * futex word:
 *
 *   F  SCHED_FIFO PRIO: sleeps PERIODS times to the next multiple of
 *      PERIOD_US, then takes and releases the lock LOOPS times with the
 *      system calls themselves (never the user-space fast path, so every
 *      operation looks its bucket up in the table being switched),
 *      alternating FUTEX_LOCK_PI and FUTEX_LOCK_PI2; every fourth period it
 *      holds the lock across a 200 us sleep (every 32nd, 3 ms), so that C
 *      blocks on it, S moves C's PI waiter, and F's FUTEX_UNLOCK_PI hands
 *      the lock over.
 *   C  SCHED_OTHER contender: FUTEX_LOCK_PI2, holds the lock for ~100 us
 *      of busy work, FUTEX_UNLOCK_PI, sleeps 300 us; when F wakes up while
 *      C holds the lock, F blocks in the kernel and boosts C.
 *   S  SCHED_OTHER sibling: switches the table over and over:
 *      PR_FUTEX_HASH_SET_SLOTS 65536, 2, 1024, FUTEX_PREALLOC_HASH(4096)
 *      (a growth), SET_SLOTS 16, ... and injects faults into its own
 *      allocations, cycling per call through: none; fail-nth (the Nth
 *      fault-injection site of the call fails, N = 1..8, through
 *      /proc/thread-self/fail-nth); make-it-fail (failslab and
 *      fail_page_alloc with task-filter, probability 100: every
 *      allocation of the call fails).  Only S is ever marked.
 *
 * Every blocking LOCK_PI has a 5 s timeout (TIMEOUT_MS).  Asserted (KTAP):
 *   pi_fifo_no_errors      every LOCK_PI/UNLOCK_PI of F returned 0: no
 *                          ENOMEM, EAGAIN, EINTR, ... leaked to it
 *   pi_word_consistent     after every lock (F and C) the word holds the
 *                          caller's TID, never FUTEX_OWNER_DIED, the lock
 *                          excluded (a holder variable), and it ends 0
 *   pi_no_lost_wakeup      no LOCK_PI timed out (F or C), C made no errors,
 *                          and the threads all finished
 *   pi_faults_injected     faults were injected into S's calls (fail-nth
 *                          fired, 'times' of both attributes went down)
 *                          and S's calls behaved: without injection they
 *                          succeed; an ENOMEM only where a fault was
 *                          injected; make-it-fail calls that need a table
 *                          fail with ENOMEM; GET_SLOTS after each call
 *                          shows the new size, or the old one after ENOMEM
 *   pi_switched            S switched tables (successful size changes > 0;
 *                          /proc/self/futex_hash counts them)
 *   pi_fifo_progress       F completed every period and lock/unlock; some
 *                          of its locks were contended and some unlocks
 *                          handed the lock over (the PI paths ran); S made
 *                          calls during F's run
 *   pi_stall_bound         worst LOCK_PI and UNLOCK_PI of F <= STALL_MS
 *                          (default 1000 ms of TCG wall clock): a stall
 *                          detector, not a speed goal (latency goals are
 *                          make bench's, under icount)
 * and a summary line for scripts/reliability-table.sh:
 *   # pilat-summary: failed= lock_pi= unlock_pi= contended= handoffs=
 *     calls= switches= enomem= faults= errors= max_lock_us= max_unlock_us=
 *
 * usage: ff-pilat [-p PERIODS] [-P PERIOD_US] [-l LOOPS] [-r PRIO] [-C CPU]
 *                 [-B STALL_MS] [-t TIMEOUT_MS]
 * Defaults: 8000 periods of 1000 us, 2 loops, priority 80, CPU 0, 1000 ms,
 * 5000 ms.  Needs root.  Exit 0, 1 on a failure, 4 (skip) without the
 * series or without fault injection (debugfs failslab, fail_page_alloc).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ff-abi.h"
#include "ff-util.h"

#define SYSCTL_POLICY	"/proc/sys/kernel/futex_private_hash"
#define SYSCTL_MAXBITS	"/proc/sys/kernel/futex_private_max_hash_bits"
#define TIMES		100000000

static const char *const fi_dirs[] = { "/sys/kernel/debug/failslab", "/sys/kernel/debug/fail_page_alloc" };

static int periods = 8000, period_us = 1000, loops = 2, prio = 80, cpu;
static int stall_ms = 1000, timeout_ms = 5000;
static int ntests, nfailed;

static uint32_t pi_word __attribute__((aligned(64)));
static atomic_int holder, stop, f_done;

static void result(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void result(int ok, const char *fmt, ...)
{
	char buf[480];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ff_out("%s %d %s", ok ? "ok" : "not ok", ++ntests, buf);
	if (!ok)
		nfailed++;
}

static int gettid_(void)
{
	return syscall(SYS_gettid);
}

/* ---- the PI lock, taken and released by F and C ---- */

struct locker {
	const char *name;
	long locks, unlocks, errors, timeouts, bad_owner, owner_died, exclusion;
	char first_err[96];	/* of a system call */
	char first_bad[96];	/* of the word or the exclusion */
};
static struct locker F = { .name = "F" }, C = { .name = "C" };

static void lerr(char *first, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void lerr(char *first, const char *fmt, ...)
{
	va_list ap;

	if (first[0])
		return;
	va_start(ap, fmt);
	vsnprintf(first, 96, fmt, ap);
	va_end(ap);
}

/* LOCK_PI (realtime timeout) or LOCK_PI2 (monotonic); 0 when locked. */
static int pi_lock(struct locker *l, int tid, int use_pi2)
{
	struct timespec ts;
	uint32_t w;
	long r;
	int e;

	clock_gettime(use_pi2 ? CLOCK_MONOTONIC : CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	r = syscall(SYS_futex, &pi_word, (use_pi2 ? FUTEX_LOCK_PI2 : FUTEX_LOCK_PI) | FUTEX_PRIVATE_FLAG,
		    0, &ts, NULL, 0);
	e = errno;
	if (r) {
		if (e == ETIMEDOUT)
			l->timeouts++;
		else
			l->errors++;
		lerr(l->first_err, "%s: %s", use_pi2 ? "FUTEX_LOCK_PI2" : "FUTEX_LOCK_PI", strerrorname_np(e));
		return -1;
	}
	l->locks++;
	w = __atomic_load_n(&pi_word, __ATOMIC_ACQUIRE);
	if ((int)(w & FUTEX_TID_MASK) != tid) {
		l->bad_owner++;
		lerr(l->first_bad, "after lock: word %#x, own TID %d", w, tid);
	}
	if (w & FUTEX_OWNER_DIED) {
		l->owner_died++;
		lerr(l->first_bad, "after lock: FUTEX_OWNER_DIED in %#x", w);
	}
	e = 0;
	if (!atomic_compare_exchange_strong(&holder, &e, tid)) {
		l->exclusion++;
		lerr(l->first_bad, "lock held by %d as well", e);
	}
	return 0;
}

static int pi_unlock(struct locker *l, int tid)
{
	int e = tid;

	if (!atomic_compare_exchange_strong(&holder, &e, 0)) {
		l->exclusion++;
		lerr(l->first_bad, "holder %d at unlock, not %d", e, tid);
	}
	if (syscall(SYS_futex, &pi_word, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0)) {
		l->errors++;
		lerr(l->first_err, "FUTEX_UNLOCK_PI: %s", strerrorname_np(errno));
		return -1;
	}
	l->unlocks++;
	return 0;
}

/* F: the SCHED_FIFO thread */
static uint64_t *lock_lat, *unlock_lat;
static long nlock, nunlock, contended, handoffs, f_periods;
static uint64_t max_lock_cont, max_lock_unc, max_unlock_hand, max_unlock_plain;
static long s_calls_at_f_start, s_calls_at_f_end;
static atomic_long s_calls;

static void *fifo_thread(void *p)
{
	uint64_t target, now, t0, t1, period = (uint64_t)period_us * 1000;
	struct timespec t, hold = { 0, 200000 }, long_hold = { 0, 3000000 };
	int tid = gettid_(), i, k, cont, hand;

	(void)p;
	s_calls_at_f_start = atomic_load(&s_calls);
	target = (ff_now_ns() / 1000000ull + 2) * 1000000ull;
	for (i = 0; i < periods; i++) {
		target += period;
		t.tv_sec = target / 1000000000ull;
		t.tv_nsec = target % 1000000000ull;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
			;
		for (k = 0; k < loops; k++) {
			cont = __atomic_load_n(&pi_word, __ATOMIC_RELAXED) != 0;
			t0 = ff_now_ns();
			if (pi_lock(&F, tid, (i + k) & 1))
				continue;
			t1 = ff_now_ns() - t0;
			lock_lat[nlock++] = t1;
			contended += cont;
			if (cont && t1 > max_lock_cont)
				max_lock_cont = t1;
			if (!cont && t1 > max_lock_unc)
				max_lock_unc = t1;
			/* let C queue on it, for S to move its PI waiter */
			if (k == 0 && i % 32 == 16)
				nanosleep(&long_hold, NULL);
			else if (k == 0 && i % 4 == 0)
				nanosleep(&hold, NULL);
			hand = !!(__atomic_load_n(&pi_word, __ATOMIC_RELAXED) & FUTEX_WAITERS);
			t0 = ff_now_ns();
			if (pi_unlock(&F, tid))
				continue;
			t1 = ff_now_ns() - t0;
			unlock_lat[nunlock++] = t1;
			handoffs += hand;
			if (hand && t1 > max_unlock_hand)
				max_unlock_hand = t1;
			if (!hand && t1 > max_unlock_plain)
				max_unlock_plain = t1;
		}
		f_periods++;
		now = ff_now_ns();
		while (now > target + period)
			target += period;
	}
	s_calls_at_f_end = atomic_load(&s_calls);
	atomic_store(&f_done, 1);
	return NULL;
}

/* C: the SCHED_OTHER contender */
static void *contender_thread(void *p)
{
	struct timespec nap = { 0, 300000 };
	int tid = gettid_();
	uint64_t t0;

	(void)p;
	while (!atomic_load(&stop)) {
		if (pi_lock(&C, tid, 1)) {
			if (C.errors + C.timeouts > 3)
				break;
			continue;
		}
		t0 = ff_now_ns();
		while (ff_now_ns() - t0 < 100000)
			;
		pi_unlock(&C, tid);
		nanosleep(&nap, NULL);
	}
	return NULL;
}

/* ---- S: the sibling that switches under fault injection ---- */

struct sop {
	int prealloc;
	unsigned long slots;
};
static const struct sop sops[] = { { 0, 65536 }, { 0, 2 }, { 0, 1024 }, { 1, 4096 }, { 0, 16 } };
#define NSOPS	((int)(sizeof(sops) / sizeof(sops[0])))

static long s_ok, s_enomem, s_switches, s_nth_set, s_nth_fired, s_mif_calls, s_bad;
static char s_first_bad[160];

static void sbad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sbad(const char *fmt, ...)
{
	va_list ap;

	if (!s_bad++) {
		va_start(ap, fmt);
		vsnprintf(s_first_bad, sizeof(s_first_bad), fmt, ap);
		va_end(ap);
	}
}

static long get_slots(void)
{
	return prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_GET_SLOTS, 0, 0, 0);
}

static void *sibling_thread(void *p)
{
	static const char *const mode_name[] = { "none", "fail-nth", "make-it-fail" };
	int mif = open("/proc/thread-self/make-it-fail", O_WRONLY);
	int nth = open("/proc/thread-self/fail-nth", O_RDWR);
	char buf[16];
	long i, r, before, after, want;
	int mode, n, e, fired, change;

	(void)p;
	if (mif < 0 || nth < 0) {
		sbad("open make-it-fail/fail-nth: %s", strerror(errno));
		return NULL;
	}
	for (i = 0; !atomic_load(&stop); i++) {
		const struct sop *op = &sops[i % NSOPS];

		mode = i % 3;
		n = 1 + (i / (3 * NSOPS)) % 8;
		before = get_slots();
		want = op->prealloc ? (before > (long)op->slots ? before : (long)op->slots) : (long)op->slots;
		change = want != before;
		fired = 0;
		if (mode == 1) {
			snprintf(buf, sizeof(buf), "%d", n);
			if (write(nth, buf, strlen(buf)) < 0) {
				sbad("write fail-nth: %s", strerror(errno));
				break;
			}
			s_nth_set++;
		} else if (mode == 2) {
			if (write(mif, "1", 1) != 1) {
				sbad("write make-it-fail: %s", strerror(errno));
				break;
			}
			s_mif_calls++;
		}
		if (op->prealloc)
			r = syscall(SYS_futex, NULL, FUTEX_PREALLOC_HASH | FUTEX_PRIVATE_FLAG,
				    op->slots, NULL, NULL, 0);
		else
			r = prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, op->slots, 0, 0);
		e = errno;
		if (mode == 2 && write(mif, "0", 1) != 1) {
			sbad("write make-it-fail 0: %s", strerror(errno));
			break;
		}
		if (mode == 1) {
			memset(buf, 0, sizeof(buf));
			if (pread(nth, buf, sizeof(buf) - 1, 0) <= 0) {
				sbad("read fail-nth: %s", strerror(errno));
				break;
			}
			fired = atoi(buf) == 0;
			if (!fired && write(nth, "0", 1) != 1) {
				sbad("reset fail-nth: %s", strerror(errno));
				break;
			}
			s_nth_fired += fired;
		}
		after = get_slots();
		atomic_store(&s_calls, i + 1);

		if ((op->prealloc && r == want) || (!op->prealloc && r == 0)) {
			s_ok++;
			s_switches += change;
			if (after != want)
				sbad("call %ld %s(%lu) mode %s: returned %ld but GET_SLOTS %ld (before %ld)",
				     i, op->prealloc ? "PREALLOC" : "SET_SLOTS", op->slots, mode_name[mode],
				     r, after, before);
			if (mode == 2 && change)
				sbad("call %ld %s(%lu) under make-it-fail succeeded (%ld -> %ld)",
				     i, op->prealloc ? "PREALLOC" : "SET_SLOTS", op->slots, before, after);
		} else if (r == -1 && e == ENOMEM && (mode == 2 || fired) && change) {
			s_enomem++;
			if (after != before)
				sbad("call %ld %s(%lu) mode %s: ENOMEM but GET_SLOTS %ld -> %ld",
				     i, op->prealloc ? "PREALLOC" : "SET_SLOTS", op->slots, mode_name[mode],
				     before, after);
		} else {
			sbad("call %ld %s(%lu) mode %s (n %d, fired %d): returned %ld (%s), GET_SLOTS %ld -> %ld",
			     i, op->prealloc ? "PREALLOC" : "SET_SLOTS", op->slots, mode_name[mode], n, fired,
			     r, r == -1 ? strerrorname_np(e) : "-", before, after);
		}
	}
	close(mif);
	close(nth);
	return NULL;
}

/* ---- fault injection set-up ---- */

static int fi_write(const char *dir, const char *file, const char *val)
{
	char path[256];
	int e;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	e = ff_write_file(path, val);
	if (e)
		ff_out("# pilat: %s: %s", path, strerror(e));
	return e;
}

static long fi_times_left(void)
{
	char path[256];
	long left = 0;
	int i;

	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/times", fi_dirs[i]);
		left += ff_read_int(path, 0);
	}
	return left;
}

static void hash_stats(long *switches, long *migrated)
{
	char line[128];
	FILE *f = fopen("/proc/self/futex_hash", "r");

	*switches = *migrated = -1;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "switches: %ld", switches);
		sscanf(line, "migrated: %ld", migrated);
	}
	fclose(f);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void restore_sysctl(const char *path, int v)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d", v);
	if (ff_write_file(path, buf))
		ff_out("# pilat: cannot restore %s to %d", path, v);
}

static int join_within(pthread_t th, int secs, const char *what)
{
	struct timespec ts;
	int e;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += secs;
	e = pthread_timedjoin_np(th, NULL, &ts);
	if (e)
		ff_out("# pilat: thread %s did not finish within %d s: %s", what, secs, strerror(e));
	return e;
}

int main(int argc, char **argv)
{
	static const char *const setup[][2] = {
		{ "task-filter", "Y" }, { "ignore-gfp-wait", "N" }, { "probability", "100" },
		{ "interval", "1" }, { "times", "0" }, { "verbose", "0" }, { "space", "0" },
	};
	struct sched_param sp;
	pthread_attr_t attr;
	pthread_t tf, tc, ts;
	int old_policy, old_maxbits, opt, i, j, e, joined = 1;
	long faults, sw_stat, migrated, total;
	uint64_t bound, max_lock = 0, max_unlock = 0, p99_lock = 0, p99_unlock = 0;
	cpu_set_t set;

	setvbuf(stdout, NULL, _IONBF, 0);
	while ((opt = getopt(argc, argv, "p:P:l:r:C:B:t:")) != -1) {
		switch (opt) {
		case 'p': periods = atoi(optarg); break;
		case 'P': period_us = atoi(optarg); break;
		case 'l': loops = atoi(optarg); break;
		case 'r': prio = atoi(optarg); break;
		case 'C': cpu = atoi(optarg); break;
		case 'B': stall_ms = atoi(optarg); break;
		case 't': timeout_ms = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: ff-pilat [-p PERIODS] [-P PERIOD_US] [-l LOOPS] [-r PRIO] [-C CPU]\n"
				"                [-B STALL_MS] [-t TIMEOUT_MS]\n");
			return 2;
		}
	}
	if (periods < 1 || period_us < 1 || loops < 1 || prio < 1 || prio > 99 || stall_ms < 1 ||
	    timeout_ms < 1)
		return 2;
	bound = (uint64_t)stall_ms * 1000000ull;
	ff_out("KTAP version 1");
	if (access(SYSCTL_POLICY, F_OK)) {
		ff_out("1..0 # SKIP kernel without the fastfutex series (no %s)", SYSCTL_POLICY);
		return 4;
	}
	if (access(fi_dirs[0], F_OK) || access(fi_dirs[1], F_OK)) {
		ff_out("1..0 # SKIP no failslab/fail_page_alloc in debugfs");
		return 4;
	}
	old_policy = ff_read_int(SYSCTL_POLICY, 1);
	old_maxbits = ff_read_int(SYSCTL_MAXBITS, -1);
	ff_write_file(SYSCTL_POLICY, "1");
	if (old_maxbits >= 0 && old_maxbits < 16)
		ff_write_file(SYSCTL_MAXBITS, "16");
	for (i = 0; i < 2; i++)
		for (j = 0; j < (int)(sizeof(setup) / sizeof(setup[0])); j++)
			fi_write(fi_dirs[i], setup[j][0], setup[j][1]);
	fi_write(fi_dirs[1], "min-order", "0");
	fi_write(fi_dirs[1], "ignore-gfp-highmem", "N");

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		ff_out("# pilat: sched_setaffinity CPU %d: %s (not pinned)", cpu, strerror(errno));
	lock_lat = calloc((size_t)periods * loops, sizeof(*lock_lat));
	unlock_lat = calloc((size_t)periods * loops, sizeof(*unlock_lat));
	if (!lock_lat || !unlock_lat)
		return 1;
	/* no page faults (which could need a page) while S is marked */
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		ff_out("# pilat: mlockall: %s", strerror(errno));

	for (i = 0; i < 2; i++) {
		char v[16];

		snprintf(v, sizeof(v), "%d", TIMES);
		fi_write(fi_dirs[i], "times", v);
	}
	if (pthread_create(&ts, NULL, sibling_thread, NULL) ||
	    pthread_create(&tc, NULL, contender_thread, NULL))
		return 1;
	while (atomic_load(&s_calls) < 1)
		usleep(1000);
	pthread_attr_init(&attr);
	sp.sched_priority = prio;
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
	pthread_attr_setschedparam(&attr, &sp);
	e = pthread_create(&tf, &attr, fifo_thread, NULL);
	pthread_attr_destroy(&attr);
	if (e) {
		ff_out("# pilat: SCHED_FIFO %d thread: %s", prio, strerror(e));
		atomic_store(&stop, 1);
		f_periods = -1;
	} else if (join_within(tf, 120 + (int)((uint64_t)periods * period_us * 5 / 1000000), "F")) {
		joined = 0;
	}
	atomic_store(&stop, 1);
	if (joined && join_within(tc, 60, "C"))
		joined = 0;
	if (joined && join_within(ts, 300, "S"))
		joined = 0;
	total = (long)2 * TIMES;
	faults = total - fi_times_left();
	for (i = 0; i < 2; i++)
		fi_write(fi_dirs[i], "times", "0");
	hash_stats(&sw_stat, &migrated);
	restore_sysctl(SYSCTL_POLICY, old_policy);
	if (old_maxbits >= 0 && old_maxbits < 16)
		restore_sysctl(SYSCTL_MAXBITS, old_maxbits);
	if (!joined) {
		result(0, "pi_threads_finished # a thread is stuck (see above)");
		ff_out("1..%d", ntests);
		ff_out("# pilat-summary: failed=%d stuck=1", nfailed);
		_exit(1);
	}

	for (i = 0; i < nlock; i++)
		if (lock_lat[i] > max_lock)
			max_lock = lock_lat[i];
	for (i = 0; i < nunlock; i++)
		if (unlock_lat[i] > max_unlock)
			max_unlock = unlock_lat[i];
	if (nlock) {
		qsort(lock_lat, nlock, sizeof(*lock_lat), cmp_u64);
		p99_lock = lock_lat[(size_t)(0.99 * (nlock - 1))];
	}
	if (nunlock) {
		qsort(unlock_lat, nunlock, sizeof(*unlock_lat), cmp_u64);
		p99_unlock = unlock_lat[(size_t)(0.99 * (nunlock - 1))];
	}

	result(!F.errors && !F.timeouts && nlock == (long)periods * loops && nunlock == nlock,
	       "pi_fifo_no_errors # F: %ld LOCK_PI/LOCK_PI2, %ld UNLOCK_PI, %ld errors, %ld timeouts%s%s",
	       nlock, nunlock, F.errors, F.timeouts, F.first_err[0] ? "; first: " : "", F.first_err);
	result(!F.bad_owner && !C.bad_owner && !F.owner_died && !C.owner_died && !F.exclusion &&
	       !C.exclusion && pi_word == 0,
	       "pi_word_consistent # owner TID right after %ld + %ld locks (F + C): %ld wrong, %ld FUTEX_OWNER_DIED, %ld exclusion violations; final word %#x%s%s%s%s",
	       F.locks, C.locks, F.bad_owner + C.bad_owner, F.owner_died + C.owner_died,
	       F.exclusion + C.exclusion, pi_word, F.first_bad[0] ? "; F: " : "", F.first_bad,
	       C.first_bad[0] ? "; C: " : "", C.first_bad);
	result(!F.timeouts && !C.timeouts && !C.errors && C.locks > 0 && C.unlocks == C.locks,
	       "pi_no_lost_wakeup # LOCK_PI timeouts: F %ld, C %ld; C: %ld locks, %ld unlocks, %ld errors%s%s",
	       F.timeouts, C.timeouts, C.locks, C.unlocks, C.errors, C.first_err[0] ? "; first: " : "",
	       C.first_err);
	result(!s_bad && faults > 0 && s_nth_fired > 0 && s_enomem > 0 && s_ok > 0,
	       "pi_faults_injected # S: %ld calls, %ld succeeded, %ld ENOMEM; %ld faults injected (times), fail-nth fired %ld of %ld, %ld make-it-fail calls; %ld misbehaved%s%s",
	       atomic_load(&s_calls), s_ok, s_enomem, faults, s_nth_fired, s_nth_set, s_mif_calls, s_bad,
	       s_bad ? "; first: " : "", s_first_bad);
	result(s_switches > 0 && sw_stat >= s_switches,
	       "pi_switched # S changed the table size %ld times; /proc/self/futex_hash: switches %ld, migrated %ld",
	       s_switches, sw_stat, migrated);
	result(f_periods == periods && nlock == (long)periods * loops && contended > 0 && handoffs > 0 &&
	       s_calls_at_f_end > s_calls_at_f_start,
	       "pi_fifo_progress # F: %ld/%d periods, %ld/%ld lock/unlock, %ld contended, %ld handed over; S: %ld calls during F's run",
	       f_periods, periods, nlock, (long)periods * loops, contended, handoffs,
	       s_calls_at_f_end - s_calls_at_f_start);
	result(nlock && max_lock <= bound && max_unlock <= bound,
	       "pi_stall_bound # worst LOCK_PI %.0f us (p99 %.0f; contended %.0f, uncontended %.0f), worst UNLOCK_PI %.0f us (p99 %.0f; handing over %.0f, plain %.0f); stall bound %d ms of TCG wall clock, not a speed goal",
	       max_lock / 1e3, p99_lock / 1e3, max_lock_cont / 1e3, max_lock_unc / 1e3, max_unlock / 1e3,
	       p99_unlock / 1e3, max_unlock_hand / 1e3, max_unlock_plain / 1e3, stall_ms);
	ff_out("1..%d", ntests);
	ff_out("# pilat-summary: failed=%d lock_pi=%ld unlock_pi=%ld contended=%ld handoffs=%ld calls=%ld switches=%ld enomem=%ld faults=%ld errors=%ld max_lock_us=%.0f max_unlock_us=%.0f",
	       nfailed, nlock, nunlock, contended, handoffs, atomic_load(&s_calls), s_switches, s_enomem,
	       faults, F.errors + F.timeouts + C.errors + C.timeouts + s_bad, max_lock / 1e3,
	       max_unlock / 1e3);
	return nfailed ? 1 : 0;
}
