// SPDX-License-Identifier: GPL-2.0
/*
 * ff-rtlat: how late a SCHED_FIFO thread wakes up while an ordinary process
 * on the same CPU makes the kernel switch futex hash tables as fast as it
 * can (an rtlat/cyclictest-style measurement).
 *
 * Meant for a guest booted with QEMU -icount shift=0 on one vCPU
 * (FF_ICOUNT=1 FF_CPUS=1 FF_NODES=1 scripts/boot.sh ...), where guest time
 * is instruction count (1 us = 1000 instructions) and results repeat; it
 * runs anywhere, though, and then measures wall-clock lateness.
 *
 * For each case: a trigger process (SCHED_OTHER, nice 0) is forked and set
 * up (its waiters queued etc.); then a SCHED_FIFO thread (priority PRIO) of
 * the measuring process sleeps PERIODS times with
 * clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) to the next multiple of
 * PERIOD_US and records its lateness (time read after the wake-up minus the
 * target); meanwhile the trigger loops.  Everything is pinned to CPU (0).
 * Cases:
 *   quiet		the floor: the trigger loops on getppid(), so the CPU is as
 *			busy as in the other cases
 *   mm-churn		no futex: the trigger maps, populates and unmaps 4 MiB
 *			(a 65536-slot table's memory) in a loop, the page
 *			allocator's own lateness, on every kernel
 *   prctl		prctl(PR_FUTEX_HASH, SET_SLOTS) toggling 65536 <-> 2 (policy 1)
 *   prctl-waiters	the same with WAITERS (1000) threads of the trigger
 *			blocked in FUTEX_WAIT on distinct private words, queued
 *			before the measurement starts
 *   fork-prealloc	fork children that call FUTEX_PREALLOC_HASH(16) and exit
 *			(policy 1)
 *   fork-firstop	policy 2: fork children that do one private FUTEX_WAKE
 *			and exit
 *   fork-conflict	policy 1: a neighbour process queued 4096 private waiters
 *			in the global table under policy 0 before; fork children
 *			FUTEX_WAKE distinct private words (up to 4096) until one
 *			lands in a bucket holding a neighbour's waiter (a
 *			conflict) and they have a table, then exit
 *   fork-thread		policy 3: fork children that create a second thread,
 *			join it and exit
 *   growth		policy 2: fork children that get a 16-slot table by their
 *			first op, then queue 128 private waiters (a futex_waitv
 *			thread) four times, a FUTEX_WAKE after each, so that
 *			collisions grow the table, and exit
 * (The trigger processes live in ff-switch.h, shared with ff-rtswitch.)
 * On a kernel without kernel.futex_private_hash (vanilla) the prctl cases
 * are skipped (n/a) and the others run the same system calls as a baseline
 * (FUTEX_PREALLOC_HASH fails with ENOSYS there).
 *
 * Output, per case, SIZE = the global table's entries from the kernel log
 * ("futex hash table entries:"), or -s:
 *   BENCH rtlat <kernel>/<case> <SIZE> max_late_us <v>
 *   BENCH rtlat <kernel>/<case> <SIZE> p99_late_us <v>
 *   BENCH rtlat <kernel>/<case> <SIZE> p50_late_us <v>
 *   BENCH rtlat <kernel>/<case> <SIZE> late_gt100us <periods>
 *   BENCH rtlat <kernel>/<case> <SIZE> periods <n>
 *   BENCH rtlat <kernel>/<case> <SIZE> triggers <n>	(calls / children)
 *   BENCH rtlat <kernel>/<case> <SIZE> switched <n>	(of them, those that
 *		made the kernel switch: call succeeded / child had a table)
 *
 * usage: ff-rtlat [-k KERNEL] [-c CASES] [-p PERIODS] [-P PERIOD_US]
 *                 [-w WAITERS] [-r PRIO] [-C CPU] [-s SIZE]
 *   KERNEL	label (default: ff.label= of the kernel command line)
 *   CASES	comma list (default: all of the above)
 *   PERIODS	periods a case (default 2000)
 *   PERIOD_US	period (default 1000)
 *   WAITERS	waiters of prctl-waiters (default 1000)
 *   PRIO	SCHED_FIFO priority (default 80)
 *   CPU	the CPU everything runs on (default 0)
 *   SIZE	the global table size to print (default: from the kernel log)
 *   SECONDS	load mode: run each case's trigger for SECONDS without
 *		measuring (for cyclictest, guest/ff-cyclic), and print
 *		BENCH load <kernel>/<case> - triggers|switched <n>
 * The first case starts no earlier than 5 s after boot (guest time): in
 * the first seconds the kernel is still settling (TSC calibration, the
 * clocksource switch), and 24 wake-ups came ~3.7 ms late on vanilla then.
 * Needs root (SCHED_FIFO, sysctls).  Exit status 0, or 1 after an
 * FFB-ERROR line.  The sysctls it changes are restored at the end.
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
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ff-abi.h"
#include "ff-util.h"

#include "ff-switch.h"

#define SYSCTL_POLICY	FF_SW_SYSCTL_POLICY
#define SYSCTL_MAXBITS	FF_SW_SYSCTL_MAXBITS

static const char *kernel_label = "kernel";
static char size_label[32] = "default";
static int periods = 2000, period_us = 1000, prio = 80, cpu, load_s;
static int have_policy;

#define error(fmt, ...) ff_out("FFB-ERROR ff-rtlat: " fmt, ##__VA_ARGS__)

/* The trigger cases, their children and the neighbour: ff-switch.h */
static struct ff_sw_shared *sh;

