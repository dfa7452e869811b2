/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Table-switch triggers shared by ff-rtlat (make bench: FIFO lateness under
 * icount) and ff-rtswitch (reliability: the same triggers on the debug and
 * PREEMPT_RT kernels, with assertions).  A trigger is an ordinary process
 * that makes the kernel switch futex hash tables by one path, over and over,
 * until told to stop:
 *
 *   quiet		the floor: loops on getppid()
 *   mm-churn		no futex at all: maps, populates and unmaps 4 MiB, the
 *			memory of a 65536-slot table, over and over (the page
 *			allocator's own share of the prctl toggles' lateness)
 *   prctl		prctl(PR_FUTEX_HASH, SET_SLOTS) toggling 65536 <-> 2 (policy 1)
 *   prctl-waiters	the same with ff_sw_nwaiters threads of the trigger
 *			blocked in FUTEX_WAIT on distinct private words
 *   fork-prealloc	fork children that call FUTEX_PREALLOC_HASH(16) and exit
 *   fork-firstop	policy 2: children do one private FUTEX_WAKE and exit
 *   fork-conflict	policy 1: a neighbour (ff_sw_start_neighbour(), started
 *			under policy 0) keeps FF_SW_NEIGH_WAITERS private waiters
 *			in the global table; children FUTEX_WAKE distinct words
 *			until one conflicts and they have a table
 *   fork-thread	policy 3: children create a second thread, join it, exit
 *   growth		policy 2: children get a 16-slot table by their first op,
 *			then queue 128 private waiters (a futex_waitv thread) in
 *			rounds, a FUTEX_WAKE after each, so that collisions grow
 *			the table
 *
 * The trigger counts its triggers (calls or children) in ff_sw->triggers
 * and those that made the kernel switch in ff_sw->switched: the prctl call
 * succeeded, or the child ended with a private table (grown, for growth).
 * With ff_sw_verify set (ff-rtswitch), a toggle counts as switched only if
 * PR_FUTEX_HASH_GET_SLOTS then reports the size asked for, a growth child
 * wakes its 128 waiters only once they are queued and keeps doing so until
 * its table has grown, and a child that made no switch prints its
 * /proc/self/futex_hash; without it (ff-rtlat) the triggers make exactly
 * the system calls they always made, so that the benchmark's figures stay
 * comparable.
 *
 * Include after <linux/futex.h>, <sys/syscall.h>, "ff-abi.h", "ff-util.h";
 * set ff_sw (MAP_SHARED) before ff_sw_trigger().
 */
#ifndef FF_SWITCH_H
#define FF_SWITCH_H

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define FF_SW_SYSCTL_POLICY	"/proc/sys/kernel/futex_private_hash"
#define FF_SW_SYSCTL_MAXBITS	"/proc/sys/kernel/futex_private_max_hash_bits"
#define FF_SW_NEIGH_WAITERS	4096
#define FF_SW_WAITV_MAX		128
#define FF_SW_STACK		(64 * 1024)
#define FF_SW_CASES		"quiet,mm-churn,prctl,prctl-waiters,fork-prealloc,fork-firstop," \
				"fork-conflict,fork-thread,growth"

/* shared between the trigger process and whoever measures (MAP_SHARED) */
struct ff_sw_shared {
	atomic_int stop;
	atomic_int ready;
	atomic_long triggers;
	atomic_long switched;
	atomic_int last_errno;		/* of a failed prctl trigger */
	atomic_long last_slots;		/* GET_SLOTS after a failed toggle */
	atomic_ullong toggle_ns, toggle_max_ns;	/* SET_SLOTS time (verify only) */
};

static struct ff_sw_shared *ff_sw;
static int ff_sw_nwaiters = 1000;
static int ff_sw_verify;
static const char *ff_sw_errpfx = "ff-switch: error: ";

#define ff_sw_error(fmt, ...) ff_out("%s" fmt, ff_sw_errpfx, ##__VA_ARGS__)

/* Write @v to the sysctl file @path; -1 after an error line */
static int ff_sw_set_sysctl(const char *path, int v)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d\n", v);
	if (ff_write_file(path, buf)) {
		ff_sw_error("cannot write %d to %s", v, path);
		return -1;
	}
	return 0;
}

static inline long ff_sw_fx(uint32_t *u, int op, uint32_t val)
{
	return syscall(SYS_futex, u, op, val, NULL, NULL, 0);
}

