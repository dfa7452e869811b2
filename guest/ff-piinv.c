// SPDX-License-Identifier: GPL-2.0
/*
 * ff-piinv: priority inversion through the futex table machinery.  How
 * long a SCHED_FIFO thread waits in FUTEX_LOCK_PI for a PI futex owned by
 * a SCHED_OTHER thread whose own futex operation is the one that asks for
 * its process' private table.
 *
 * Each trial forks a fresh process with two threads: the owner
 * (SCHED_OTHER, CPU 0) takes a PI futex with FUTEX_LOCK_PI and releases it
 * with FUTEX_UNLOCK_PI as soon as the FIFO thread waits for it; the FIFO
 * thread (SCHED_FIFO priority PRIO, CPU 1) spins until the futex is owned,
 * then calls FUTEX_LOCK_PI.  Two figures a trial, both from the FIFO
 * thread's call on:
 *   acquired	until the futex is the FIFO thread's: the owner's
 *		FUTEX_UNLOCK_PI, which hands it over, has returned (read by the
 *		owner), or the FIFO thread's call has, whichever comes first.
 *		This is the inversion: the rest of the owner's FUTEX_LOCK_PI, its
 *		return to user space, its unlock, and whatever the kernel made
 *		the owner do in between.
 *   returned	until the FIFO thread's FUTEX_LOCK_PI returned.  Under
 *		-icount QEMU runs the vCPUs in turns and does not leave CPU 0
 *		for a CPU 1 that is already running (the FIFO thread spins in
 *		the rt_mutex while its owner is on a CPU): CPU 1 runs again when
 *		CPU 0 idles, so this figure also counts whatever CPU 0 runs
 *		after the handover (the process' kernel worker, RCU, other
 *		kworkers), which a machine runs in parallel.  -t shows it.
 * After its unlock the owner waits (FUTEX_WAIT) for the FIFO thread's
 * return instead of exiting, so that CPU 0 idles as soon as it can.
 * Cases (the policy of
 * kernel.futex_private_hash in brackets; on a kernel without it, vanilla,
 * the same system calls run as a baseline):
 *   policy0       no table ever (0)
 *   first-op      the owner's FUTEX_LOCK_PI is the process' first private
 *                 futex operation (2)
 *   conflict      a neighbour process queued 4096 private waiters in the
 *                 global table before; the owner's FUTEX_LOCK_PI lands in
 *                 a bucket with one of them (1)
 *   growth        the process has a 16-slot table from a first FUTEX_WAKE
 *                 and 128 waiters queued on distinct words, whose
 *                 collisions ask for a growth, before the owner's
 *                 FUTEX_LOCK_PI (2, 2^4 default buckets)
 *   thread        the owner thread's creation asks for the table (3)
 *   uncontended   the owner takes the PI futex in user space (no system
 *                 call, the kernel cannot see it) and then makes its
 *                 process' first private futex operation, a FUTEX_WAKE on
 *                 another word (2)
 *
 * Meant for a guest booted with QEMU -icount shift=0 on two vCPUs, where
 * guest time is instruction count and results repeat.
 *
 * Output, per case:
 *   BENCH piinv <kernel>/<case> - acq_p50_us <v>	(acquired)
 *   BENCH piinv <kernel>/<case> - acq_p90_us <v>
 *   BENCH piinv <kernel>/<case> - acq_max_us <v>
 *   BENCH piinv <kernel>/<case> - p50_us <v>		(returned)
 *   BENCH piinv <kernel>/<case> - p90_us <v>
 *   BENCH piinv <kernel>/<case> - max_us <v>
 *   BENCH piinv <kernel>/<case> - trials <n>
 *   BENCH piinv <kernel>/<case> - tables <n>   (trials whose process had a
 *		private table at the end, -1 without PR_FUTEX_HASH)
 *
 * usage: ff-piinv [-k KERNEL] [-c CASES] [-n TRIALS] [-r PRIO] [-t]
 *   KERNEL	label (default: ff.label= of the kernel command line)
 *   CASES	comma list (default: all of the above)
 *   TRIALS	trials a case (default 40)
 *   PRIO	SCHED_FIFO priority (default 80)
 *   -t		explain each case's worst trial (the longest acquisition):
 *		trace the scheduler, workqueue, interrupt and futex-table
 *		events of every trial (tracefs) and print the worst trial's
 *		events, from the FIFO thread's call to its return, as
 *		"FFB-TRACE piinv <kernel>/<case>: ..." lines.
 *		The tracepoints cost instructions on both kernels alike: the
 *		latencies of a traced run are not comparable with an untraced one.
 * Needs root and two CPUs.  Exit status 0, or 1 after an FFB-ERROR line.
 * The sysctls it changes are restored at the end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ff-abi.h"
#include "ff-util.h"

/* The neighbour and the slot helpers; not its trigger cases */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "ff-switch.h"

