// SPDX-License-Identifier: GPL-2.0
/*
 * ff-badinput: invalid input to every ABI path of the private futex hash,
 * beyond what tools/testing/selftests/futex/functional/futex_priv_hash.c
 * covers (policy bounds 4/-1, bits 0/21, prctl 1/15/flags/arg5/2^30,
 * prealloc without FUTEX_PRIVATE_FLAG, EBUSY after SET_SLOTS(0)).
 *
 * Each case checks the documented errno and that the state is unchanged:
 * GET_SLOTS and /proc/self/futex_hash (slots, origin, fixed,
 * global_locked, switches) before and after, sysctl values read back.
 * Output: KTAP, one result per case; exit 1 if any failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
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
#define SYSCTL_DEFBITS	"/proc/sys/kernel/futex_private_default_hash_bits"
#define SYSCTL_MAXBITS	"/proc/sys/kernel/futex_private_max_hash_bits"
#define PRIV(op)	((op) | FUTEX_PRIVATE_FLAG)

/* Counters shared with the child processes that run the ABI cases. */
static int *counters;
#define ntest	(counters[0])
#define nfail	(counters[1])

static void result(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d ", ok ? "ok" : "not ok", ++ntest);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		nfail++;
}

static long futex(void *uaddr, int op, unsigned int val, const void *timeout,
		  void *uaddr2, unsigned int val3)
{
	return syscall(SYS_futex, uaddr, op, val, timeout, uaddr2, val3);
}

static long prealloc(unsigned int slots)
{
	return futex(NULL, PRIV(FUTEX_PREALLOC_HASH), slots, NULL, NULL, 0);
}

static long set_slots(unsigned long slots)
{
	return prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, slots, 0, 0);
}

static long get_slots(void)
{
	return prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_GET_SLOTS, 0, 0, 0);
}

/* The state that must not change: the identity lines of futex_hash. */
static void state(char *buf, size_t len)
{
	char line[128];
	FILE *f = fopen("/proc/self/futex_hash", "r");
	size_t n = 0;

	buf[0] = 0;
	if (!f) {
		snprintf(buf, len, "(no /proc/self/futex_hash: %s)", strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "slots:", 6) && strncmp(line, "origin:", 7) &&
		    strncmp(line, "fixed:", 6) && strncmp(line, "global_locked:", 14) &&
		    strncmp(line, "switches:", 9))
			continue;
		line[strcspn(line, "\n")] = ' ';
		n += snprintf(buf + n, len - n, "%s", line);
		if (n >= len)
			break;
	}
	fclose(f);
}

/* Expect -1 and errno @err (or @alt, if the order of the checks is not documented). */
static void expect_err2(long ret, int err, int alt, const char *name)
{
	int e = errno;

	if (ret != -1 || (e != err && e != alt))
		result(0, "%s # expected %s, got %ld (%s)", name, strerrorname_np(err), ret,
		       ret == -1 ? strerrorname_np(e) : "no error");
	else
		result(1, "%s", name);
}

static void expect_err(long ret, int err, const char *name)
{
	expect_err2(ret, err, err, name);
}

static char snap[512];

static void snapshot(void)
{
	state(snap, sizeof(snap));
}

static void unchanged(const char *name)
{
	char now[512];

	state(now, sizeof(now));
	result(!strcmp(now, snap), "%s_state_unchanged%s%s%s%s", name,
	       strcmp(now, snap) ? " # before: " : "", strcmp(now, snap) ? snap : "",
	       strcmp(now, snap) ? " after: " : "", strcmp(now, snap) ? now : "");
}