/* Slots of the calling process's private table, 0 global, -1 unknown. */
static long ff_sw_slots(void)
{
	long r = prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_GET_SLOTS, 0, 0, 0);
	char line[128];
	FILE *f;

	if (r >= 0)
		return r;
	f = fopen("/proc/self/futex_hash", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "slots: %ld", &r) == 1)
			break;
	fclose(f);
	return r;
}

/* Print @what and /proc/self/futex_hash on one line (a failed trigger). */
static void __attribute__((format(printf, 1, 2))) ff_sw_dump_state(const char *what, ...)
{
	char buf[400], line[128];
	size_t n;
	va_list ap;
	FILE *f;

	va_start(ap, what);
	vsnprintf(buf, sizeof(buf), what, ap);
	va_end(ap);
	f = fopen("/proc/self/futex_hash", "r");
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		n = strlen(buf);
		snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? "; " : "", line);
	}
	if (f)
		fclose(f);
	ff_sw_error("%s", buf);
}

/* Is @c one of FF_SW_CASES? */
static int ff_sw_known(const char *c)
{
	char needle[64];

	snprintf(needle, sizeof(needle), ",%s,", c);
	return strstr("," FF_SW_CASES ",", needle) != NULL;
}

/* The kernel.futex_private_hash policy a case runs under */
static int ff_sw_policy_for(const char *c)
{
	if (!strcmp(c, "fork-firstop") || !strcmp(c, "growth"))
		return 2;
	if (!strcmp(c, "fork-thread"))
		return 3;
	return 1;
}

/* ---- prctl-waiters: threads blocked in FUTEX_WAIT ---- */

static uint32_t *ff_sw_wwords;
static atomic_int ff_sw_wstarted;

static void *ff_sw_waiter(void *p)
{
	uint32_t *w = p;

	atomic_fetch_add(&ff_sw_wstarted, 1);
	while (!ff_sw->stop)
		ff_sw_fx(w, FUTEX_WAIT_PRIVATE, 0);
	return NULL;
}

static int ff_sw_start_waiters(int n)
{
	pthread_attr_t attr;
	pthread_t th;
	int i;

	ff_sw_wwords = calloc(n, sizeof(*ff_sw_wwords));
	if (!ff_sw_wwords)
		return -1;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, FF_SW_STACK);
	for (i = 0; i < n; i++) {
		errno = pthread_create(&th, &attr, ff_sw_waiter, &ff_sw_wwords[i]);
		if (errno) {
			ff_sw_error("waiter thread %d of %d: %s", i, n, strerror(errno));
			return -1;
		}
	}
	while (atomic_load(&ff_sw_wstarted) < n)
		usleep(1000);
	usleep(50000);	/* all of them into FUTEX_WAIT */
	return 0;
}

/* ---- the children of the fork cases ---- */

static void *ff_sw_exit_thread(void *p)
{
	return p;
}

static uint32_t ff_sw_gwords[FF_SW_WAITV_MAX * 4] __attribute__((aligned(64)));
static atomic_int ff_sw_gstop;

static void *ff_sw_waitv_thread(void *p)
{
	struct futex_waitv v[FF_SW_WAITV_MAX];
	int round, j;

	(void)p;
	for (round = 0; round < 4; round++) {
		memset(v, 0, sizeof(v));
		for (j = 0; j < FF_SW_WAITV_MAX; j++) {
			v[j].uaddr = (uintptr_t)&ff_sw_gwords[j * 4];
			v[j].val = round;
			v[j].flags = FUTEX2_SIZE_U32 | FUTEX2_PRIVATE;
		}
		syscall(SYS_futex_waitv, v, FF_SW_WAITV_MAX, 0, NULL, CLOCK_MONOTONIC);
	}
	return NULL;
}

/*
 * The growth child's thread with ff_sw_verify: re-queue 128 waiters on
 * words that stay 0, until told to stop.  The child wakes it only once it
 * is queued (FUTEX_WAKE returns 1), so a slow guest cannot make it miss
 * rounds (the fixed-round protocol above can, under TCG with debug
 * options: its waits then fail with EAGAIN and nothing is queued).
 */
