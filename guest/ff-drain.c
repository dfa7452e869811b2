// SPDX-License-Identifier: GPL-2.0
/*
 * ff-drain: the cost of a process's automatic table switch against the
 * number of waiters it moves, and whether other processes' switches delay
 * it (make bench PARTS=drain, TCG icount).
 *
 *   ff-drain drain [-n N,N,...] [KERNEL]
 *	For each N, a new process parks N io_uring FUTEX_WAITs (IOSQE_ASYNC:
 *	io-wq workers queue them, which ask for no table) on N private words,
 *	all in the global table; then its main thread makes one private
 *	FUTEX_WAKE, which queues its worker. Reported: the time from that
 *	wake until /proc/self/futex_hash shows the grown table (the first
 *	table, the move of every waiter out of the global table, the growth
 *	to a bucket per waiter and the move into it), the waiters moved and
 *	the final size.
 *	BENCH drain KERNEL/1 N switch_ms|moved|slots VALUE
 *
 *   ff-drain worker [-a ATTACKERS] [-n N] [KERNEL]
 *	A victim process started under policy 2 makes one private FUTEX_WAKE;
 *	reported: the time until its first table exists, alone and while
 *	ATTACKERS processes (default 8) each make their worker drain N
 *	(default 100,000) waiters parked as above.
 *	BENCH worker KERNEL/2 alone|AxN first_table_ms|complete_ms VALUE
 *	(first_table_ms: the table is in use, PR_FUTEX_HASH_GET_SLOTS sees it;
 *	complete_ms: the switch is complete, its waiters all moved)
 *	BENCH worker KERNEL/1 AxN attacker_switch_ms VALUE (the slowest)
 *
 * Times are CLOCK_MONOTONIC: under QEMU -icount shift=0, 1 ms is 10^6
 * executed instructions of all vCPUs. Errors: "FFB-ERROR ..." lines and
 * exit status 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <linux/io_uring.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ff-abi.h"
#include "ff-util.h"

#define POLICY		"/proc/sys/kernel/futex_private_hash"
#define SQ_ENTRIES	4096
#define MAX_N		400000
#define POLL_US		1000
#define LIMIT_S		600

static const char *kernel;

#define error(...) ff_bench_error("ff-drain", __VA_ARGS__)

/* An io_uring with its submission ring mapped: just what parking needs */
struct ring {
	int fd;
	unsigned int *sq_tail, *sq_mask, *sq_array;
	struct io_uring_sqe *sqes;
};

static int ring_init(struct ring *r)
{
	struct io_uring_params p = { 0 };
	void *sq, *sqes;
	size_t sq_len;

	/* Completions come only at teardown; they may overflow */
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 2 * SQ_ENTRIES;
	r->fd = syscall(__NR_io_uring_setup, SQ_ENTRIES, &p);
	if (r->fd < 0)
		return -errno;
	sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned int);
	sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		  r->fd, IORING_OFF_SQ_RING);
	sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe),
		    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
		    IORING_OFF_SQES);
	if (sq == MAP_FAILED || sqes == MAP_FAILED)
		return -errno;
	r->sq_tail = (unsigned int *)((char *)sq + p.sq_off.tail);
	r->sq_mask = (unsigned int *)((char *)sq + p.sq_off.ring_mask);
	r->sq_array = (unsigned int *)((char *)sq + p.sq_off.array);
	r->sqes = sqes;
	return 0;
}

/*
 * Queue @n asynchronous FUTEX_WAITs, one per word of @words (all 0), in
 * batches of SQ_ENTRIES. Return 0 or a negative errno.
 */
static int park(struct ring *r, uint32_t *words, long n)
{
	long i = 0;

	while (i < n) {
		unsigned int tail = *r->sq_tail, k, batch;
		long ret;

		batch = n - i < SQ_ENTRIES ? n - i : SQ_ENTRIES;
		for (k = 0; k < batch; k++, i++) {
			unsigned int idx = (tail + k) & *r->sq_mask;
			struct io_uring_sqe *sqe = &r->sqes[idx];

			memset(sqe, 0, sizeof(*sqe));
			sqe->opcode = IORING_OP_FUTEX_WAIT;
			sqe->flags = IOSQE_ASYNC;
			sqe->fd = FUTEX2_SIZE_U32 | FUTEX2_PRIVATE;
			sqe->addr = (uintptr_t)&words[i];
			sqe->addr2 = 0;
			sqe->addr3 = FUTEX_BITSET_MATCH_ANY;
			sqe->user_data = i;
			r->sq_array[idx] = idx;
		}
		__atomic_store_n(r->sq_tail, tail + batch, __ATOMIC_RELEASE);
		ret = syscall(__NR_io_uring_enter, r->fd, batch, 0, 0, NULL, 0);
		if (ret < 0)
			return -errno;
		if (ret != batch)
			return -EAGAIN;
	}
	return 0;
}

