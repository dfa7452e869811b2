// SPDX-License-Identifier: GPL-2.0
/*
 * ff-rtswitch: a SCHED_FIFO thread keeps making futex operations while an
 * ordinary process on the same CPU makes the kernel switch futex hash
 * tables by every path (reliability suite, issue 10: the switch-latency
 * case, on the debug and the PREEMPT_RT kernels).
 *
 * For each case a trigger (SCHED_OTHER, nice 0; ff-switch.h, the same
 * triggers as the ff-rtlat benchmark, with verification on) loops on one
 * switch path, and a measurer process, forked afresh for the case, runs a
 * SCHED_FIFO thread (priority PRIO) and a SCHED_FIFO helper (PRIO - 1).
 * Everything is pinned to CPU (0).  The FIFO thread sleeps PERIODS times
 * to the next multiple of PERIOD_US (clock_nanosleep, TIMER_ABSTIME) and
 * after each wake-up makes PINGS wait/wake round trips with the helper on
 * two private futex words: it stores the round's number in the first word
 * and FUTEX_WAKEs it, then FUTEX_WAITs until the helper has stored the
 * number in the second word and FUTEX_WAKEd it.  While the FIFO thread and
 * its helper sleep, the trigger has the CPU.  Every FUTEX_WAIT has a
 * timeout (TIMEOUT_MS): one that expires while the word already holds what
 * it waited for is a lost wake-up, one that expires with the word unchanged
 * a stall of the partner.  Cases (policy in brackets):
 *
 *   prctl          SET_SLOTS toggling 65536 <-> 2 in the trigger (1)
 *   prctl-waiters  the same with WAITERS (1000) of the trigger's threads in
 *                  FUTEX_WAIT on distinct private words (1)
 *   fork-prealloc  children FUTEX_PREALLOC_HASH(16) (1)
 *   fork-firstop   children make one private op (2)
 *   fork-conflict  children conflict with a neighbour's 4096 waiters in
 *                  the global table (1)
 *   fork-thread    children create a second thread (3)
 *   growth         children grow their table by colliding waiters (2)
 *   self-prctl     no trigger process: a SCHED_OTHER thread of the
 *                  measuring process itself toggles its table 65536 <-> 2,
 *                  so the ping-pong's own waiters are moved under it (1)
 *   quiet          (not by default) the reference: the trigger loops on
 *                  getppid(); its _switched result is a SKIP
 *
 * The measurer starts on the global table (its FIFO threads never make
 * automatic switches), so in the other cases its futexes share global
 * buckets with the trigger's waiters while those move out.
 *
 * Asserted per case (KTAP, one line each, the plan at the end):
 *   <case>_no_lost_wakeup   every FUTEX_WAIT was woken: no timeout, no
 *                           error (a spurious return is counted, not failed)
 *   <case>_switched         the trigger made triggers and every one of them
 *                           switched (SET_SLOTS returned 0 and GET_SLOTS
 *                           reports the size; the child had a table, a
 *                           grown one for growth)
 *   <case>_fifo_progress    at least PERIODS periods, PINGS round trips in
 *                           each, and at least MIN_SWITCHES switches made
 *                           while the FIFO thread ran (it runs on until
 *                           then, up to 10 * PERIODS periods: a 65536-slot
 *                           toggle takes 0.1-1 s on the debug kernels)
 *   <case>_stall_bound      worst wake-up lateness and worst round trip
 *                           <= STALL_MS (default 1000 ms of TCG wall
 *                           clock).  A stall detector, not a speed goal:
 *                           the latency goals are make bench's (ff-rtlat,
 *                           under icount).
 * and a summary line for scripts/reliability-table.sh:
 *   # rtswitch-summary: cases= failed= triggers= switched= roundtrips= lost=
 *     stalls= errors= max_late_us= max_rtt_us=
 *
 * usage: ff-rtswitch [-c CASES] [-p PERIODS] [-P PERIOD_US] [-n PINGS]
 *                    [-w WAITERS] [-r PRIO] [-C CPU] [-B STALL_MS]
 *                    [-t TIMEOUT_MS] [-m MIN_SWITCHES]
 * Defaults: all cases, 1500 periods of 1000 us, 2 pings, 1000 waiters,
 * priority 80, CPU 0, 1000 ms, 5000 ms, 2.  Needs root.  Exit status 0,
 * 1 on a failure, 4 (skip) on a kernel without the series.  The sysctls it
 * changes are restored.
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
#include "ff-switch.h"

#define ALL_CASES	"prctl,prctl-waiters,fork-prealloc,fork-firstop,fork-conflict," \
			"fork-thread,growth,self-prctl"

static int periods = 1500, period_us = 1000, pings = 2, prio = 80, cpu;
static int stall_ms = 1000, timeout_ms = 5000, min_switches = 2;
static int need_switches;	/* of the case: min_switches, 0 for quiet */
static int ntests, nfailed;

