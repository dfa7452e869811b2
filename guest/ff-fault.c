// SPDX-License-Identifier: GPL-2.0
/*
 * ff-fault: deliberate faults for the harness self-test.  Each mode must
 * make the host-side report fail with the right reason.
 *
 *   ff-fault notok   print a KTAP stream with one failing test, exit 1
 *   ff-fault hang    block forever (the suite timeout must kill it)
 *   ff-fault warn    make the kernel hit a WARN_ON via LKDTM, exit 0
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int provoke(const char *what)
{
	const char *path = "/sys/kernel/debug/provoke-crash/DIRECT";
	int fd = open(path, O_WRONLY);

	if (fd < 0) {
		fprintf(stderr, "ff-fault: open %s: %s (kernel without LKDTM?)\n",
			path, strerror(errno));
		return 1;
	}
	if (write(fd, what, strlen(what)) < 0 && errno != EINVAL) {
		fprintf(stderr, "ff-fault: write %s: %s\n", what, strerror(errno));
		close(fd);
		return 1;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "notok")) {
		printf("KTAP version 1\n1..1\nnot ok 1 deliberate_failure\n");
		return 1;
	}
	if (!strcmp(mode, "hang")) {
		for (;;)
			pause();
	}
	if (!strcmp(mode, "warn"))
		return provoke("WARNING");
	fprintf(stderr, "usage: ff-fault notok|hang|warn\n");
	return 2;
}