/* A "key: value" figure of /proc/self/futex_hash, -1 if missing */
static long hash_field(const char *key)
{
	return ff_read_field("/proc/self/futex_hash", key);
}

/*
 * Wait until the io-wq workers have queued all @n waiters: the process's
 * CPU time stops growing. Under -icount an idle guest's time jumps ahead.
 */
static void settle(void)
{
	struct timespec a, b;
	int still = 0;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	while (still < 3) {
		usleep(100000);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
		if (b.tv_sec == a.tv_sec && b.tv_nsec - a.tv_nsec < 1000000)
			still++;
		else
			still = 0;
		a = b;
	}
}

/*
 * Wait until the table has at least @slots buckets after at least
 * @switches switches, at most LIMIT_S seconds; return the time in ns from
 * @t0, or 0 on timeout.
 */
static uint64_t wait_table(uint64_t t0, long slots, long switches)
{
	uint64_t now;

	for (;;) {
		now = ff_now_ns();
		if (hash_field("slots") >= slots && hash_field("switches") >= switches)
			return now - t0;
		if (now - t0 > (uint64_t)LIMIT_S * 1000000000ull)
			return 0;
		usleep(POLL_US);
	}
}

/* The size an automatic switch grows to for @n waiters: see futex_hash_load_slots() */
static long expected_slots(long n)
{
	long max = 1L << ff_read_int("/proc/sys/kernel/futex_private_max_hash_bits", 16);
	long s = 16;

	while (s < n && s < max)
		s <<= 1;
	return s;
}

/*
 * In a new process: park @n waiters, tell @ready, wait for @go, kick the
 * worker and time the switch; write the time in ns (0 on failure) to
 * @done, then wait to be killed (its teardown is not measured).
 */