#define SYSCTL_POLICY	FF_SW_SYSCTL_POLICY
#define SYSCTL_DEFBITS	"/proc/sys/kernel/futex_private_default_hash_bits"
#define GROWTH_WAITERS	128

#define error(fmt, ...) ff_out("FFB-ERROR ff-piinv: " fmt, ##__VA_ARGS__)

static const char *kernel_label = "kernel";
static int trials = 40, prio = 80, have_policy, tracing;

/* One trial's shared state, in memory the trial's process shares with us */
struct trial {
	_Atomic uint32_t pi;		/* the PI futex */
	_Atomic int fifo_ready;		/* the FIFO thread spins */
	_Atomic int go;			/* the owner may start */
	_Atomic uint32_t fifo_done;	/* the FIFO thread has returned */
	uint64_t t0_ns;			/* the FIFO thread's call */
	_Atomic uint64_t handover_ns;	/* the owner's unlock returned */
	uint64_t wait_ns;		/* the FIFO thread's FUTEX_LOCK_PI */
	long slots;			/* at the end, -1 unknown */
	int err;
	_Atomic int steps;		/* 1 << ST_* for each step done */
};

/* The steps of a trial, the first one missing named when it gets stuck */
enum { ST_FIFO, ST_OWNER, ST_OWNED, ST_UNLOCKED, ST_FIFO_LOCKED, ST_JOINED, ST_NR };
static const char * const step_names[ST_NR + 1] = {
	"the FIFO thread's start", "the owner's start",
	"the owner's FUTEX_LOCK_PI", "the owner's unlock",
	"the FIFO thread's FUTEX_LOCK_PI", "the threads' exit", "its exit",
};

/* How long a trial may take, guest seconds (instructions / 10^9) */
#define TRIAL_LIMIT_S	20

static struct trial *tr;
static uint32_t other_word, growth_words[GROWTH_WAITERS];
static const char *cur_case;

static void step(int st)
{
	atomic_fetch_or(&tr->steps, 1 << st);
}

static const char *first_missing_step(void)
{
	int st, steps = atomic_load(&tr->steps);

	for (st = 0; st < ST_NR && (steps & (1 << st)); st++)
		;
	return step_names[st];
}

static long fx(void *uaddr, int op, uint32_t val)
{
	return syscall(SYS_futex, uaddr, op, val, NULL, NULL, 0);
}

/* ---- -t: the worst trial's events, from tracefs ---- */
#define TRACEFS		"/sys/kernel/debug/tracing/"
#define TRACE_MAX	(1 << 20)

static const char * const trace_events[] = {
	"sched/sched_switch", "sched/sched_wakeup", "sched/sched_migrate_task",
	"sched/sched_pi_setprio", "workqueue/workqueue_execute_start",
	"workqueue/workqueue_execute_end", "irq/irq_handler_entry",
	"irq/softirq_entry", "irq/softirq_exit", "irq_vectors/local_timer_entry",
	"irq_vectors/call_function_entry", "irq_vectors/call_function_single_entry",
	"irq_vectors/reschedule_entry", "rcu/rcu_utilization",
	"timer/hrtimer_expire_entry", "futex/futex_hash_alloc",
	"futex/futex_hash_grow", "futex/futex_hash_migrate",
};
static int marker_fd = -1;
static char *worst_trace;

static int trace_write(const char *file, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), TRACEFS "%s", file);
	return ff_write_file(path, val) ? -1 : 0;
}

/* Open @file truncated: empties the buffer ("trace") or the event list */
static void trace_truncate(const char *file)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), TRACEFS "%s", file);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd >= 0)
		close(fd);
}