static void sysctl_cases(void)
{
	static const char *const knobs[] = { SYSCTL_POLICY, SYSCTL_DEFBITS, SYSCTL_MAXBITS };
	static const char *const names[] = { "policy", "default_bits", "max_bits" };
	static const char *const garbage[] = {
		"abc", "1x", "0x", "99999999999999999999", "-2147483649", "2147483648",
		"1.5", "--1", "\x01", "+",
	};
	static const char *const range[3][4] = {
		{ "-1", "4", "5", "2147483647" },
		{ "0", "-1", "21", "32" },
		{ "0", "-1", "21", "64" },
	};
	char name[128];
	unsigned int i, j;
	int old, now, e;

	for (i = 0; i < 3; i++) {
		old = ff_read_int(knobs[i], INT_MIN);
		if (old == INT_MIN) {
			result(0, "sysctl_%s_readable # cannot read %s", names[i], knobs[i]);
			continue;
		}
		for (j = 0; j < sizeof(garbage) / sizeof(garbage[0]); j++) {
			e = ff_write_file(knobs[i], garbage[j]);
			now = ff_read_int(knobs[i], INT_MIN);
			snprintf(name, sizeof(name), "sysctl_%s_garbage_%u", names[i], j);
			result(e == EINVAL && now == old, "%s # wrote \"%s\": %s, value %d -> %d%s", name,
			       garbage[j][0] == 1 ? "\\x01" : garbage[j], e ? strerrorname_np(e) : "accepted",
			       old, now, e == EINVAL && now == old ? "" : " (expected EINVAL, unchanged)");
		}
		for (j = 0; j < 4; j++) {
			e = ff_write_file(knobs[i], range[i][j]);
			now = ff_read_int(knobs[i], INT_MIN);
			snprintf(name, sizeof(name), "sysctl_%s_range_%s", names[i], range[i][j]);
			result(e == EINVAL && now == old, "%s # %s, value %d -> %d%s", name,
			       e ? strerrorname_np(e) : "accepted", old, now,
			       e == EINVAL && now == old ? "" : " (expected EINVAL, unchanged)");
			if (now != old) {
				char buf[16];

				snprintf(buf, sizeof(buf), "%d", old);
				ff_write_file(knobs[i], buf);
			}
		}
	}
}