static void *ff_sw_requeue_thread(void *p)
{
	struct futex_waitv v[FF_SW_WAITV_MAX];
	int j;

	(void)p;
	memset(v, 0, sizeof(v));
	for (j = 0; j < FF_SW_WAITV_MAX; j++) {
		v[j].uaddr = (uintptr_t)&ff_sw_gwords[j * 4];
		v[j].flags = FUTEX2_SIZE_U32 | FUTEX2_PRIVATE;
	}
	while (!atomic_load(&ff_sw_gstop))
		syscall(SYS_futex_waitv, v, FF_SW_WAITV_MAX, 0, NULL, CLOCK_MONOTONIC);
	return NULL;
}

static void ff_sw_set_gwords(uint32_t v)
{
	int i;

	for (i = 0; i < FF_SW_WAITV_MAX; i++)
		__atomic_store_n(&ff_sw_gwords[i * 4], v, __ATOMIC_RELEASE);
}

/*
 * The slots once the kernel worker which performs automatic switches has
 * made the table larger than @above, or after 2 s; -1 at once on a kernel
 * without private tables.
 */
static long ff_sw_wait_slots(long above)
{
	long slots = ff_sw_slots();
	int i;

	/* -1: a kernel without private tables, nothing to wait for */
	for (i = 0; i < 2000 && slots >= 0 && slots <= above; i++) {
		usleep(1000);
		slots = ff_sw_slots();
	}
	return slots;
}

/*
 * One child of the fork cases; exit status 0 if it made a switch. An
 * automatic switch is made by a kernel worker after the request: the
 * child waits for it, or it would exit before the switch happens.
 */
static int ff_sw_child(const char *c)
{
	static uint32_t probe[FF_SW_NEIGH_WAITERS];
	int i, round;
	uint32_t word = 0;
	pthread_t th;

	if (!strcmp(c, "fork-prealloc"))
		return ff_sw_fx(NULL, FUTEX_PREALLOC_HASH | FUTEX_PRIVATE_FLAG, 16) > 0 ? 0 : 1;
	if (!strcmp(c, "fork-firstop")) {
		ff_sw_fx(&word, FUTEX_WAKE_PRIVATE, 1);
		return ff_sw_wait_slots(0) > 0 ? 0 : 1;
	}
	if (!strcmp(c, "fork-conflict")) {
		for (i = 0; i < FF_SW_NEIGH_WAITERS; i++) {
			ff_sw_fx(&probe[i], FUTEX_WAKE_PRIVATE, 1);
			if (i % 64 == 63 && ff_sw_slots() > 0)
				return 0;
		}
		return ff_sw_wait_slots(0) > 0 ? 0 : 1;
	}
	if (!strcmp(c, "fork-thread")) {
		if (pthread_create(&th, NULL, ff_sw_exit_thread, NULL))
			return 2;
		pthread_join(th, NULL);
		return ff_sw_wait_slots(0) > 0 ? 0 : 1;
	}
	if (!strcmp(c, "growth") && ff_sw_verify) {
		ff_sw_fx(&word, FUTEX_WAKE_PRIVATE, 1);
		if (pthread_create(&th, NULL, ff_sw_requeue_thread, NULL))
			return 2;
		/* rounds of 128 queued waiters, up to 64 or ~10 s of tries */
		for (round = 0, i = 0; round < 64 && i < 10000 && ff_sw_slots() <= 16; i++) {
			usleep(1000);
			round += ff_sw_fx(&ff_sw_gwords[0], FUTEX_WAKE_PRIVATE, 1) == 1;
		}
		atomic_store(&ff_sw_gstop, 1);
		ff_sw_set_gwords(1);
		ff_sw_fx(&ff_sw_gwords[0], FUTEX_WAKE_PRIVATE, INT_MAX);
		pthread_join(th, NULL);
		return ff_sw_slots() > 16 ? 0 : 1;
	}
	if (!strcmp(c, "growth")) {
		ff_sw_fx(&word, FUTEX_WAKE_PRIVATE, 1);
		if (pthread_create(&th, NULL, ff_sw_waitv_thread, NULL))
			return 2;
		for (round = 0; round < 4; round++) {
			usleep(2000);	/* let it queue its 128 */
			ff_sw_set_gwords(round + 1);
			ff_sw_fx(&ff_sw_gwords[0], FUTEX_WAKE_PRIVATE, 1);
		}
		pthread_join(th, NULL);
		return ff_sw_wait_slots(16) > 16 ? 0 : 1;
	}
	return 2;
}

