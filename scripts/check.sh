#!/usr/bin/env bash
# make check: checkpatch --strict on every patch of the series, shellcheck on
# every script.  Fails on any error, warning or check.
#
# usage: check.sh <kernel-tree>
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tree=${1:?usage: check.sh <kernel-tree>}
status=0

cd "$top"
echo "check: shellcheck"
mapfile -t scripts < <(ls scripts/*.sh .ci/run guest/init guest/ff-run-suite guest/ff-policy guest/ff-fuzz guest/ff-kmemleak guest/ff-peer-stress guest/ff-perf guest/ff-gcov-dump 2>/dev/null)
shellcheck "${scripts[@]}" || status=1

[ -x "$tree/scripts/checkpatch.pl" ] || { echo "check: error: no $tree/scripts/checkpatch.pl (run 'make tree')" >&2; exit 1; }
# The two kinds of finding this project accepts, and only these:
# - FILE_PATH_CHANGES ("does MAINTAINERS need updating?"), raised for every
#   new file: the series' new files live under kernel/futex/,
#   tools/testing/selftests/futex/ and Documentation/locking/, which the
#   FUTEX SUBSYSTEM entry already covers (the series adds its trace header);
# - OPEN_ENDED_LINE and PARENTHESIS_ALIGNMENT inside include/trace/events/,
#   where the TRACE_EVENT() layout every trace header uses triggers them;
# - ENOSYS inside kernel/futex/ and tools/testing/selftests/futex/: futex(2)
#   defines ENOSYS for an operation the kernel does not support and for
#   FUTEX_CLOCK_REALTIME with a command that takes no absolute timeout
#   (man 2 futex), which the attached futex commands follow.
# Reads terse findings on stdin, prints the ones that are not accepted.
accepted() {
	awk -v patch="$1" '
	BEGIN {
		while ((getline l < patch) > 0) {
			n++
			if (l ~ /^\+\+\+ b\//) cur = substr(l, 7)
			file[n] = cur
		}
	}
	{
		split($0, f, ":")
		line = f[2] + 0
		type = f[4]
		path = file[line]
		if (type == "FILE_PATH_CHANGES") next
		if ((type == "OPEN_ENDED_LINE" || type == "PARENTHESIS_ALIGNMENT") &&
		    path ~ /^include\/trace\/events\//) next
		if (type == "ENOSYS" &&
		    path ~ /^(kernel\/futex|tools\/testing\/selftests\/futex)\//) next
		print
	}'
}

mapfile -t patches < <(grep -v '^\s*\(#\|$\)' patches/series 2>/dev/null || true)
for p in "${patches[@]}"; do
	# Run from inside the kernel tree, as a kernel developer would: from
	# another git repository checkpatch misreads the patch's context lines.
	out=$(cd "$tree" && ./scripts/checkpatch.pl --strict --terse --show-types "$top/patches/$p" 2>&1) || true
	findings=$(echo "$out" | grep -E ': (ERROR|WARNING|CHECK):' | accepted "patches/$p" || true)
	if [ -n "$findings" ]; then
		echo "check: $p:"
		printf '    %s\n' "${findings//$'\n'/$'\n'    }"
		status=1
	else
		echo "check: $p: clean"
	fi
done
[ "$status" = 0 ] && echo "check: all clean (${#patches[@]} patches, ${#scripts[@]} scripts)"
exit "$status"