/* In a fresh process: prctl and prealloc with bad arguments. */
static int abi_child(void)
{
	long page = sysconf(_SC_PAGESIZE), r;
	char *ro, *unmapped;
	unsigned int maxslots = 1U << ff_read_int(SYSCTL_MAXBITS, INT_MIN);
	static const unsigned long bad_slots[] = { 1, 3, 6, 15, 17, 1000, ULONG_MAX, (1UL << 63) + 1 };
	/*
	 * arg3 is an unsigned int, as in mainline: only the low 32 bits
	 * count (1UL << 32 would be 0, the global table).
	 */
	static const unsigned long big_slots[] = { 1UL << 21, 1UL << 31, (1UL << 32) | (1UL << 31),
						   (1UL << 63) | (1UL << 20) };
	char name[128];
	unsigned int i;

	ro = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unmapped = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED || unmapped == MAP_FAILED)
		return 2;
	munmap(unmapped, page);

	/* Only the low 32 bits of arg3 count, as in mainline */
	r = set_slots((1UL << 32) | 32);
	result(r == 0 && get_slots() == 32,
	       "prctl_set_slots_high_bits_ignored # SET_SLOTS(2^32 + 32) returned %ld, GET_SLOTS %ld, expected 0 and 32",
	       r, get_slots());
	/* A table of 16 slots to keep unchanged. */
	if (set_slots(16) || get_slots() != 16) {
		result(0, "abi_setup # SET_SLOTS(16): %s", strerror(errno));
		return 1;
	}
	snapshot();
	for (i = 0; i < sizeof(bad_slots) / sizeof(bad_slots[0]); i++) {
		snprintf(name, sizeof(name), "prctl_set_slots_%#lx_einval", bad_slots[i]);
		expect_err(set_slots(bad_slots[i]), EINVAL, name);
	}
	for (i = 0; i < sizeof(big_slots) / sizeof(big_slots[0]); i++) {
		snprintf(name, sizeof(name), "prctl_set_slots_%#lx_enomem", big_slots[i]);
		expect_err(set_slots(big_slots[i]), ENOMEM, name);
	}
	expect_err(prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, 32, ULONG_MAX, 0), EINVAL,
		   "prctl_set_flags_all_ones");
	expect_err(prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, 32, 1UL << 63, 0), EINVAL,
		   "prctl_set_flags_bit63");
	expect_err(prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, 0, 1, 0), EINVAL,
		   "prctl_set_global_with_flags");
	/* mainline ignores arg5 */
	r = prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_GET_SLOTS, 0, 0, ~0UL);
	result(r == 16, "prctl_get_arg5_ignored # returned %ld, expected 16", r);
	r = prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, 16, 0, ~0UL);
	result(r == 0, "prctl_set_arg5_ignored # returned %ld (%s), expected 0",
	       r, r < 0 ? strerrorname_np(errno) : "-");
	expect_err(prctl(PR_FUTEX_HASH, 0, 16, 0, 0), EINVAL, "prctl_op_0");
	expect_err(prctl(PR_FUTEX_HASH, 3, 16, 0, 0), EINVAL, "prctl_op_3");
	expect_err(prctl(PR_FUTEX_HASH, ULONG_MAX, 16, 0, 0), EINVAL, "prctl_op_all_ones");
	unchanged("prctl_bad");
	r = get_slots();
	result(r == 16, "prctl_get_after_bad_input # GET_SLOTS %ld, expected 16", r);

	/* FUTEX_PREALLOC_HASH: flags and modifiers */
	snapshot();
	expect_err(futex(NULL, FUTEX_PREALLOC_HASH, 64, NULL, NULL, 0), EINVAL, "prealloc_shared_einval");
	expect_err(futex(NULL, PRIV(FUTEX_PREALLOC_HASH) | FUTEX_CLOCK_REALTIME, 64, NULL, NULL, 0),
		   ENOSYS, "prealloc_clock_realtime_enosys");
	expect_err(futex(NULL, FUTEX_PREALLOC_HASH | FUTEX_CLOCK_REALTIME, 64, NULL, NULL, 0),
		   ENOSYS, "prealloc_shared_clock_realtime_enosys");
	unchanged("prealloc_bad_flags");

	/*
	 * uaddr, timeout, uaddr2 and val3 are unused by FUTEX_PREALLOC_HASH
	 * and must be 0 (EINVAL otherwise, so that they can be given a
	 * meaning later), whatever they point to: no fault, no table change.
	 */
	snapshot();
	{
		static const struct { const char *name; void *addr; } addrs[] = {
			{ "unaligned", (void *)0x1001 },
			{ "kernel", (void *)0xffffffff81000000UL },
			{ "minus_one", (void *)-1L },
		};
		char name[64];

		for (i = 0; i < 3; i++) {
			snprintf(name, sizeof(name), "prealloc_uaddr_%s_einval", addrs[i].name);
			expect_err(futex(addrs[i].addr, PRIV(FUTEX_PREALLOC_HASH), 16, NULL, NULL, 0),
				   EINVAL, name);
			snprintf(name, sizeof(name), "prealloc_uaddr2_%s_einval", addrs[i].name);
			expect_err(futex(NULL, PRIV(FUTEX_PREALLOC_HASH), 16, NULL, addrs[i].addr, 0),
				   EINVAL, name);
			snprintf(name, sizeof(name), "prealloc_timeout_%s_einval", addrs[i].name);
			expect_err(futex(NULL, PRIV(FUTEX_PREALLOC_HASH), 16, addrs[i].addr, NULL, 0),
				   EINVAL, name);
		}
		expect_err(futex(NULL, PRIV(FUTEX_PREALLOC_HASH), 16, NULL, NULL, ~0U), EINVAL,
			   "prealloc_val3_einval");
		expect_err(futex(unmapped + 1, PRIV(FUTEX_PREALLOC_HASH), 16, unmapped, unmapped, 0),
			   EINVAL, "prealloc_uaddr_unmapped_einval");
		expect_err(futex(ro, PRIV(FUTEX_PREALLOC_HASH), 16, ro, ro, 0), EINVAL,
			   "prealloc_uaddr_readonly_einval");
	}
	unchanged("prealloc_unused_args");
	r = futex(NULL, PRIV(FUTEX_PREALLOC_HASH), 16, NULL, NULL, 0);
	result(r == 16, "prealloc_zero_unused_args_ok # returned %ld (%s), expected 16",
	       r, r < 0 ? strerrorname_np(errno) : "-");

	/* Sizes: huge values clamp to the maximum instead of wrapping to 0. */
	{
		static const unsigned int vals[] = { 0x80000001U, UINT_MAX, 0x7fffffffU };
		for (i = 0; i < 3; i++) {
			r = prealloc(vals[i]);
			result(r == maxslots && get_slots() == maxslots,
			       "prealloc_%#x_clamped # returned %ld, GET_SLOTS %ld, expected %u",
			       vals[i], r, get_slots(), maxslots);
		}
		r = prealloc(0);
		result(r == maxslots, "prealloc_0_never_shrinks # returned %ld, expected %u", r, maxslots);
	}

	/* The futex operations keep their errnos on a private table. */
	{
		unsigned int word = 0, *un = (unsigned int *)((char *)&word + 1);
		struct futex_waitv wv = { .uaddr = (uintptr_t)un, .val = 0,
					  .flags = FUTEX2_SIZE_U32 | FUTEX2_PRIVATE };
		struct timespec ts = { 0, 1000000 };

		expect_err(futex(un, PRIV(FUTEX_WAIT), 0, &ts, NULL, 0), EINVAL, "wait_unaligned_einval");
		expect_err(futex(unmapped, PRIV(FUTEX_WAIT), 0, &ts, NULL, 0), EFAULT, "wait_unmapped_efault");
		expect_err(futex(ro, PRIV(FUTEX_WAIT), 1, &ts, NULL, 0), EAGAIN, "wait_readonly_eagain");
		expect_err(futex(ro, PRIV(FUTEX_LOCK_PI), 0, NULL, NULL, 0), EFAULT, "lock_pi_readonly_efault");
		expect_err(futex(unmapped, PRIV(FUTEX_LOCK_PI), 0, NULL, NULL, 0), EFAULT,
			   "lock_pi_unmapped_efault");
		expect_err(futex(un, PRIV(FUTEX_WAKE), 1, NULL, NULL, 0), EINVAL, "wake_unaligned_einval");
		expect_err(futex(&word, PRIV(FUTEX_CMP_REQUEUE), 1, (void *)1L, unmapped, 1), EAGAIN,
			   "cmp_requeue_mismatch_eagain");
		expect_err(futex(&word, PRIV(FUTEX_CMP_REQUEUE), 1, (void *)1L, un, 0), EINVAL,
			   "cmp_requeue_unaligned_target_einval");
		expect_err(syscall(SYS_futex_waitv, &wv, 1, 0, NULL, CLOCK_MONOTONIC), EINVAL,
			   "waitv_unaligned_einval");
		wv.uaddr = (uintptr_t)unmapped;
		expect_err(syscall(SYS_futex_waitv, &wv, 1, 0, NULL, CLOCK_MONOTONIC), EFAULT,
			   "waitv_unmapped_efault");
		expect_err(syscall(SYS_futex_waitv, unmapped, 1, 0, NULL, CLOCK_MONOTONIC), EFAULT,
			   "waitv_vector_unmapped_efault");
	}

	/* After the move to the global table: EBUSY everywhere, GET 0. */
	if (set_slots(0)) {
		result(0, "set_global # SET_SLOTS(0): %s", strerror(errno));
		return 1;
	}
	snapshot();
	expect_err(set_slots(2), EBUSY, "global_set_2_ebusy");
	expect_err2(set_slots(1UL << 40), EBUSY, ENOMEM, "global_set_huge_ebusy_or_enomem");
	expect_err(set_slots(0), EBUSY, "global_set_0_again_ebusy");
	expect_err(prealloc(0), EBUSY, "global_prealloc_0_ebusy");
	expect_err(prealloc(UINT_MAX), EBUSY, "global_prealloc_max_ebusy");
	expect_err2(set_slots(3), EINVAL, EBUSY, "global_set_3_einval_or_ebusy");
	unchanged("global");
	r = get_slots();
	result(r == 0, "global_get_slots_0 # GET_SLOTS %ld", r);
	{
		unsigned int w = 0;
		struct timespec ts = { 0, 1000000 };

		r = futex(&w, PRIV(FUTEX_WAIT), 0, &ts, NULL, 0);
		result(r == -1 && errno == ETIMEDOUT, "global_futex_still_works # FUTEX_WAIT: %ld %s", r,
		       strerrorname_np(errno));
	}
	return nfail ? 1 : 0;
}