/* ---- measurer ---- */

static uint64_t *late;

static void *fifo_thread(void *p)
{
	struct timespec t;
	uint64_t target;
	int i;

	(void)p;
	clock_gettime(CLOCK_MONOTONIC, &t);
	target = (uint64_t)t.tv_sec * 1000000000ull + t.tv_nsec;
	target = (target / 1000000ull + 2) * 1000000ull;
	for (i = 0; i < periods; i++) {
		uint64_t now;

		target += (uint64_t)period_us * 1000;
		t.tv_sec = target / 1000000000ull;
		t.tv_nsec = target % 1000000000ull;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
			;
		now = ff_now_ns();
		late[i] = now > target ? now - target : 0;
		/* Overran by whole periods: skip them, cyclictest-style. */
		while (now > target + (uint64_t)period_us * 1000)
			target += (uint64_t)period_us * 1000;
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int run_case(const char *c)
{
	struct sched_param sp = { .sched_priority = prio };
	pid_t trig, neigh = 0;
	pthread_attr_t attr;
	char km[96];
	pthread_t th;
	uint64_t t0;
	long ngt = 0;
	int i, st, ret = 0;

	snprintf(km, sizeof(km), "%s/%s", kernel_label, c);
	if (!strncmp(c, "prctl", 5) && !have_policy) {
		ff_out("FFB-PROGRESS rtlat %s: n/a (no PR_FUTEX_HASH)", km);
		return 0;
	}
	if (!strcmp(c, "fork-conflict")) {
		if (have_policy && ff_sw_set_sysctl(SYSCTL_POLICY, 0))
			return 1;
		neigh = ff_sw_start_neighbour();
		if (neigh < 0) {
			error("%s: the neighbour did not start", km);
			return 1;
		}
	}
	if (have_policy && ff_sw_set_sysctl(SYSCTL_POLICY, ff_sw_policy_for(c)))
		return 1;
	memset(sh, 0, sizeof(*sh));
	trig = fork();
	if (trig < 0)
		return 1;
	if (trig == 0)
		_exit(ff_sw_trigger(c));
	t0 = ff_now_ns();
	while (!atomic_load(&sh->ready)) {
		if (waitpid(trig, &st, WNOHANG) == trig) {
			error("%s: the trigger exited during its set-up", km);
			return 1;
		}
		if (ff_now_ns() - t0 > 300000000000ull) {
			error("%s: the trigger did not get ready in 300 s", km);
			kill(trig, SIGKILL);
			waitpid(trig, &st, 0);
			return 1;
		}
		usleep(10000);
	}
	usleep(20000);	/* the trigger is in its loop */

	if (load_s) {
		/* Load mode: the trigger alone, for another tool to measure */
		sleep(load_s);
		errno = 0;
		goto stop;
	}
	pthread_attr_init(&attr);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
	pthread_attr_setschedparam(&attr, &sp);
	errno = pthread_create(&th, &attr, fifo_thread, NULL);
	pthread_attr_destroy(&attr);
	if (errno) {
		error("%s: SCHED_FIFO %d thread: %s", km, prio, strerror(errno));
		ret = 1;
	} else {
		pthread_join(th, NULL);
	}
stop:
	atomic_store(&sh->stop, 1);
	if (waitpid(trig, &st, 0) != trig || !WIFEXITED(st) || WEXITSTATUS(st)) {
		error("%s: the trigger failed (status 0x%x)", km, st);
		ret = 1;
	}
	if (neigh > 0) {
		kill(neigh, SIGKILL);
		waitpid(neigh, NULL, 0);
	}
	if (ret)
		return ret;
	if (load_s) {
		ff_out("BENCH load %s - triggers %ld", km, atomic_load(&sh->triggers));
		ff_out("BENCH load %s - switched %ld", km, atomic_load(&sh->switched));
		return 0;
	}

	for (i = 0; i < periods; i++)
		ngt += late[i] > 100000;
	qsort(late, periods, sizeof(*late), cmp_u64);
	ff_out("BENCH rtlat %s %s max_late_us %.1f", km, size_label, late[periods - 1] / 1e3);
	ff_out("BENCH rtlat %s %s p99_late_us %.1f", km, size_label,
	    late[(size_t)(0.99 * (periods - 1))] / 1e3);
	ff_out("BENCH rtlat %s %s p50_late_us %.1f", km, size_label, late[(periods - 1) / 2] / 1e3);
	ff_out("BENCH rtlat %s %s late_gt100us %ld", km, size_label, ngt);
	ff_out("BENCH rtlat %s %s periods %d", km, size_label, periods);
	ff_out("BENCH rtlat %s %s triggers %ld", km, size_label, atomic_load(&sh->triggers));
	ff_out("BENCH rtlat %s %s switched %ld", km, size_label, atomic_load(&sh->switched));
	ff_out("FFB-PROGRESS rtlat %s size %s: max %.0f us, %ld late > 100 us, %ld triggers",
	    km, size_label, late[periods - 1] / 1e3, ngt, atomic_load(&sh->triggers));
	return 0;
}

/* "futex hash table entries: N" from the kernel log. */
static void size_from_klog(void)
{
	int n = klogctl(10, NULL, 0);
	char *buf, *p;

	if (n <= 0)
		return;
	buf = malloc(n + 1);
	if (!buf)
		return;
	n = klogctl(3, buf, n);
	if (n > 0) {
		buf[n] = 0;
		p = strstr(buf, "futex hash table entries: ");
		if (p)
			snprintf(size_label, sizeof(size_label), "%ld",
				 strtol(p + strlen("futex hash table entries: "), NULL, 10));
	}
	free(buf);
}

int main(int argc, char **argv)
{
	const char *cases = FF_SW_CASES;
	int old_policy, old_maxbits, opt, ret = 0;
	char buf[256], *tok, *save;
	cpu_set_t set;

	setvbuf(stdout, NULL, _IONBF, 0);
	kernel_label = ff_cmdline_label(kernel_label);
	size_from_klog();
	while ((opt = getopt(argc, argv, "k:c:p:P:w:r:C:s:L:")) != -1) {
		switch (opt) {
		case 'k': kernel_label = optarg; break;
		case 'c': cases = optarg; break;
		case 'p': periods = atoi(optarg); break;
		case 'P': period_us = atoi(optarg); break;
		case 'w': ff_sw_nwaiters = atoi(optarg); break;
		case 'r': prio = atoi(optarg); break;
		case 'C': cpu = atoi(optarg); break;
		case 's': snprintf(size_label, sizeof(size_label), "%s", optarg); break;
		case 'L': load_s = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: ff-rtlat [-k KERNEL] [-c CASES] [-p PERIODS] [-P PERIOD_US]\n"
				"               [-w WAITERS] [-r PRIO] [-C CPU] [-s SIZE] [-L SECONDS]\n");
			return 2;
		}
	}
	if (periods < 1 || period_us < 1 || ff_sw_nwaiters < 0)
		return 2;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		error("sched_setaffinity CPU %d: %s (not pinned)", cpu, strerror(errno));
	ff_sw_errpfx = "FFB-ERROR ff-rtlat: ";
	have_policy = access(SYSCTL_POLICY, F_OK) == 0;
	old_policy = ff_read_int(SYSCTL_POLICY, 1);
	old_maxbits = ff_read_int(SYSCTL_MAXBITS, -1);
	if (have_policy && old_maxbits >= 0 && old_maxbits < 16 && ff_sw_set_sysctl(SYSCTL_MAXBITS, 16))
		ret = 1;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ff_sw = sh;
	late = calloc(periods, sizeof(*late));
	if (sh == MAP_FAILED || !late)
		return 1;
	memset(late, 0, periods * sizeof(*late));
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		error("mlockall: %s", strerror(errno));

	/* Let the kernel settle after boot (see above). */
	for (;;) {
		double up = 0;
		FILE *f = fopen("/proc/uptime", "r");

		if (!f || fscanf(f, "%lf", &up) != 1)
			up = 1e9;
		if (f)
			fclose(f);
		if (up >= 5.0)
			break;
		usleep((useconds_t)((5.0 - up) * 1e6) + 1000);
	}
	snprintf(buf, sizeof(buf), "%s", cases);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!ff_sw_known(tok)) {
			error("unknown case %s", tok);
			ret = 1;
			continue;
		}
		if (run_case(tok))
			ret = 1;
	}
	if (have_policy) {
		ff_sw_set_sysctl(SYSCTL_POLICY, old_policy);
		if (old_maxbits >= 0)
			ff_sw_set_sysctl(SYSCTL_MAXBITS, old_maxbits);
	}
	return ret;
}