static void parker(long n, int ready, int go, int done, int stay)
{
	uint32_t word = 0, *words;
	uint64_t t0, ns = 0;
	struct ring r = { 0 };
	char c;
	int ret;

	words = mmap(NULL, n * sizeof(*words), PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (words == MAP_FAILED) {
		error("mmap of %ld words: %s", n, strerror(errno));
		_exit(1);
	}
	ret = ring_init(&r);
	if (!ret)
		ret = park(&r, words, n);
	if (ret) {
		error("io_uring FUTEX_WAIT x %ld: %s", n, strerror(-ret));
		_exit(1);
	}
	settle();
	if (hash_field("slots") != 0) {
		error("%ld parked waiters: the process has a table already", n);
		_exit(1);
	}
	if (write(ready, "r", 1) != 1 || read(go, &c, 1) != 1)
		_exit(1);
	t0 = ff_now_ns();
	/* Private, from a thread of the process: the worker is queued */
	syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	ns = wait_table(t0, expected_slots(n), 2);
	if (!ns)
		error("%ld waiters: no grown table after %d s (slots %ld, switches %ld)",
		      n, LIMIT_S, hash_field("slots"), hash_field("switches"));
	else if (hash_field("migrated") < 2 * n)
		error("%ld waiters: only %ld moves", n, hash_field("migrated"));
	if (write(done, &ns, sizeof(ns)) != sizeof(ns))
		_exit(1);
	if (stay)
		pause();
	_exit(ns ? 0 : 1);
}

static int parse_list(char *s, long *v, int max)
{
	int k = 0;

	for (s = strtok(s, ","); s && k < max; s = strtok(NULL, ","))
		v[k++] = strtol(s, NULL, 0);
	return k;
}

static int drain(long *ns_list, int nr)
{
	int i, status, fail = 0;

	for (i = 0; i < nr; i++) {
		int rp[2], gp[2], dp[2];
		long n = ns_list[i];
		uint64_t ns = 0;
		pid_t pid;
		char c;

		if (n < 1 || n > MAX_N) {
			error("waiters %ld out of range 1-%d", n, MAX_N);
			return 1;
		}
		if (pipe(rp) || pipe(gp) || pipe(dp))
			return 1;
		pid = fork();
		if (!pid)
			parker(n, rp[1], gp[0], dp[1], 0);
		ff_out("FFB-PROGRESS drain: %ld waiters parking", n);
		if (read(rp[0], &c, 1) != 1 || write(gp[1], "g", 1) != 1 ||
		    read(dp[0], &ns, sizeof(ns)) != sizeof(ns))
			ns = 0;
		waitpid(pid, &status, 0);
		if (!ns || !WIFEXITED(status) || WEXITSTATUS(status)) {
			error("drain of %ld waiters failed", n);
			fail = 1;
		} else {
			ff_out("BENCH drain %s/1 %ld switch_ms %.3f", kernel, n, ns / 1e6);
		}
		close(rp[0]); close(rp[1]); close(gp[0]); close(gp[1]);
		close(dp[0]); close(dp[1]);
	}
	return fail;
}

/*
 * A new process, created under policy 2: the time until its first table is
 * in use (returned) and until its switch is complete (*done: the grace
 * period and the moves, counted in "switches").
 */
static uint64_t victim(uint64_t *done)
{
	uint64_t ns[2] = { 0, 0 };
	int p[2], status;
	pid_t pid;

	if (pipe(p))
		return 0;
	pid = fork();
	if (!pid) {
		uint32_t word = 0;
		uint64_t t0 = ff_now_ns();

		syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		ns[0] = wait_table(t0, 1, 0);
		ns[1] = wait_table(t0, 1, 1);
		if (write(p[1], ns, sizeof(ns)) != sizeof(ns))
			_exit(1);
		_exit(0);
	}
	if (read(p[0], ns, sizeof(ns)) != sizeof(ns))
		ns[0] = ns[1] = 0;
	waitpid(pid, &status, 0);
	close(p[0]);
	close(p[1]);
	*done = ns[1];
	return ns[0];
}

static int worker(int attackers, long n)
{
	int rp[2], gp[2], dp[2], i, fail = 0;
	pid_t pids[64];
	uint64_t ns, done, worst = 0;
	char c;

	if (attackers < 1 || attackers > 64 || n < 1 || n > MAX_N) {
		error("worker: -a 1-64 and -n 1-%d", MAX_N);
		return 1;
	}
	if (ff_write_file(POLICY, "2")) {
		error("cannot set %s: %s", POLICY, strerror(errno));
		return 1;
	}
	ns = victim(&done);
	if (!ns || !done) {
		error("victim alone: no table");
		fail = 1;
	}
	ff_out("BENCH worker %s/2 alone first_table_ms %.3f", kernel, ns / 1e6);
	ff_out("BENCH worker %s/2 alone complete_ms %.3f", kernel, done / 1e6);

	/* Attackers under policy 1: their tables come from their conflicts */
	ff_write_file(POLICY, "1");
	if (pipe(rp) || pipe(gp) || pipe(dp))
		return 1;
	for (i = 0; i < attackers; i++) {
		pids[i] = fork();
		if (!pids[i])
			parker(n, rp[1], gp[0], dp[1], 1);
	}
	ff_out("FFB-PROGRESS worker: %d attackers parking %ld waiters each", attackers, n);
	for (i = 0; i < attackers; i++)
		if (read(rp[0], &c, 1) != 1)
			fail = 1;
	ff_write_file(POLICY, "2");
	/* All attackers' workers queued, then the victim's */
	for (i = 0; i < attackers; i++)
		if (write(gp[1], "g", 1) != 1)
			fail = 1;
	usleep(10000);
	ns = victim(&done);
	if (!ns || !done) {
		error("victim with %d attackers: no table", attackers);
		fail = 1;
	}
	ff_out("BENCH worker %s/2 %dx%ld first_table_ms %.3f", kernel, attackers, n, ns / 1e6);
	ff_out("BENCH worker %s/2 %dx%ld complete_ms %.3f", kernel, attackers, n, done / 1e6);
	for (i = 0; i < attackers; i++) {
		uint64_t a = 0;

		if (read(dp[0], &a, sizeof(a)) != sizeof(a) || !a)
			fail = 1;
		if (a > worst)
			worst = a;
	}
	ff_out("BENCH worker %s/1 %dx%ld attacker_switch_ms %.3f", kernel, attackers, n,
	       worst / 1e6);
	for (i = 0; i < attackers; i++) {
		kill(pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
	}
	ff_write_file(POLICY, "1");
	return fail;
}

int main(int argc, char **argv)
{
	long list[16] = { 12500, 25000, 50000, 100000, 200000 };
	int nr = 5, attackers = 8, opt;
	const char *mode = argc > 1 ? argv[1] : "";

	if (strcmp(mode, "drain") && strcmp(mode, "worker")) {
		fprintf(stderr, "usage: ff-drain drain [-n N,...] [KERNEL]\n"
			"       ff-drain worker [-a ATTACKERS] [-n N] [KERNEL]\n");
		return 2;
	}
	if (!strcmp(mode, "worker")) {
		list[0] = 100000;
		nr = 1;
	}
	optind = 2;
	while ((opt = getopt(argc, argv, "n:a:")) != -1) {
		switch (opt) {
		case 'n':
			nr = parse_list(optarg, list, 16);
			break;
		case 'a':
			attackers = atoi(optarg);
			break;
		default:
			return 2;
		}
	}
	kernel = optind < argc ? argv[optind] : ff_cmdline_label("kernel");
	if (access("/proc/self/futex_hash", R_OK)) {
		error("/proc/self/futex_hash missing: a kernel without the series");
		return 1;
	}
	if (!strcmp(mode, "drain"))
		return drain(list, nr);
	return worker(attackers, list[0]);
}