/* Turn the events on (those this kernel has); 0 or -1 without tracefs */
static int trace_setup(void)
{
	char file[128];
	size_t i;

	if (trace_write("tracing_on", "0") || trace_write("buffer_size_kb", "512"))
		return -1;
	trace_truncate("set_event");
	for (i = 0; i < sizeof(trace_events) / sizeof(trace_events[0]); i++) {
		snprintf(file, sizeof(file), "events/%s/enable", trace_events[i]);
		trace_write(file, "1");	/* absent on one kernel or the other */
	}
	marker_fd = open(TRACEFS "trace_marker", O_WRONLY);
	return marker_fd < 0 ? -1 : 0;
}

static void trace_mark(const char *what)
{
	if (marker_fd >= 0 && write(marker_fd, what, strlen(what)) < 0)
		marker_fd = -1;
}

/* Empty the buffer and start recording: before each trial */
static void trace_start(void)
{
	trace_truncate("trace");
	trace_write("tracing_on", "1");
}

/* Stop recording; keep the trial's events when it is the worst so far */
static void trace_stop(int worst)
{
	size_t len = 0;
	ssize_t n;
	int fd;

	trace_write("tracing_on", "0");
	if (!worst)
		return;
	if (!worst_trace)
		worst_trace = malloc(TRACE_MAX);
	fd = open(TRACEFS "trace", O_RDONLY);
	if (!worst_trace || fd < 0) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while (len < TRACE_MAX - 1 &&
	       (n = read(fd, worst_trace + len, TRACE_MAX - 1 - len)) > 0)
		len += n;
	worst_trace[len] = 0;
	close(fd);
}

