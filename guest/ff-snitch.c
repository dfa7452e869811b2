// SPDX-License-Identifier: GPL-2.0
/*
 * ff-snitch: can one process see another's futex waiters by timing its own
 * futex operations on the global table (KernelSnitch, NDSS 2025)?
 * make bench PARTS=snitch, TCG icount.
 *
 *   ff-snitch [-m POLICY,...] [-p PAIRS] [-t THREADS] [-w MS,...] [KERNEL]
 *	For each policy (none on a kernel without kernel.futex_private_hash),
 *	and each form of the victim's waits, an attacker process (uid 65534)
 *	times FUTEX_WAKE on PAIRS (page, offset) words of a memfd of its own,
 *	shared futexes which hash into the global table: the fastest of
 *	REPS calls per word, once before and once while a victim process
 *	(uid 1000, created under the policy) has THREADS threads asleep:
 *	  private: FUTEX_WAIT_PRIVATE on words of its private memory;
 *	  shared:  FUTEX_WAIT without FUTEX_PRIVATE_FLAG on words of its
 *		   private memory, as pthread_join() waits on a thread id;
 *	  none:    no victim at all (the control: what noise alone shows).
 *	The attacker starts timing MS milliseconds (default 20) after the
 *	victim's threads went to sleep; each MS of -w is a trial of its own.
 *	A word whose call got slower by more than THRESH ns (instructions
 *	under -icount shift=0) shares a bucket with one of the victim's
 *	waiters: the attacker detected it.
 *	BENCH snitch KERNEL/POLICY FORM@MS detected VALUE
 *	BENCH snitch KERNEL/POLICY all words VALUE
 *
 * Under -icount, the time of a call is its instruction count: a wake on a
 * bucket without waiters returns before taking the lock, one on a bucket
 * with a foreign waiter locks it and walks the chain, some hundred
 * instructions more. Errors: "FFB-ERROR ..." lines and exit status 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
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
#define WORDS_PER_PAGE	8
#define REPS		5
#define THRESH		40
#define MAX_PAIRS	65536
#define MAX_THREADS	64
#define ATTACKER_UID	65534
#define VICTIM_UID	1000

static const char *kernel;
static int nthreads = 8;
static int settle_ms = 20;

#define error(...) ff_bench_error("snitch", __VA_ARGS__)

static long futex(uint32_t *uaddr, int op, uint32_t val)
{
	return syscall(SYS_futex, uaddr, op, val, NULL, NULL, 0);
}

/* The fastest of REPS shared FUTEX_WAKEs on each word, in ns */
static void time_words(uint32_t **words, int n, uint64_t *ns)
{
	int i, r;

	for (i = 0; i < n; i++) {
		uint64_t best = UINT64_MAX;

		for (r = 0; r < REPS; r++) {
			uint64_t t0 = ff_now_ns(), t;

			futex(words[i], FUTEX_WAKE, 1);
			t = ff_now_ns() - t0;
			if (t < best)
				best = t;
		}
		ns[i] = best;
	}
}

/*
 * The attacker: time the words, say so on @ready, wait for @go (the
 * victim asleep), time them again, write the number of slower words to
 * @result.
 */
static void attacker(int pairs, int ready, int go, int result)
{
	uint64_t *before, *after;
	uint32_t **words;
	long detected = 0;
	int fd, i, pages;
	char *map, c;

	if (setgid(ATTACKER_UID) || setuid(ATTACKER_UID))
		_exit(2);
	pages = (pairs + WORDS_PER_PAGE - 1) / WORDS_PER_PAGE;
	fd = memfd_create("ff-snitch", 0);
	if (fd < 0 || ftruncate(fd, (off_t)pages * 4096))
		_exit(3);
	map = mmap(NULL, (size_t)pages * 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED, fd, 0);
	words = calloc(pairs, sizeof(*words));
	before = calloc(pairs, sizeof(*before));
	after = calloc(pairs, sizeof(*after));
	if (map == MAP_FAILED || !words || !before || !after)
		_exit(4);
	/* Spread over the page, every page faulted in before timing */
	for (i = 0; i < pairs; i++) {
		words[i] = (uint32_t *)(map + (size_t)(i / WORDS_PER_PAGE) * 4096 +
					(i % WORDS_PER_PAGE) * (4096 / WORDS_PER_PAGE));
		*words[i] = 0;
	}
	time_words(words, pairs, before);
	if (write(ready, "r", 1) != 1 || read(go, &c, 1) != 1)
		_exit(5);
	time_words(words, pairs, after);
	for (i = 0; i < pairs; i++)
		if (after[i] > before[i] + THRESH)
			detected++;
	if (write(result, &detected, sizeof(detected)) != sizeof(detected))
		_exit(6);
	_exit(0);
}

static uint32_t *victim_words;
static int victim_op;

static void *victim_thread(void *arg)
{
	uint32_t *w = arg;

	for (;;)
		futex(w, victim_op, 0);
	return NULL;
}

