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
mapfile -t scripts < <(ls scripts/*.sh .ci/run guest/init guest/ff-run-suite 2>/dev/null)
shellcheck "${scripts[@]}" || status=1

[ -x "$tree/scripts/checkpatch.pl" ] || { echo "check: error: no $tree/scripts/checkpatch.pl (run 'make tree')" >&2; exit 1; }
mapfile -t patches < <(grep -v '^\s*\(#\|$\)' patches/series 2>/dev/null || true)
for p in "${patches[@]}"; do
	# Run from inside the kernel tree, as a kernel developer would: from
	# another git repository checkpatch misreads the patch's context lines.
	out=$(cd "$tree" && ./scripts/checkpatch.pl --strict --terse --show-types "$top/patches/$p" 2>&1) || true
	if echo "$out" | grep -qE ': (ERROR|WARNING|CHECK):'; then
		echo "check: $p:"
		echo "$out" | grep -E ': (ERROR|WARNING|CHECK):' | sed 's/^/    /'
		status=1
	else
		echo "check: $p: clean"
	fi
done
[ "$status" = 0 ] && echo "check: all clean (${#patches[@]} patches, ${#scripts[@]} scripts)"
exit "$status"