/* What the measurer process reports (MAP_SHARED) */
struct result {
	long periods, roundtrips;
	long lost_fifo, lost_helper;		/* timed out, word already changed */
	long stalled_fifo, stalled_helper;	/* timed out, word unchanged */
	long spurious, errors, woke;
	int first_errno;
	char first_err[64];
	uint64_t max_late, p99_late, max_rtt, p99_rtt;	/* ns */
	long trig0, trig1, sw0, sw1;		/* trigger counts around the run */
	int aborted;				/* gave up after repeated timeouts */
};
static struct result *res;

static void result(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void result(int ok, const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ff_out("%s %d %s", ok ? "ok" : "not ok", ++ntests, buf);
	if (!ok)
		nfailed++;
}

/* ---- the measurer process ---- */

static uint32_t w_ping __attribute__((aligned(64)));	/* FIFO -> helper */
static uint32_t w_pong __attribute__((aligned(64)));	/* helper -> FIFO */
static atomic_int helper_stop;
static uint64_t *late, *rtt;

#define MAX_FACTOR	10

static int max_periods(void)
{
	return periods * MAX_FACTOR;
}

static void note_error(const char *op, int e)
{
	if (!__atomic_fetch_add(&res->errors, 1, __ATOMIC_RELAXED)) {
		res->first_errno = e;
		snprintf(res->first_err, sizeof(res->first_err), "%s: %s", op, strerrorname_np(e));
	}
}

/*
 * Wait until *w >= want (or *stop); count what each timeout means.
 * Return 0, or -1 after three timeouts in a row (the partner is gone).
 */
static int wait_for(uint32_t *w, uint32_t want, atomic_int *stop, long *lost, long *stalled)
{
	struct timespec to = { timeout_ms / 1000, (timeout_ms % 1000) * 1000000L };
	int timeouts = 0;
	uint32_t v;

	for (;;) {
		v = __atomic_load_n(w, __ATOMIC_ACQUIRE);
		if ((int32_t)(v - want) >= 0 || (stop && atomic_load(stop)))
			return 0;
		if (!syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, v, &to, NULL, 0)) {
			if ((int32_t)(__atomic_load_n(w, __ATOMIC_ACQUIRE) - want) < 0 &&
			    !(stop && atomic_load(stop)))
				__atomic_add_fetch(&res->spurious, 1, __ATOMIC_RELAXED);
			continue;
		}
		if (errno == EAGAIN || errno == EINTR)
			continue;
		if (errno != ETIMEDOUT) {
			note_error("FUTEX_WAIT", errno);
			return -1;
		}
		if ((int32_t)(__atomic_load_n(w, __ATOMIC_ACQUIRE) - want) >= 0)
			(*lost)++;	/* the value came, the wake-up did not */
		else if (stop && atomic_load(stop))
			return 0;
		else
			(*stalled)++;
		if (++timeouts == 3)
			return -1;
	}
}

static void wake(uint32_t *w)
{
	long r = syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);

	if (r < 0)
		note_error("FUTEX_WAKE", errno);
	else
		__atomic_add_fetch(&res->woke, r, __ATOMIC_RELAXED);
}

static void *helper_thread(void *p)
{
	uint32_t seen = 0, v;

	(void)p;
	for (;;) {
		if (wait_for(&w_ping, seen + 1, &helper_stop, &res->lost_helper, &res->stalled_helper))
			break;
		if (atomic_load(&helper_stop))
			break;
		v = __atomic_load_n(&w_ping, __ATOMIC_ACQUIRE);
		__atomic_store_n(&w_pong, v, __ATOMIC_RELEASE);
		wake(&w_pong);
		seen = v;
	}
	return NULL;
}

