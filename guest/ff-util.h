/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers shared by the guest programs: output lines, time, files
 * (sysctls, /proc, debugfs).
 */
#ifndef FF_UTIL_H
#define FF_UTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * Print one line (a newline is added) with a single write(): several
 * processes share the console. Exit with 3 if stdout is gone.
 */
static inline __attribute__((format(printf, 1, 2))) void ff_out(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(STDOUT_FILENO, buf, n) < 0)
		_exit(3);
}

/* An error for the benchmark's report: "FFB-ERROR WHO: ..." */
static inline __attribute__((format(printf, 2, 3))) void ff_bench_error(const char *who,
									  const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ff_out("FFB-ERROR %s: %s", who, buf);
}

/* CLOCK_MONOTONIC in ns (instructions, under QEMU -icount shift=0) */
static inline uint64_t ff_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* CLOCK_BOOTTIME in seconds: the kernel log's timestamps, roughly */
static inline double ff_uptime_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The host names the kernel on the command line, ff.label=NAME: return NAME,
 * or @def without one.
 */
static inline const char *ff_cmdline_label(const char *def)
{
	static char buf[4096];
	FILE *f = fopen("/proc/cmdline", "r");
	const char *label = def;
	char *p;

	if (!f)
		return def;
	if (fgets(buf, sizeof(buf), f)) {
		p = strstr(buf, "ff.label=");
		if (p) {
			p += strlen("ff.label=");
			p[strcspn(p, " \n")] = 0;
			label = p;
		}
	}
	fclose(f);
	return label;
}

/* The first integer in @path, or @def if it cannot be read. */
static inline int ff_read_int(const char *path, int def)
{
	FILE *f = fopen(path, "r");
	int v = def;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = def;
		fclose(f);
	}
	return v;
}

/*
 * The number of the "@key: number" line of @path (/proc/<pid>/futex_hash,
 * /proc/<pid>/task/<tid>/futex_attached), or -1 if there is none.
 */
static inline long ff_read_field(const char *path, const char *key)
{
	char line[128];
	size_t len = strlen(key);
	long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == ':') {
			v = atol(line + len + 1);
			break;
		}
	fclose(f);
	return v;
}

/* Write @val as is with one write(); return 0 or the errno. */
static inline int ff_write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), e = 0;

	if (fd < 0)
		return errno;
	if (write(fd, val, strlen(val)) < 0)
		e = errno;
	close(fd);
	return e;
}

#endif /* FF_UTIL_H */
