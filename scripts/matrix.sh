#!/usr/bin/env bash
# make matrix: build, boot and test the series on many configurations, so
# that a bug of one configuration (uniprocessor, arm64, no jump labels, no
# private hash...) is caught.
#
# Boot rows build a kernel from configs/base.config + configs/attached.config
# + configs/matrix.config + configs/matrix/<row>.config (arm64:
# configs/matrix/arm64.config in place of base.config; compat32: i686
# selftests on an x86_64 kernel), boot it under QEMU (TCG) with the guest
# suites futex-selftests (the tree's futex selftests) and matrix (the
# series' kselftests futex_priv_hash and futex_attached) and judge the
# console with report.sh, KUnit results of the boot included.
# Compile-only rows build the objects of the .c files the series touches:
# debian (Debian's own config, no warning allowed), w1 (W=1 on
# kernel/futex/, no warning allowed), sparse (C=2, no warning that vanilla,
# tag 'base', does not have) and clang (LLVM=1, the objects and the whole
# vmlinux, no warning allowed in a file the series touches).
#
# Each row prints one verdict line; its log is results/matrix/<row>.log
# (guest console: results/matrix/<row>.console.log), its build output
# build/out/matrix-<row>.  A summary table at the end, with the build and
# boot time of each row; the exit status is non-zero when a row failed.
#
# usage: matrix.sh <tree> [ROWS]   (ROWS: comma-separated, default all)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: matrix.sh <tree> [ROWS]"
all_rows=(default up nojump preempt-none preempt-voluntary nopriv noattached nonuma
          numa4 compat32 arm64 debian w1 sparse clang)
die() { echo "matrix: error: $*" >&2; exit 1; }

tree=${1:?$usage}
rows_arg=${2:-}
[ $# -le 2 ] || die "too many arguments; $usage"
cd "$top"
[ -f "$tree/Makefile" ] || die "$tree is not a kernel tree (run 'make tree')"
tree=$(cd "$tree" && pwd)
git -C "$tree" rev-parse -q --verify 'base^{commit}' >/dev/null ||
	die "$tree has no tag 'base' (make tree creates it)"

rows=()
if [ -z "$rows_arg" ]; then
	rows=("${all_rows[@]}")
else
	IFS=, read -r -a rows <<<"$rows_arg"
	for r in "${rows[@]}"; do
		[[ " ${all_rows[*]} " == *" $r "* ]] ||
			die "unknown row '$r'; rows: ${all_rows[*]// /,}"
	done
fi
[ ${#rows[@]} -gt 0 ] || die "no row given; rows: ${all_rows[*]// /,}"

res=results/matrix
mkdir -p "$res"
jobs=$(nproc)
gcc="gcc"
command -v ccache >/dev/null && gcc="ccache gcc"

# What each boot row runs on: kernel arch, guest arch, vCPUs, NUMA nodes.
boot_spec() {
	case $1 in
	up) echo "x86_64 x86_64 1 1" ;;
	nonuma) echo "x86_64 x86_64 4 1" ;;
	numa4) echo "x86_64 x86_64 4 4" ;;
	compat32) echo "x86_64 i386 4 2" ;;
	arm64) echo "arm64 arm64 2 1" ;;
	debian | w1 | sparse | clang) echo compile ;;
	*) echo "x86_64 x86_64 4 2" ;;
	esac
}

# Results of the rows, for the summary.
declare -A verdict=() detail=() t_build=() t_boot=()
record() { # row PASS|FAIL text
	verdict[$1]=$2 detail[$1]=$3
	echo "matrix: $1: $2 $3"
	echo "matrix: $1: $2 $3" >>"$res/$1.log"
	echo "matrix: $1: times (wall-clock/CPU): build ${t_build[$1]}, boot ${t_boot[$1]}" >>"$res/$1.log"
}
# Times: mark VAR sets VAR to "<now> <CPU seconds of all children so far>";
# took VAR MARK sets VAR to "<wall>s/<cpu>s" since MARK: wall-clock and
# CPU (user + system) seconds of the commands run since, which tells what
# a row costs without the load of anything else running on the machine.
# Not in a subshell: the shell's own children are counted.
cpu_children() {
	awk 'function s(x) { sub(/s$/, "", x); split(x, a, "m"); return a[1] * 60 + a[2] }
	     NR == 2 { printf "%d\n", s($1) + s($2) }' "$res/.times"
}
mark() {
	times >"$res/.times"
	printf -v "$1" '%s %s' "$(date +%s)" "$(cpu_children)"
}
took() {
	local w0 c0
	read -r w0 c0 <<<"$2"
	times >"$res/.times"
	printf -v "$1" '%ss/%ss' "$(( $(date +%s) - w0 ))" "$(( $(cpu_children) - c0 ))"
}