/* One SET_SLOTS toggle to @slots; 1 if it switched. */
static int ff_sw_toggle(unsigned long slots)
{
	uint64_t t0 = ff_sw_verify ? ff_now_ns() : 0;
	long r;

	if (prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, slots, 0, 0)) {
		atomic_store(&ff_sw->last_errno, errno);
		return 0;
	}
	if (!ff_sw_verify)
		return 1;
	t0 = ff_now_ns() - t0;
	atomic_fetch_add(&ff_sw->toggle_ns, t0);
	if (t0 > atomic_load(&ff_sw->toggle_max_ns))
		atomic_store(&ff_sw->toggle_max_ns, t0);
	r = ff_sw_slots();
	if (r != (long)slots) {
		atomic_store(&ff_sw->last_slots, r);
		return 0;
	}
	return 1;
}

/*
 * The trigger loop of case @c, until ff_sw->stop: the body of a trigger
 * process (prctl-waiters exits the process at the end: its waiters stay
 * blocked).  Returns the exit status.
 */
static int ff_sw_trigger(const char *c)
{
	long n = 0, ok = 0;

	if (!strcmp(c, "prctl-waiters") && ff_sw_start_waiters(ff_sw_nwaiters))
		return 1;
	ff_sw->ready = 1;
	if (!strcmp(c, "quiet")) {
		while (!atomic_load(&ff_sw->stop))
			syscall(SYS_getppid);
		return 0;
	}
	while (!atomic_load(&ff_sw->stop)) {
		if (!strcmp(c, "mm-churn")) {
			size_t len = 4UL << 20;
			void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

			if (m == MAP_FAILED) {
				ff_sw_error("mm-churn: mmap: %s", strerror(errno));
				return 1;
			}
			munmap(m, len);
			n++;
		} else if (!strncmp(c, "prctl", 5)) {
			ok += ff_sw_toggle(65536);
			atomic_store(&ff_sw->triggers, ++n);
			atomic_store(&ff_sw->switched, ok);
			ok += ff_sw_toggle(2);
			n++;
		} else {
			pid_t pid = fork();
			int st;

			if (pid == 0) {
				st = ff_sw_child(c);
				if (st && ff_sw_verify)
					ff_sw_dump_state("%s child %d: no switch (status %d)",
							 c, (int)getpid(), st);
				_exit(st);
			}
			if (pid < 0 || waitpid(pid, &st, 0) != pid) {
				ff_sw_error("%s: fork/waitpid: %s", c, strerror(errno));
				return 1;
			}
			n++;
			ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
		}
		atomic_store(&ff_sw->triggers, n);
		atomic_store(&ff_sw->switched, ok);
	}
	if (!strcmp(c, "prctl-waiters"))
		_exit(0);	/* the waiters stay blocked: exit takes them */
	return 0;
}

/* ---- the neighbour of fork-conflict: FF_SW_NEIGH_WAITERS private waiters ---- */

static void *ff_sw_neigh_thread(void *p)
{
	struct futex_waitv v[FF_SW_WAITV_MAX];
	uint32_t *w = p;
	int j;

	memset(v, 0, sizeof(v));
	for (j = 0; j < FF_SW_WAITV_MAX; j++) {
		v[j].uaddr = (uintptr_t)&w[j];
		v[j].flags = FUTEX2_SIZE_U32 | FUTEX2_PRIVATE;
	}
	atomic_fetch_add(&ff_sw_wstarted, 1);
	syscall(SYS_futex_waitv, v, FF_SW_WAITV_MAX, 0, NULL, CLOCK_MONOTONIC);
	return NULL;
}

/*
 * Fork the neighbour (run it under policy 0, so that its waiters stay in
 * the global table) and return its pid once its waiters are queued, -1 on
 * failure.  Kill it with SIGKILL.
 */
static pid_t ff_sw_start_neighbour(void)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		static uint32_t w[FF_SW_NEIGH_WAITERS];
		pthread_attr_t attr;
		pthread_t th;
		int i;

		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, FF_SW_STACK);
		for (i = 0; i < FF_SW_NEIGH_WAITERS / FF_SW_WAITV_MAX; i++)
			if (pthread_create(&th, &attr, ff_sw_neigh_thread, &w[i * FF_SW_WAITV_MAX]))
				_exit(1);
		while (atomic_load(&ff_sw_wstarted) < FF_SW_NEIGH_WAITERS / FF_SW_WAITV_MAX)
			usleep(1000);
		usleep(100000);
		if (write(p[1], "R", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &c, 1) != 1) {
		close(p[0]);
		return -1;
	}
	close(p[0]);
	return pid;
}

#endif /* FF_SWITCH_H */