/* Print the kept events between the FIFO thread's two marks */
static void trace_print(const char *km)
{
	char *line, *save;
	int in = 0;

	if (!worst_trace)
		return;
	for (line = strtok_r(worst_trace, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strstr(line, "ff-piinv: fifo-call"))
			in = 1;
		if (in && line[0] != '#')
			ff_out("FFB-TRACE piinv %s: %.400s", km, line);
		if (strstr(line, "ff-piinv: fifo-return"))
			break;
	}
	free(worst_trace);
	worst_trace = NULL;
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* The FIFO thread is done (or failed): let the owner go */
static void *fifo_exit(void)
{
	atomic_store(&tr->fifo_done, 1);
	fx(&tr->fifo_done, FUTEX_WAKE_PRIVATE, 1);
	return NULL;
}

static void *fifo_fn(void *p)
{
	uint64_t t0;

	(void)p;
	if (pin(1)) {
		tr->err = errno;
		return fifo_exit();
	}
	atomic_store(&tr->fifo_ready, 1);
	step(ST_FIFO);
	/* Owned: the owner's FUTEX_LOCK_PI (or cmpxchg) wrote its TID */
	while (!(atomic_load(&tr->pi) & FUTEX_TID_MASK))
		;
	trace_mark("ff-piinv: fifo-call");
	t0 = ff_now_ns();
	tr->t0_ns = t0;
	if (fx(&tr->pi, FUTEX_LOCK_PI_PRIVATE, 0)) {
		tr->err = errno;
		return fifo_exit();
	}
	tr->wait_ns = ff_now_ns() - t0;
	trace_mark("ff-piinv: fifo-return");
	step(ST_FIFO_LOCKED);
	if (fx(&tr->pi, FUTEX_UNLOCK_PI_PRIVATE, 0))
		tr->err = errno;
	return fifo_exit();
}

static void *growth_waiter(void *p)
{
	fx(p, FUTEX_WAIT_PRIVATE, 0);
	return NULL;
}

static void *owner_fn(void *p)
{
	uint32_t tid = syscall(SYS_gettid), zero = 0;

	(void)p;
	if (pin(0)) {
		tr->err = errno;
		return NULL;
	}
	while (!atomic_load(&tr->go))
		;
	step(ST_OWNER);
	if (!strcmp(cur_case, "uncontended")) {
		/* The user-space fast path: no system call */
		if (!atomic_compare_exchange_strong(&tr->pi, &zero, tid)) {
			tr->err = EBUSY;
			return NULL;
		}
		fx(&other_word, FUTEX_WAKE_PRIVATE, 1);
	} else if (fx(&tr->pi, FUTEX_LOCK_PI_PRIVATE, 0)) {
		tr->err = errno;
		return NULL;
	}
	step(ST_OWNED);
	/*
	 * Hold it until the FIFO thread waits for it in the kernel: with the
	 * vCPUs run in turns (QEMU -icount), the FIFO thread could otherwise
	 * miss the owned state altogether.
	 */
	while (!(atomic_load(&tr->pi) & FUTEX_WAITERS) && !tr->err)
		;
	if (fx(&tr->pi, FUTEX_UNLOCK_PI_PRIVATE, 0))
		tr->err = errno;
	atomic_store(&tr->handover_ns, ff_now_ns());
	step(ST_UNLOCKED);
	/* Sleep rather than exit: CPU 0 idles, and QEMU's turn passes to CPU 1 */
	while (!atomic_load(&tr->fifo_done))
		fx(&tr->fifo_done, FUTEX_WAIT_PRIVATE, 0);
	return NULL;
}

/* The trial's process: returns its exit status */
static int trial_process(void)
{
	struct sched_param sp = { .sched_priority = prio };
	pthread_t fifo, owner, gw[GROWTH_WAITERS];
	pthread_attr_t attr;
	int i, n = 0;

	/* Away from the FIFO thread's CPU, where it spins */
	if (pin(0))
		return 2;
	if (!strcmp(cur_case, "growth")) {
		/* A 16-slot table, then waiters whose collisions ask to grow */
		fx(&other_word, FUTEX_WAKE_PRIVATE, 1);
		ff_sw_wait_slots(0);
		for (n = 0; n < GROWTH_WAITERS; n++)
			if (pthread_create(&gw[n], NULL, growth_waiter, &growth_words[n]))
				break;
		usleep(20000);
	}
	pthread_attr_init(&attr);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
	pthread_attr_setschedparam(&attr, &sp);
	if (pthread_create(&fifo, &attr, fifo_fn, NULL))
		return 2;
	while (!atomic_load(&tr->fifo_ready) && !tr->err)
		;
	if (pthread_create(&owner, NULL, owner_fn, NULL))
		return 2;
	atomic_store(&tr->go, 1);
	pthread_join(owner, NULL);
	pthread_join(fifo, NULL);
	step(ST_JOINED);
	tr->slots = ff_sw_slots();
	for (i = 0; i < n; i++) {
		growth_words[i] = 1;
		fx(&growth_words[i], FUTEX_WAKE_PRIVATE, 1);
		pthread_join(gw[i], NULL);
	}
	return tr->err ? 3 : 0;
}

/*
 * Wait for the trial's process without waking up meanwhile; kill it after
 * TRIAL_LIMIT_S. Returns its wait status, or -1 after a timeout.
 */
static int wait_trial(pid_t pid)
{
	struct pollfd pfd = { .events = POLLIN };
	int st = -1;

	pfd.fd = syscall(SYS_pidfd_open, pid, 0);
	if (pfd.fd >= 0 && poll(&pfd, 1, TRIAL_LIMIT_S * 1000) == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		close(pfd.fd);
		return -1;
	}
	if (pfd.fd >= 0)
		close(pfd.fd);
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return st;
}

static int policy_for(const char *c)
{
	if (!strcmp(c, "policy0"))
		return 0;
	if (!strcmp(c, "conflict"))
		return 1;
	if (!strcmp(c, "thread"))
		return 3;
	return 2;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The acquisition of the trial just done, see the head comment */
static uint64_t acquired_ns(void)
{
	uint64_t h = atomic_load(&tr->handover_ns);

	if (h > tr->t0_ns && h - tr->t0_ns < tr->wait_ns)
		return h - tr->t0_ns;
	return tr->wait_ns;
}

static void print_stats(const char *km, const char *pfx, uint64_t *ns, int n)
{
	qsort(ns, n, sizeof(*ns), cmp_u64);
	ff_out("BENCH piinv %s - %sp50_us %.1f", km, pfx, ns[n / 2] / 1e3);
	ff_out("BENCH piinv %s - %sp90_us %.1f", km, pfx, ns[n * 9 / 10] / 1e3);
	ff_out("BENCH piinv %s - %smax_us %.1f", km, pfx, ns[n - 1] / 1e3);
}

static int run_case(const char *c)
{
	uint64_t *ns = calloc(trials, sizeof(*ns)), worst_ns = 0, a;
	uint64_t *acq = calloc(trials, sizeof(*acq));
	int i, st, n = 0, tables = 0, ret = 0, worst;
	pid_t neigh = 0, pid;
	char km[96];

	snprintf(km, sizeof(km), "%s/%s", kernel_label, c);
	if (!ns || !acq) {
		free(ns);
		free(acq);
		return 1;
	}
	cur_case = c;
	if (!strcmp(c, "conflict")) {
		if (have_policy && ff_sw_set_sysctl(SYSCTL_POLICY, 0))
			return 1;
		neigh = ff_sw_start_neighbour();
		if (neigh < 0) {
			error("%s: the neighbour did not start", km);
			return 1;
		}
	}
	if (have_policy && ff_sw_set_sysctl(SYSCTL_POLICY, policy_for(c)))
		return 1;
	for (i = 0; i < trials; i++) {
		memset(tr, 0, sizeof(*tr));
		if (tracing)
			trace_start();
		pid = fork();
		if (pid < 0)
			break;
		if (!pid)
			_exit(trial_process());
		st = wait_trial(pid);
		a = acquired_ns();
		/* -t keeps the trial with the longest acquisition */
		worst = st == 0 && (!n || a > worst_ns);
		if (tracing)
			trace_stop(worst);
		if (worst)
			worst_ns = a;
		if (st == -1) {
			error("%s: trial %d did not end within %d s: stuck in %s",
			      km, i, TRIAL_LIMIT_S, first_missing_step());
			ret = 1;
			break;
		}
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			error("%s: trial %d failed (status %#x, errno %d)", km, i, st, tr->err);
			ret = 1;
			break;
		}
		acq[n] = a;
		ns[n++] = tr->wait_ns;
		tables += tr->slots > 0;
	}
	if (neigh > 0) {
		kill(neigh, SIGKILL);
		waitpid(neigh, &st, 0);
	}
	if (n) {
		print_stats(km, "acq_", acq, n);
		print_stats(km, "", ns, n);
		ff_out("BENCH piinv %s - trials %d", km, n);
		ff_out("BENCH piinv %s - tables %d", km, have_policy ? tables : -1);
		if (tracing)
			trace_print(km);
	}
	free(ns);
	free(acq);
	return ret;
}

int main(int argc, char **argv)
{
	char cases[256] = "policy0,first-op,conflict,growth,thread,uncontended";
	int opt, ret = 0, old_policy = -1, old_defbits = -1;
	char *c, *save;

	ff_sw_errpfx = "FFB-ERROR ff-piinv: ";
	kernel_label = ff_cmdline_label(kernel_label);
	while ((opt = getopt(argc, argv, "k:c:n:r:t")) != -1) {
		switch (opt) {
		case 'k': kernel_label = optarg; break;
		case 'c': snprintf(cases, sizeof(cases), "%s", optarg); break;
		case 'n': trials = atoi(optarg); break;
		case 'r': prio = atoi(optarg); break;
		case 't': tracing = 1; break;
		default:
			fprintf(stderr, "usage: ff-piinv [-k KERNEL] [-c CASES] [-n TRIALS] [-r PRIO] [-t]\n");
			return 2;
		}
	}
	if (trials < 1 || sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		error("needs two CPUs and at least one trial");
		return 1;
	}
	if (tracing && trace_setup()) {
		error("-t: no tracefs at %s", TRACEFS);
		return 1;
	}
	tr = mmap(NULL, sizeof(*tr), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (tr == MAP_FAILED)
		return 1;
	ff_sw = mmap(NULL, sizeof(*ff_sw), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ff_sw == MAP_FAILED)
		return 1;
	old_policy = ff_read_int(SYSCTL_POLICY, -1);
	have_policy = old_policy >= 0;
	if (have_policy) {
		old_defbits = ff_read_int(SYSCTL_DEFBITS, -1);
		if (ff_sw_set_sysctl(SYSCTL_DEFBITS, 4))
			return 1;
	}
	for (c = strtok_r(cases, ",", &save); c; c = strtok_r(NULL, ",", &save)) {
		ff_out("FFB-PROGRESS piinv %s/%s", kernel_label, c);
		if (run_case(c))
			ret = 1;
	}
	if (have_policy) {
		ff_sw_set_sysctl(SYSCTL_POLICY, old_policy);
		if (old_defbits >= 0)
			ff_sw_set_sysctl(SYSCTL_DEFBITS, old_defbits);
	}
	return ret;
}