# One guest initramfs per guest arch and run, packed on first use (not in
# a subshell: the result is remembered).
declare -A guest=() t_pack=()
pack() { # arch
	local arch=$1 work=build/guest/matrix-$1 start
	[ -n "${guest[$arch]:-}" ] && return
	echo "matrix: packing the $arch guest (log $res/guest-$arch.log)"
	mark start
	if scripts/pack-guest.sh "$tree" "$work" "$work.cpio.gz" --arch "$arch" >"$res/guest-$arch.log" 2>&1; then
		guest[$arch]=$work.cpio.gz
	else
		guest[$arch]=failed
	fi
	took "t_pack[$arch]" "$start"
}

# Kselftest cases (indented under a guest test) that skipped or failed,
# per guest test: "futex_attached: 13 skipped".
kselftest_cases() { # console-log what(skip|fail)
	tr -d '\r' <"$1" | awk -v what="$2" '
	/^# [A-Za-z0-9_.-]+: / { t = substr($2, 1, length($2) - 1); next }
	what == "skip" && /^    ok [0-9]+ .*# SKIP/ { n[t]++ }
	what == "fail" && /^    not ok [0-9]+ / { c = $0; sub(/^    not ok [0-9]+ /, "", c); sub(/ *#.*/, "", c); l[t] = l[t] (l[t] ? ", " : "") c }
	END {
		for (t in n) s = s (s ? "; " : "") t ": " n[t] " skipped"
		for (t in l) s = s (s ? "; " : "") t ": " l[t]
		print s
	}'
}

boot_row() { # row
	local row=$1 arch garch cpus nodes frags out log console image initrd start rc out_report last why oops
	read -r arch garch cpus nodes < <(boot_spec "$row")
	log=$res/$row.log
	console=$res/$row.console.log
	out=build/out/matrix-$row
	if [ "$arch" = arm64 ]; then
		frags=(configs/matrix/arm64.config configs/attached.config configs/matrix.config)
	else
		frags=(configs/base.config configs/attached.config configs/matrix.config "configs/matrix/$row.config")
	fi

	echo "matrix: $row: building ($arch, ${frags[*]})"
	mark start
	rc=0
	image=$(FF_ARCH=$arch scripts/build-kernel.sh "$tree" "$out" "${frags[@]}" 2>&1 | tee -a "$log" | tail -1) || rc=$?
	took "t_build[$row]" "$start"
	if [ "$rc" != 0 ]; then
		tail -n 20 "$out/build.log" >>"$log" 2>/dev/null || true
		record "$row" FAIL "build: $(grep -m1 'error' "$log" || echo "see $log")"
		return
	fi

	pack "$garch"
	initrd=${guest[$garch]}
	if [ "$initrd" = failed ]; then
		record "$row" FAIL "guest ($garch) does not pack: $(grep -m1 'error' "$res/guest-$garch.log" || echo "see $res/guest-$garch.log")"
		return
	fi
	mark start
	echo "matrix: $row: booting ($arch, $cpus vCPUs, $nodes node(s), guest $garch; console $console)"
	boot() {
		FF_ARCH=$arch FF_CPUS=$cpus FF_NODES=$nodes \
			scripts/boot.sh "$image" "$initrd" futex-selftests,matrix "$console" 1800 >>"$log" 2>&1 || true
	}
	boot
	# A guest killed by QEMU 7.2, not by the kernel: see the script.
	if [ "$arch" = x86_64 ] && scripts/qemu-stale-int3.sh "$console" "matrix: $row" 2>>"$log"; then
		tail -n 1 "$log"
		boot
	fi
	took "t_boot[$row]" "$start"

	rc=0
	out_report=$(scripts/report.sh "$console" "$row" 2>&1) || rc=$?
	echo "$out_report" >>"$log"
	last=$(echo "$out_report" | grep -E "^$row: [0-9]+ passed" | tail -1 | sed "s/^$row: //")
	local skips fails
	skips=$(kselftest_cases "$console" skip)
	fails=$(kselftest_cases "$console" fail)
	if [ "$rc" = 0 ]; then
		record "$row" PASS "$last${skips:+ (kselftest cases: $skips)}"
	else
		scripts/splat.sh "$console" >>"$log" 2>&1 || true
		why=$(echo "$out_report" | grep -m1 '^FAILED: ' | sed 's/^FAILED: //')
		# splat.sh and report.sh know x86's Oops lines; arm64's Oops
		# starts with "Unable to handle kernel ..." or "Internal error:"
		# and names the faulting function on its "pc : " line.
		oops=$(tr -d '\r' <"$console" |
			awk '/\] (Unable to handle kernel|Internal error: )/ { s = 1 } s { print } s && /---\[ end trace/ { exit }')
		if [ -n "$oops" ]; then
			printf 'matrix: the Oops:\n%s\n' "$oops" >>"$log"
			why="$why, after: $(echo "$oops" | head -1 | sed 's/^\[[^]]*\] //')$(echo "$oops" | grep -m1 -E '\] pc : ' | sed 's/^.*\] / /')"
		fi
		record "$row" FAIL "$why${fails:+ (failed kselftest cases: $fails)}; $last"
	fi
}

# Configure <out> for a compile-only row from tinyconfig or a config file,
# plus fragments; every CONFIG_*=y a fragment asks for (last setting wins)
# must survive olddefconfig unless check=0.  Extra make arguments in mk_extra.
# As in build-kernel.sh, configured again when a fragment changed or when
# .config lost an asked-for symbol (a build of a tree that lacks it).
mk_extra=()
missing_syms() { # out frag...: the asked-for CONFIG_*=y lines .config lacks
	local out=$1 line sym
	shift
	declare -A last=()
	while IFS= read -r line; do
		if [[ $line =~ ^(CONFIG_[A-Z0-9_]+)= ]] || [[ $line =~ ^#\ (CONFIG_[A-Z0-9_]+)\ is\ not\ set ]]; then
			last[${BASH_REMATCH[1]}]=$line
		fi
	done < <(cat "$@")
	for sym in "${!last[@]}"; do
		[[ ${last[$sym]} == *=y ]] || continue
		grep -qx "${last[$sym]}" "$out/.config" 2>/dev/null || printf ' %s' "${last[$sym]}"
	done
}
configure() { # src out start(tinyconfig|file.xz) check frag...
	local src=$1 out=$2 start=$3 check=$4 want missing=
	shift 4
	# make -C: a relative O= would be taken relative to the tree.
	[[ $out == /* ]] || { echo "matrix: error: configure: $out is not absolute"; return 1; }
	mkdir -p "$out"
	want=$({ echo "$start ${mk_extra[*]}"; cat "$@"; } | sha256sum | cut -d' ' -f1)
	if [ -f "$out/.config" ] && [ "$(cat "$out/.fragments" 2>/dev/null)" = "$want" ] &&
		{ [ "$check" = 0 ] || [ -z "$(missing_syms "$out" "$@")" ]; }; then
		return 0
	fi
	if [ "$start" = tinyconfig ]; then
		make -s -C "$src" O="$out" "${mk_extra[@]}" tinyconfig || return 1
	else
		xz -dc "$start" >"$out/.config" || return 1
	fi
	"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$@" || return 1
	make -s -C "$src" O="$out" "${mk_extra[@]}" olddefconfig || return 1
	[ "$check" = 0 ] || missing=$(missing_syms "$out" "$@")
	if [ -n "$missing" ]; then
		echo "matrix: error: the config lacks:$missing"
		return 1
	fi
	echo "$want" >"$out/.fragments"
}

# The files the series touches (outside tools/), and their objects.
series_files() {
	git -C "$tree" diff --name-only base | awk '!/^tools\//'
}
series_targets() {
	git -C "$tree" diff --name-only base -- '*.c' |
		awk '/^tools\// { next } /^kernel\/futex\// { print "kernel/futex/"; next } { sub(/\.c$/, ".o"); print }' |
		sort -u
}

# Warning lines of a make log, without the tree's path and line:column.
warnings() { # make-log srcdir
	grep -E ': (warning|error): ' "$1" | sed -E "s|^$2/||; s|^([^:]+):[0-9]+:[0-9]+: |\\1: |" | sort || true
}

compile_row() { # row
	local row=$1 log=$res/$1.log out=$top/build/out/matrix-$1 start mklog targets=() cc=$gcc rc=0 found
	local base_frags=(configs/base.config configs/attached.config configs/matrix.config)
	mk_extra=()
	mapfile -t targets < <(series_targets)
	mkdir -p "$out"
	mklog=$out/make.log
	mark start
	echo "matrix: $row: compiling ${targets[*]}"
	case $row in
	debian)
		local dconf=/usr/src/linux-config-6.12/config.amd64_none_amd64.xz
		[ -f "$dconf" ] || { record "$row" FAIL "$dconf missing (apt-get install linux-config-6.12)"; return; }
		mk_extra=(CC="$cc")
		configure "$tree" "$out" "$dconf" 1 configs/matrix/debian.config >"$out/config.log" 2>&1 || rc=$?
		;;
	w1)
		targets=(kernel/futex/)
		mk_extra=(CC="$cc")
		configure "$tree" "$out" tinyconfig 1 "${base_frags[@]}" >"$out/config.log" 2>&1 || rc=$?
		rm -f "$out"/kernel/futex/*.o
		mk_extra+=(W=1)
		;;
	sparse)
		mk_extra=(CC="$cc")
		configure "$tree" "$out" tinyconfig 1 "${base_frags[@]}" >"$out/config.log" 2>&1 || rc=$?
		mk_extra+=(C=2)
		;;
	clang)
		command -v clang >/dev/null || { record "$row" FAIL "clang missing (scripts/deps.sh --matrix)"; return; }
		cc="clang"
		command -v ccache >/dev/null && cc="ccache clang"
		mk_extra=(LLVM=1 CC="$cc")
		configure "$tree" "$out" tinyconfig 1 "${base_frags[@]}" >"$out/config.log" 2>&1 || rc=$?
		rm -f "$out"/kernel/futex/*.o
		targets+=(vmlinux)
		;;
	esac
	if [ "$rc" != 0 ]; then
		took "t_build[$row]" "$start"
		record "$row" FAIL "configuring $out failed: $(grep -m1 'error' "$out/config.log" || echo "see $out/config.log")"
		return
	fi
	echo "matrix: $row: make ${mk_extra[*]} ${targets[*]} (log $mklog)" >>"$log"
	make -C "$tree" O="$out" "${mk_extra[@]}" -j"$jobs" "${targets[@]}" >"$mklog" 2>&1 || rc=$?
	took "t_build[$row]" "$start"
	warnings "$mklog" "$tree" >"$out/warnings.txt"
	if [ "$rc" != 0 ]; then
		cat "$out/warnings.txt" >>"$log"
		record "$row" FAIL "build failed: $(grep -m1 ': error: ' "$out/warnings.txt" || grep -m1 -i 'error' "$mklog" || echo "see $mklog")"
		return
	fi
	if [ ! -f "$out/kernel/futex/core.o" ]; then
		record "$row" FAIL "kernel/futex/core.o was not built (CONFIG_FUTEX off?), see $mklog"
		return
	fi

	case $row in
	debian)
		found=$(cat "$out/warnings.txt")
		;;
	clang)
		found=$(series_files | awk 'NR == FNR { f[$0] = 1; next } { p = $1; sub(/:$/, "", p) } p in f' - "$out/warnings.txt")
		;;
	w1)
		found=$(grep '^kernel/futex/' "$out/warnings.txt" || true)
		;;
	sparse)
		local vout=$top/build/out/matrix-sparse-vanilla vsrc=$top/build/matrix-vanilla baseline vwant
		baseline=$vout/warnings.txt
		vwant=$(git -C "$tree" rev-parse 'base^{commit}')
		if [ ! -e "$vsrc/.git" ]; then
			git -C "$tree" worktree prune
			git -C "$tree" worktree add -q --detach "$vsrc" "$vwant" >>"$log" 2>&1
		fi
		[ "$(git -C "$vsrc" rev-parse HEAD)" = "$vwant" ] || git -C "$vsrc" checkout -q --detach "$vwant"
		if [ ! -f "$baseline" ] || [ "$(cat "$vout/.baseline" 2>/dev/null)" != "$vwant $(cat "$out/.fragments")" ]; then
			echo "matrix: sparse: vanilla baseline in $vout" >>"$log"
			mk_extra=(CC="$cc")
			mkdir -p "$vout"
			# Vanilla lacks the series' options: no check of the fragments.
			configure "$vsrc" "$vout" tinyconfig 0 "${base_frags[@]}" >"$vout/config.log" 2>&1 || rc=$?
			[ "$rc" = 0 ] && { make -C "$vsrc" O="$vout" CC="$cc" C=2 -j"$jobs" "${targets[@]}" >"$vout/make.log" 2>&1 || rc=$?; }
			if [ "$rc" != 0 ]; then
				took "t_build[$row]" "$start"
				record "$row" FAIL "the vanilla baseline does not build: see $vout/make.log"
				return
			fi
			warnings "$vout/make.log" "$vsrc" >"$baseline"
			echo "$vwant $(cat "$out/.fragments")" >"$vout/.baseline"
			took "t_build[$row]" "$start"
		fi
		# Compared without the file name: a vanilla warning of a function
		# now reported from another file (an inline helper moved to
		# futex.h) is not new; the same message once more is.
		found=$(comm -13 <(sed 's/^[^:]*: //' "$baseline" | sort) <(sed 's/^[^:]*: //' "$out/warnings.txt" | sort) |
			while IFS= read -r w; do grep -m1 -F -- ": $w" "$out/warnings.txt"; done)
		echo "matrix: sparse: vanilla $(wc -l <"$baseline") warnings, patched $(wc -l <"$out/warnings.txt")" >>"$log"
		;;
	esac
	if [ -n "$found" ]; then
		printf '%s\n' "$found" >>"$log"
		local kind
		case $row in
		sparse) kind="new sparse warning(s) (not in vanilla)" ;;
		w1) kind="W=1 warning(s) in kernel/futex/" ;;
		clang) kind="clang warning(s)" ;;
		*) kind="warning(s) with Debian's config" ;;
		esac
		record "$row" FAIL "$(printf '%s\n' "$found" | wc -l) $kind, first: $(printf '%s\n' "$found" | head -1)"
	else
		local n
		n=$(wc -l <"$out/warnings.txt")
		case $row in
		sparse) record "$row" PASS "no new sparse warning ($n, all also in vanilla)" ;;
		w1) record "$row" PASS "no W=1 warning in kernel/futex/" ;;
		clang) record "$row" PASS "no warning in a file the series touches ($n elsewhere)" ;;
		*) record "$row" PASS "no warning in ${targets[*]}" ;;
		esac
	fi
}

echo "matrix: tree $tree ($(git -C "$tree" log -1 --format='%h %s'))"
echo "matrix: rows ${rows[*]}; logs in $res/"
for row in "${rows[@]}"; do
	: >"$res/$row.log"
	t_build[$row]=- t_boot[$row]=-
	if [ "$(boot_spec "$row")" = compile ]; then
		compile_row "$row"
	else
		boot_row "$row"
	fi
done

status=0
for row in "${rows[@]}"; do
	[ "${verdict[$row]}" = PASS ] || status=1
done
{
	echo
	echo "matrix summary ($(git -C "$tree" log -1 --format='%h %s'); logs in $res/)"
	echo "  (times: wall-clock/CPU seconds)"
	printf '  %-18s %-7s %-11s %-11s %s\n' row verdict build boot result
	for row in "${rows[@]}"; do
		printf '  %-18s %-7s %-11s %-11s %s\n' "$row" "${verdict[$row]}" "${t_build[$row]}" "${t_boot[$row]}" "${detail[$row]}"
	done
	for arch in "${!t_pack[@]}"; do
		echo "  guest $arch packed in ${t_pack[$arch]} (not in the boot times)"
	done
	if [ "$status" = 0 ]; then echo "matrix: PASS (${#rows[@]} rows)"; else echo "matrix: FAIL"; fi
} | tee "$res/summary.txt"
exit "$status"