/*
 * The victim: @nthreads threads asleep on words of its private memory,
 * then "v" on @ready; it stays until killed.
 */
static void victim(int op, int ready)
{
	pthread_t t;
	int i;

	if (setgid(VICTIM_UID) || setuid(VICTIM_UID))
		_exit(2);
	victim_op = op;
	/* One word a page: the waiters hash apart, as unrelated futexes */
	victim_words = mmap(NULL, (size_t)nthreads * 4096, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (victim_words == MAP_FAILED)
		_exit(3);
	for (i = 0; i < nthreads; i++) {
		uint32_t *w = victim_words + i * (4096 / sizeof(uint32_t));

		*w = 0;
		if (pthread_create(&t, NULL, victim_thread, w))
			_exit(4);
	}
	/* Every thread asleep, then as long as asked (guest time) */
	usleep(20000);
	usleep(settle_ms * 1000);
	if (write(ready, "v", 1) != 1)
		_exit(5);
	for (;;)
		pause();
}

/* One trial: the number of words the attacker found slower, -1 on error */
static long trial(int pairs, const char *form)
{
	int ar[2], ag[2], res[2], vr[2], status;
	pid_t a, v = 0;
	long detected = -1;
	char c;

	if (pipe(ar) || pipe(ag) || pipe(res) || pipe(vr))
		return -1;
	a = fork();
	if (!a)
		attacker(pairs, ar[1], ag[0], res[1]);
	if (a < 0 || read(ar[0], &c, 1) != 1)
		goto out;
	if (strcmp(form, "none")) {
		v = fork();
		if (!v)
			victim(strcmp(form, "private") ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE,
			       vr[1]);
		if (v < 0 || read(vr[0], &c, 1) != 1) {
			error("%s: the victim did not start", form);
			goto out;
		}
	}
	if (write(ag[1], "g", 1) != 1 ||
	    read(res[0], &detected, sizeof(detected)) != sizeof(detected))
		detected = -1;
out:
	if (v > 0) {
		kill(v, SIGKILL);
		waitpid(v, &status, 0);
	}
	if (a > 0) {
		kill(a, SIGKILL);
		waitpid(a, &status, 0);
	}
	close(ar[0]); close(ar[1]); close(ag[0]); close(ag[1]);
	close(res[0]); close(res[1]); close(vr[0]); close(vr[1]);
	return detected;
}

int main(int argc, char **argv)
{
	static const char * const forms[] = { "none", "private", "shared" };
	char *policies = NULL, *p, label[32], *waits = "20";
	int opt, pairs = 8192, fail = 0, nw = 0, w;
	int wait_list[8];
	unsigned int f;

	while ((opt = getopt(argc, argv, "m:p:t:w:")) != -1) {
		switch (opt) {
		case 'm': policies = optarg; break;
		case 'p': pairs = atoi(optarg); break;
		case 't': nthreads = atoi(optarg); break;
		case 'w': waits = optarg; break;
		default:
			fprintf(stderr, "usage: ff-snitch [-m POLICY,...] [-p PAIRS] [-t THREADS] [-w MS,...] [KERNEL]\n");
			return 2;
		}
	}
	for (p = strtok(waits, ","); p && nw < 8; p = strtok(NULL, ","))
		wait_list[nw++] = atoi(p);
	kernel = optind < argc ? argv[optind] : ff_cmdline_label("kernel");
	if (pairs < 1 || pairs > MAX_PAIRS || nthreads < 1 || nthreads > MAX_THREADS || !nw) {
		error("-p 1-%d, -t 1-%d and -w MS,...", MAX_PAIRS, MAX_THREADS);
		return 1;
	}
	for (w = 0; w < nw; w++) {
		if (wait_list[w] < 0 || wait_list[w] > 10000) {
			error("-w %d: 0-10000 ms", wait_list[w]);
			return 1;
		}
	}
	if (access(POLICY, F_OK))
		policies = NULL;	/* vanilla: one round, no policy */
	else if (!policies)
		policies = strdup("0,1,2,3");

	p = policies ? strtok(policies, ",") : NULL;
	do {
		if (p && ff_write_file(POLICY, p)) {
			error("cannot set %s to %s: %s", POLICY, p, strerror(errno));
			return 1;
		}
		snprintf(label, sizeof(label), "%s", p ? p : "-");
		for (w = 0; w < nw; w++) {
			settle_ms = wait_list[w];
			for (f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
				long n = trial(pairs, forms[f]);

				if (n < 0) {
					error("policy %s, form %s: trial failed", label, forms[f]);
					fail = 1;
					continue;
				}
				ff_out("BENCH snitch %s/%s %s@%d detected %ld", kernel, label,
				       forms[f], settle_ms, n);
			}
		}
		ff_out("BENCH snitch %s/%s all words %d", kernel, label, pairs);
	} while (p && (p = strtok(NULL, ",")));
	if (policies && !access(POLICY, W_OK))
		ff_write_file(POLICY, "1");
	return fail;
}