static void *fifo_thread(void *p)
{
	uint64_t target, now, t0, period = (uint64_t)period_us * 1000;
	uint32_t seq = 0;
	struct timespec t;
	int i, k;

	(void)p;
	res->trig0 = atomic_load(&ff_sw->triggers);
	res->sw0 = atomic_load(&ff_sw->switched);
	target = (ff_now_ns() / 1000000ull + 2) * 1000000ull;
	/*
	 * At least PERIODS periods, and on until MIN_SWITCHES switches were
	 * made meanwhile (a 65536-slot toggle takes long on a debug kernel
	 * under TCG), up to MAX_FACTOR * PERIODS.
	 */
	for (i = 0; i < max_periods() && !res->aborted; i++) {
		if (i >= periods && atomic_load(&ff_sw->switched) - res->sw0 >= need_switches)
			break;
		target += period;
		t.tv_sec = target / 1000000000ull;
		t.tv_nsec = target % 1000000000ull;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
			;
		now = ff_now_ns();
		late[i] = now > target ? now - target : 0;
		for (k = 0; k < pings; k++) {
			t0 = ff_now_ns();
			__atomic_store_n(&w_ping, ++seq, __ATOMIC_RELEASE);
			wake(&w_ping);
			if (wait_for(&w_pong, seq, NULL, &res->lost_fifo, &res->stalled_fifo)) {
				res->aborted = 1;
				break;
			}
			rtt[res->roundtrips++] = ff_now_ns() - t0;
		}
		res->periods++;
		/* overran by whole periods: skip them, cyclictest-style */
		now = ff_now_ns();
		while (now > target + period)
			target += period;
	}
	res->trig1 = atomic_load(&ff_sw->triggers);
	res->sw1 = atomic_load(&ff_sw->switched);
	return NULL;
}