/* Policy 0: every call EPERM, nothing allocated. */
static int policy_off_child(void)
{
	snapshot();
	expect_err(set_slots(16), EPERM, "off_set_16_eperm");
	expect_err(set_slots(0), EPERM, "off_set_0_eperm");
	expect_err2(set_slots(3), EPERM, EINVAL, "off_set_3_eperm_or_einval");
	expect_err(prealloc(UINT_MAX), EPERM, "off_prealloc_max_eperm");
	/* GET_SLOTS reports the table in use under every policy */
	result(get_slots() == 0, "off_get_slots_0 # GET_SLOTS under policy 0");
	unchanged("off");
	return nfail ? 1 : 0;
}

static int in_child(int (*fn)(void))
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (!pid)
		_exit(fn());
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}

int main(void)
{
	int policy = ff_read_int(SYSCTL_POLICY, INT_MIN), rc = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	counters = mmap(NULL, 2 * sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (counters == MAP_FAILED)
		return 2;
	printf("KTAP version 1\n");
	if (policy == INT_MIN) {
		printf("1..0 # SKIP kernel without the fastfutex series\n");
		return 4;
	}
	sysctl_cases();
	if (ff_write_file(SYSCTL_POLICY, "1"))
		return 1;
	rc |= in_child(abi_child);
	ff_write_file(SYSCTL_POLICY, "0");
	rc |= in_child(policy_off_child);
	{
		char buf[16];

		snprintf(buf, sizeof(buf), "%d", policy);
		ff_write_file(SYSCTL_POLICY, buf);
	}
	printf("1..%d\n", ntest);
	printf("# badinput-summary: cases=%d failed=%d children=%s\n", ntest, nfail, rc ? "FAILED" : "ok");
	return nfail || rc ? 1 : 0;
}
