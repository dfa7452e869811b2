#!/usr/bin/env bash
# Build and boot the kernel at every patch of the series: each patch must
# build and boot on its own (bisectability), and this checks it.
#
# For each commit of <tree> after the tag 'base' (get-tree.sh applies one
# commit per patch), or for the patches FIRST..LAST (1-based, as numbered in
# patches/), check the commit out into a separate work tree, build it with
# configs/base.config + configs/bench.config (+ configs/attached.config once
# the patch has CONFIG_FUTEX_ATTACHED) into build/out/series, incrementally,
# boot it with the guest suite series-smoke (vanilla's futex selftests,
# packed once from <tree>'s HEAD), and judge the log with report.sh. Prints
# one line per patch and fails with the first patch that does not build or
# boot cleanly; logs in build/series/.
#
# usage: series-check.sh <tree> [FIRST[-LAST]]
set -euo pipefail

tree=${1:?usage: series-check.sh <tree> [FIRST[-LAST]]}
range=${2:-}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
die() { echo "series-check: error: $*" >&2; exit 1; }

git -C "$tree" rev-parse -q --verify base >/dev/null ||
	die "$tree has no tag 'base' (run 'make tree')"
mapfile -t commits < <(git -C "$tree" rev-list --reverse base..HEAD)
n=${#commits[@]}
[ "$n" -gt 0 ] || die "$tree has no patches applied"
first=1 last=$n
if [ -n "$range" ]; then
	first=${range%%-*}
	last=${range#*-}
	[ "$range" = "$first" ] && last=$first
	[[ $first =~ ^[0-9]+$ && $last =~ ^[0-9]+$ ]] || die "bad range '$range' (FIRST-LAST)"
	if [ "$first" -lt 1 ] || [ "$last" -gt "$n" ] || [ "$first" -gt "$last" ]; then
		die "range $range outside 1-$n"
	fi
fi

work=build/series
src=$work/src
out=build/out/series
mkdir -p "$work"
if [ ! -e "$src/.git" ]; then
	git -C "$tree" worktree prune
	git -C "$tree" worktree add -q --detach "$top/$src" "${commits[0]}"
fi

echo "series-check: packing the guest from $tree's HEAD"
scripts/pack-guest.sh "$tree" "$work/guest" "$work/guest.cpio.gz" | sed 's/^/  /'

for ((i = first; i <= last; i++)); do
	c=${commits[i - 1]}
	subj=$(git -C "$tree" log -1 --format=%s "$c")
	tag=$(printf '%04d' "$i")
	echo "series-check: patch $i/$n: $subj"
	git -C "$src" checkout -q --detach "$c"
	frags=(configs/base.config configs/bench.config)
	grep -q '^config FUTEX_ATTACHED$' "$src/init/Kconfig" && frags+=(configs/attached.config)
	if ! scripts/build-kernel.sh "$src" "$out" "${frags[@]}" >"$work/$tag-build.out" 2>&1; then
		tail -n 20 "$out/build.log" >&2 || true
		die "patch $i ($subj) does not build: see $work/$tag-build.out and $out/build.log"
	fi
	log=$work/$tag-boot.log
	rc=0
	scripts/boot.sh "$out/arch/x86/boot/bzImage" "$work/guest.cpio.gz" series-smoke \
		"$log" 900 >/dev/null || rc=$?
	if ! res=$(scripts/report.sh "$log" "patch-$i" 2>&1); then
		echo "$res" >&2
		scripts/splat.sh "$log" >&2 || true
		die "patch $i ($subj) does not boot cleanly (QEMU status $rc, log $log)"
	fi
	echo "$res" | tail -n 1 | sed 's/^/  /'
done
echo "series-check: patches $first-$last of $n build and boot"
