#!/usr/bin/env bash
# Refresh docs/bench/ from a full make bench run: for every part the run
# measured, one Markdown file with that part's sections of the summary
# (bench-report.sh) under a header naming the run, and its rows of raw.csv
# (by the boot that measured them); the wall part also copies its plots.
# Parts the run did not measure keep their files.  A part's hand-written
# analysis, docs/bench/notes/<file>.md (each dated), follows its tables.
#
# usage: bench-docs.sh <results-dir> <parts> <docs-dir>
set -euo pipefail
res=${1:?usage: bench-docs.sh <results-dir> <parts> <docs-dir>}
parts=${2:?missing parts}
docs=${3:?missing docs dir}
top=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "bench-docs: error: $*" >&2; exit 1; }
[ -s "$res/summary.md" ] || die "$res/summary.md missing or empty"
[ -s "$res/raw.csv" ] || die "$res/raw.csv missing or empty"
mkdir -p "$docs"

npatches=$(grep -c . "$top/patches/series")
rev=$(git -C "$top" describe --always --dirty 2>/dev/null || echo unknown)
date=$(date -u '+%Y-%m-%d %H:%M UTC')

# part: file, title, summary sections (their numbers), boots of raw.csv (ERE)
describe() {
	case $1 in
	wall) echo "wall|Noisy neighbour, perf bench futex, switch cost, memory, NUMA neighbour|1 2 2b 3 5 6 6b|^(vanilla|patched)$" ;;
	2014) echo "hash-2014|The 2014 table: perf bench futex hash, 8 vCPUs|4|-8cpu" ;;
	icount) echo "icount|Instructions per call|7|-icount$" ;;
	rtlat) echo "rtlat|SCHED_FIFO lateness during table switches|8|-rtlat" ;;
	perf) echo "tree-perf|The tree's perf bench futex|9|-perf$" ;;
	piinv) echo "piinv|Priority inversion through the table machinery|10|-piinv$" ;;
	cyclic) echo "cyclic|cyclictest on PREEMPT_RT|11|-cyclic$" ;;
	drain) echo "drain|Automatic switches under attack|12|-drain$" ;;
	snitch) echo "snitch|Waiters seen by another process's timing|13|-snitch$" ;;
	*) return 1 ;;
	esac
}

IFS=, read -r -a list <<<"$parts"
for p in "${list[@]}"; do
	d=$(describe "$p") || die "unknown part '$p'"
	IFS='|' read -r file title sections boots <<<"$d"
	out="$docs/$file.md"
	csv="$docs/raw-$file.csv"
	body=$(awk -v want=" $sections " '
		/^## / { n = $2; sub(/\.$/, "", n); keep = index(want, " " n " ") > 0 }
		keep' "$res/summary.md")
	if [ -z "$body" ]; then
		echo "bench-docs: $p: no section in the summary, $out left as it was" >&2
		continue
	fi
	{
		echo "# $title (\`make bench PARTS=$p\`)"
		echo
		echo "Written by \`make bench\` (scripts/bench-docs.sh) from the run of $date, on"
		echo "the series of $npatches patches (harness commit $rev, patches/ as committed"
		echo "there), with the vanilla 6.12.118 kernel measured in the same run. Each"
		echo "section names its source (TCG icount or TCG wall clock); nothing here was"
		echo "measured on hardware. Raw numbers: [\`raw-$file.csv\`](raw-$file.csv)."
		echo
		printf '%s\n' "$body"
		if [ -s "$docs/notes/$file.md" ]; then
			echo
			cat "$docs/notes/$file.md"
		fi
	} >"$out"
	{
		head -1 "$res/raw.csv"
		awk -F, -v re="$boots" 'NR > 1 && $7 ~ re' "$res/raw.csv"
	} >"$csv"
	if [ "$p" = wall ]; then
		for png in "$res"/*.png; do
			[ -e "$png" ] && cp "$png" "$docs/"
		done
	fi
	echo "bench-docs: wrote $out ($(($(wc -l <"$csv") - 1)) raw rows)"
done
