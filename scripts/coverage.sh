#!/usr/bin/env bash
# make coverage: gcov of kernel/futex/ while the suites of make test run.
#
# Builds the tree's HEAD from a throwaway worktree (build/cov-src, detached;
# the only change there is "GCOV_PROFILE := y" appended to
# kernel/futex/Makefile, so only kernel/futex/ is profiled) with base +
# attached + debug + coverage.config (gcov, no KASAN) into
# build/out/<tree>-coverage, boots it with the suites and then the gcov-dump
# suite (guest/ff-gcov-dump prints the .gcda files to the console), decodes
# them next to the .gcno files, runs gcov and writes to results/coverage/:
#   summary.md      per file: lines, branches, series-added lines executed
#   unexecuted.txt  every line the series adds (git diff base HEAD) that gcov
#                   counts as executable and that never ran, by function
#   gcov/           gcov's annotated sources (*.gcov), json/ its JSON
#   guest.log       the console log (judged by report.sh as make test does)
# Uncommitted changes of <tree> are not part of the build: it is of HEAD.
# Exit status: non-zero when a step fails or the test run reports a failure
# (the coverage files are written first); missing the 95% goal is reported
# in summary.md, not as a failure.
#
# usage: coverage.sh <tree> [suites]   (suites: futex-selftests,fastfutex,
#                                        attached,reliability by default)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: coverage.sh <tree> [suites]"
tree=${1:?$usage}
suites=${2:-futex-selftests,fastfutex,attached,reliability}
cd "$top"
die() { echo "coverage: error: $*" >&2; exit 1; }

[ -f "$tree/Makefile" ] || die "$tree is not a kernel tree (run 'make tree')"
git -C "$tree" rev-parse -q --verify 'base^{commit}' >/dev/null ||
	die "$tree has no 'base' tag (the pristine tree the series applies to)"
name=$(basename "$tree")
src=build/cov-src
out=build/out/$name-coverage
res=results/coverage
frags=(configs/base.config configs/attached.config configs/debug.config configs/coverage.config)
mkfile=kernel/futex/Makefile
profile='GCOV_PROFILE := y'

# The worktree: the tree's HEAD plus the one line in kernel/futex/Makefile.
head=$(git -C "$tree" rev-parse HEAD)
if [ ! -e "$src" ]; then
	echo "coverage: adding the worktree $src (detached at $(git -C "$tree" log -1 --format=%h HEAD))"
	git -C "$tree" worktree add -q --detach "$top/$src" "$head"
fi
common() { (cd "$1" && cd "$(git rev-parse --git-common-dir)" && pwd); }
[ "$(common "$src")" = "$(common "$tree")" ] ||
	die "$src is not a worktree of $tree (remove it: rm -rf $src; git -C $tree worktree prune)"
if [ "$(git -C "$src" rev-parse HEAD)" != "$head" ]; then
	echo "coverage: moving $src to $(git -C "$tree" log -1 --format=%h HEAD)"
	git -C "$src" checkout -q -- "$mkfile"
	git -C "$src" checkout -q --detach "$head"
fi
grep -qx "$profile" "$src/$mkfile" ||
	printf '\n# scripts/coverage.sh: profile kernel/futex/ only\n%s\n' "$profile" >>"$src/$mkfile"
dirty=$(git -C "$src" status --porcelain --untracked-files=no | grep -v " $mkfile\$" || true)
[ -z "$dirty" ] || die "$src has changes besides $mkfile (it is coverage.sh's own worktree): $dirty"
if [ -n "$(git -C "$tree" status --porcelain --untracked-files=no -- kernel/futex)" ]; then
	echo "coverage: note: $tree has uncommitted changes in kernel/futex/; this measures its HEAD"
fi