static void *self_trigger_thread(void *p)
{
	(void)p;
	return (void *)(long)ff_sw_trigger("prctl");
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int start_fifo(pthread_t *th, int pr, void *(*fn)(void *))
{
	struct sched_param sp = { .sched_priority = pr };
	pthread_attr_t attr;
	int e;

	pthread_attr_init(&attr);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
	pthread_attr_setschedparam(&attr, &sp);
	e = pthread_create(th, &attr, fn, NULL);
	pthread_attr_destroy(&attr);
	if (e)
		note_error("pthread_create SCHED_FIFO", e);
	return e;
}

static int measurer(int self)
{
	pthread_t fifo, helper, trig;
	long i;

	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		ff_out("# rtswitch: mlockall: %s", strerror(errno));
	late = calloc(max_periods(), sizeof(*late));
	rtt = calloc((size_t)max_periods() * pings, sizeof(*rtt));
	if (!late || !rtt)
		return 1;
	if (self) {
		if (pthread_create(&trig, NULL, self_trigger_thread, NULL))
			return 1;
		while (!atomic_load(&ff_sw->ready))
			usleep(1000);
		usleep(20000);
	}
	if (start_fifo(&helper, prio - 1, helper_thread))
		return 1;
	if (start_fifo(&fifo, prio, fifo_thread)) {
		atomic_store(&helper_stop, 1);
		pthread_join(helper, NULL);
		return 1;
	}
	pthread_join(fifo, NULL);
	atomic_store(&helper_stop, 1);
	__atomic_add_fetch(&w_ping, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &w_ping, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	pthread_join(helper, NULL);
	if (self) {
		atomic_store(&ff_sw->stop, 1);
		pthread_join(trig, NULL);
	}
	for (i = 0; i < res->periods; i++)
		if (late[i] > res->max_late)
			res->max_late = late[i];
	for (i = 0; i < res->roundtrips; i++)
		if (rtt[i] > res->max_rtt)
			res->max_rtt = rtt[i];
	if (res->periods) {
		qsort(late, res->periods, sizeof(*late), cmp_u64);
		res->p99_late = late[(size_t)(0.99 * (res->periods - 1))];
	}
	if (res->roundtrips) {
		qsort(rtt, res->roundtrips, sizeof(*rtt), cmp_u64);
		res->p99_rtt = rtt[(size_t)(0.99 * (res->roundtrips - 1))];
	}
	return 0;
}

/* ---- the cases ---- */

/* Wait for @pid up to @secs; SIGKILL it after that. 0 if it exited 0. */
static int reap(pid_t pid, int secs, const char *what, const char *c)
{
	uint64_t t0 = ff_now_ns();
	int st = 0;

	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (ff_now_ns() - t0 > (uint64_t)secs * 1000000000ull) {
			ff_out("# rtswitch: %s: the %s did not finish in %d s, killed", c, what, secs);
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		usleep(10000);
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		ff_out("# rtswitch: %s: the %s failed (status %#x)", c, what, st);
		return -1;
	}
	return 0;
}

static long tot_triggers, tot_switched, tot_rt, tot_lost, tot_stalls, tot_errors;
static uint64_t worst_late, worst_rtt;

static void run_case(const char *c)
{
	int self = !strcmp(c, "self-prctl"), quiet = !strcmp(c, "quiet"), budget, trig_ok = 1, meas_ok;
	pid_t trig = 0, neigh = 0, meas;
	uint64_t t0, bound = (uint64_t)stall_ms * 1000000ull;
	long lost, stalled, during;
	char toggles[96] = "";

	ff_out("# rtswitch: case %s (policy %d)", c, self ? 1 : ff_sw_policy_for(c));
	memset(ff_sw, 0, sizeof(*ff_sw));
	memset(res, 0, sizeof(*res));
	need_switches = quiet ? 0 : min_switches;
	if (!strcmp(c, "fork-conflict")) {
		ff_sw_set_sysctl(FF_SW_SYSCTL_POLICY, 0);
		neigh = ff_sw_start_neighbour();
		if (neigh < 0) {
			result(0, "%s_setup # the neighbour did not start", c);
			return;
		}
	}
	ff_sw_set_sysctl(FF_SW_SYSCTL_POLICY, self ? 1 : ff_sw_policy_for(c));
	if (!self) {
		trig = fork();
		if (trig < 0) {
			result(0, "%s_setup # fork: %s", c, strerror(errno));
			goto out;
		}
		if (trig == 0)
			_exit(ff_sw_trigger(c));
		t0 = ff_now_ns();
		while (!atomic_load(&ff_sw->ready) && ff_now_ns() - t0 < 300000000000ull) {
			if (waitpid(trig, NULL, WNOHANG) == trig) {
				result(0, "%s_setup # the trigger exited during its set-up", c);
				trig = 0;
				goto out;
			}
			usleep(10000);
		}
		if (!atomic_load(&ff_sw->ready)) {
			result(0, "%s_setup # the trigger did not get ready in 300 s", c);
			goto out;
		}
		usleep(20000);	/* the trigger is in its loop */
	}

	meas = fork();
	if (meas < 0) {
		result(0, "%s_setup # fork: %s", c, strerror(errno));
		goto out;
	}
	if (meas == 0)
		_exit(measurer(self));
	/* the run takes periods * period; a stalled one is killed */
	budget = 120 + (int)((uint64_t)max_periods() * period_us * 2 / 1000000);
	if (budget > 600)
		budget = 600;
	meas_ok = !reap(meas, budget, "measurer", c);
	atomic_store(&ff_sw->stop, 1);
	if (trig)
		trig_ok = !reap(trig, 300, "trigger", c);
	trig = 0;

	if (atomic_load(&ff_sw->switched) && (!strncmp(c, "prctl", 5) || self))
		snprintf(toggles, sizeof(toggles), "; SET_SLOTS took %.0f ms on average, %.0f ms at worst",
			 atomic_load(&ff_sw->toggle_ns) / 1e6 / atomic_load(&ff_sw->switched),
			 atomic_load(&ff_sw->toggle_max_ns) / 1e6);
	lost = res->lost_fifo + res->lost_helper;
	stalled = res->stalled_fifo + res->stalled_helper;
	during = res->sw1 - res->sw0;
	tot_triggers += atomic_load(&ff_sw->triggers);
	tot_switched += atomic_load(&ff_sw->switched);
	tot_rt += res->roundtrips;
	tot_lost += lost;
	tot_stalls += stalled;
	tot_errors += res->errors;
	if (res->max_late > worst_late)
		worst_late = res->max_late;
	if (res->max_rtt > worst_rtt)
		worst_rtt = res->max_rtt;

	result(meas_ok && !lost && !stalled && !res->errors && !res->aborted,
	       "%s_no_lost_wakeup # %ld round trips, %ld woken by FUTEX_WAKE; lost wake-ups %ld (fifo %ld, helper %ld), stalled partner %ld, spurious %ld, errors %ld%s%s",
	       c, res->roundtrips, res->woke, lost, res->lost_fifo, res->lost_helper, stalled,
	       res->spurious, res->errors, res->errors ? " first " : "", res->first_err);
	if (quiet)
		result(trig_ok, "%s_switched # SKIP the reference case makes no switches", c);
	else
		result(trig_ok && atomic_load(&ff_sw->triggers) > 0 &&
		       atomic_load(&ff_sw->switched) == atomic_load(&ff_sw->triggers),
		       "%s_switched # %ld triggers, %ld switched (last prctl errno %d, last GET_SLOTS after a failed toggle %ld)%s",
		       c, atomic_load(&ff_sw->triggers), atomic_load(&ff_sw->switched),
		       atomic_load(&ff_sw->last_errno), atomic_load(&ff_sw->last_slots), toggles);
	result(meas_ok && !res->aborted && res->periods >= periods &&
	       res->roundtrips == res->periods * pings && (quiet || during >= min_switches),
	       "%s_fifo_progress # %ld periods (>= %d), %ld/%ld round trips, %ld switches during the FIFO run (>= %d)",
	       c, res->periods, periods, res->roundtrips, res->periods * pings, during,
	       quiet ? 0 : min_switches);
	result(meas_ok && res->periods && res->max_late <= bound && res->max_rtt <= bound,
	       "%s_stall_bound # worst wake-up lateness %.0f us (p99 %.0f), worst round trip %.0f us (p99 %.0f); stall bound %d ms of TCG wall clock, not a speed goal",
	       c, res->max_late / 1e3, res->p99_late / 1e3, res->max_rtt / 1e3, res->p99_rtt / 1e3,
	       stall_ms);
out:
	atomic_store(&ff_sw->stop, 1);
	if (trig > 0)
		reap(trig, 300, "trigger", c);
	if (neigh > 0) {
		kill(neigh, SIGKILL);
		waitpid(neigh, NULL, 0);
	}
}

static int count_cases(const char *cases)
{
	int n = 1;

	for (; *cases; cases++)
		n += *cases == ',';
	return n;
}

int main(int argc, char **argv)
{
	const char *cases = ALL_CASES;
	int old_policy, old_maxbits, opt;
	char buf[512], *tok, *save;
	cpu_set_t set;

	setvbuf(stdout, NULL, _IONBF, 0);
	while ((opt = getopt(argc, argv, "c:p:P:n:w:r:C:B:t:m:")) != -1) {
		switch (opt) {
		case 'c': cases = optarg; break;
		case 'p': periods = atoi(optarg); break;
		case 'P': period_us = atoi(optarg); break;
		case 'n': pings = atoi(optarg); break;
		case 'w': ff_sw_nwaiters = atoi(optarg); break;
		case 'r': prio = atoi(optarg); break;
		case 'C': cpu = atoi(optarg); break;
		case 'B': stall_ms = atoi(optarg); break;
		case 't': timeout_ms = atoi(optarg); break;
		case 'm': min_switches = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: ff-rtswitch [-c CASES] [-p PERIODS] [-P PERIOD_US] [-n PINGS]\n"
				"                   [-w WAITERS] [-r PRIO] [-C CPU] [-B STALL_MS]\n"
				"                   [-t TIMEOUT_MS] [-m MIN_SWITCHES]\n");
			return 2;
		}
	}
	if (periods < 1 || period_us < 1 || pings < 1 || ff_sw_nwaiters < 0 || prio < 2 ||
	    prio > 99 || stall_ms < 1 || timeout_ms < 1)
		return 2;
	ff_out("KTAP version 1");
	if (access(FF_SW_SYSCTL_POLICY, F_OK)) {
		ff_out("1..0 # SKIP kernel without the fastfutex series (no %s)", FF_SW_SYSCTL_POLICY);
		return 4;
	}
	ff_sw_verify = 1;
	ff_sw_errpfx = "# rtswitch: error: ";
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		ff_out("# rtswitch: sched_setaffinity CPU %d: %s (not pinned)", cpu, strerror(errno));
	old_policy = ff_read_int(FF_SW_SYSCTL_POLICY, 1);
	old_maxbits = ff_read_int(FF_SW_SYSCTL_MAXBITS, -1);
	if (old_maxbits >= 0 && old_maxbits < 16)
		ff_sw_set_sysctl(FF_SW_SYSCTL_MAXBITS, 16);

	ff_sw = mmap(NULL, sizeof(*ff_sw), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ff_sw == MAP_FAILED || res == MAP_FAILED)
		return 1;

	snprintf(buf, sizeof(buf), "%s", cases);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (strcmp(tok, "self-prctl") && !ff_sw_known(tok)) {
			result(0, "%s # unknown case", tok);
			continue;
		}
		run_case(tok);
	}
	ff_sw_set_sysctl(FF_SW_SYSCTL_POLICY, old_policy);
	if (old_maxbits >= 0)
		ff_sw_set_sysctl(FF_SW_SYSCTL_MAXBITS, old_maxbits);
	ff_out("1..%d", ntests);
	ff_out("# rtswitch-summary: cases=%d failed=%d triggers=%ld switched=%ld roundtrips=%ld lost=%ld stalls=%ld errors=%ld max_late_us=%.0f max_rtt_us=%.0f",
	       count_cases(cases), nfailed, tot_triggers, tot_switched, tot_rt, tot_lost, tot_stalls,
	       tot_errors, worst_late / 1e3, worst_rtt / 1e3);
	return nfailed ? 1 : 0;
}