rm -rf "$res"
mkdir -p "$res/json" "$res/gcov"
t0=$(date +%s)
echo "== coverage: kernel"
image=$(scripts/build-kernel.sh "$src" "$out" "${frags[@]}" | tee /dev/stderr | tail -1)
t1=$(date +%s)
echo "== coverage: guest"
scripts/pack-guest.sh "$src" build/guest/coverage build/guest/coverage.cpio.gz --tools
t2=$(date +%s)
# The boot differs from make test's in one thing: a futex_hashsize= of 4096
# (make test's kernels use the default, 1024 with 4 vCPUs), so that the
# boot parameter's code runs too.
cmdline="futex_hashsize=4096"
echo "== coverage: boot ($suites, then gcov-dump; $cmdline)"
log=$res/guest.log
scripts/boot.sh "$image" build/guest/coverage.cpio.gz "$suites,gcov-dump" "$log" 4800 "$cmdline" || true
# A guest killed by QEMU 7.2, not by the kernel: see the script
if scripts/qemu-stale-int3.sh "$log" coverage; then
	scripts/boot.sh "$image" build/guest/coverage.cpio.gz "$suites,gcov-dump" "$log" 4800 "$cmdline" || true
fi
t3=$(date +%s)
tests=0
scripts/report.sh "$log" coverage || tests=$?

echo "== coverage: gcov"
# The dump: FF-GCOV lines (indented by ff-run-suite) between the markers;
# the last one when the suites dump more than once.
tr -d '\r' <"$log" | awk '
	/^ *FF-GCOV-BEGIN / { sub(/^ *FF-GCOV-BEGIN /, ""); head = $0; body = ""; inside = 1; next }
	/^ *FF-GCOV-END$/ { if (inside) { lasthead = head; last = body }; inside = 0; next }
	inside && /^ *FF-GCOV [A-Za-z0-9+\/=]+$/ { sub(/^ *FF-GCOV /, ""); body = body $0 "\n" }
	END { if (lasthead != "") printf "%s\n%s", lasthead, last }' >"$res/gcda.b64"
read -r nfiles bytes sum <"$res/gcda.b64" ||
	die "no complete gcov dump in $log (the guest died before the gcov-dump suite, or its kernel lacks gcov)"
tail -n +2 "$res/gcda.b64" | base64 -d >"$res/gcda.tar.gz" || die "the gcov dump in $log does not decode"
got=$(wc -c <"$res/gcda.tar.gz")
if [ "$got" != "$bytes" ] || [ "$(sha256sum "$res/gcda.tar.gz" | cut -d' ' -f1)" != "$sum" ]; then
	die "the gcov dump in $log is damaged ($got of $bytes bytes, or a wrong sha256)"
fi
rm -rf "$res/gcda"
mkdir -p "$res/gcda"
tar -C "$res/gcda" -xzf "$res/gcda.tar.gz"
find "$out/kernel/futex" -name '*.gcda' -delete
ngcda=0
while read -r f; do
	cp "$f" "$out/kernel/futex/"
	ngcda=$((ngcda + 1))
done < <(find "$res/gcda" -path '*/kernel/futex/*.gcda')
if [ "$ngcda" = 0 ] || [ "$ngcda" != "$nfiles" ]; then
	die "the dump holds $nfiles files, $ngcda of them kernel/futex/*.gcda"
fi
# gcov of the compiler that built the kernel.
gcov=gcov-$(gcc -dumpversion | cut -d. -f1)
command -v "$gcov" >/dev/null || gcov=gcov
obj=$(cd "$out/kernel/futex" && pwd)
(cd "$res/json" && "$gcov" -b -c --json-format -o "$obj" "$obj"/*.gcda >/dev/null)
# All units at once: gcov sums a header's counts over the units into one
# futex.h.gcov (the JSON files are one a unit; coverage-report.py merges).
(cd "$res/gcov" && "$gcov" -b -c -o "$obj" "$obj"/*.gcda >/dev/null)
python3 scripts/coverage-report.py "$src" base "$res" "$res"/json/*.gcov.json.gz
t4=$(date +%s)
nun=$(grep -c '^kernel/' "$res/unexecuted.txt" || true)
echo "coverage: build $((t1 - t0))s, guest $((t2 - t1))s, boot and suites $((t3 - t2))s, gcov $((t4 - t3))s"
echo "coverage: $res/summary.md; $nun unexecuted added lines in $res/unexecuted.txt"
if [ "$tests" != 0 ]; then
	echo "coverage: error: the test run failed (see above and $log); the coverage is of that run" >&2
	exit 1
fi
