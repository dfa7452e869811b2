#!/usr/bin/env bash
# Configure (tinyconfig + fragments) and build a kernel out of tree.
#
# usage: build-kernel.sh <srcdir> <outdir> <fragment>...
# Prints the path of the built bzImage on the last line of stdout.
# Environment: FF_ARCH=x86_64 (default) or arm64: cross-compile for arm64
# with aarch64-linux-gnu-gcc (ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-,
# tinyconfig of arm64) and print the path of arch/arm64/boot/Image instead.
set -euo pipefail

src=${1:?usage: build-kernel.sh <srcdir> <outdir> <fragment>...}
out=${2:?usage: build-kernel.sh <srcdir> <outdir> <fragment>...}
shift 2
[ $# -gt 0 ] || { echo "build-kernel: error: no config fragment given" >&2; exit 1; }
for f in "$@"; do
	[ -f "$f" ] || { echo "build-kernel: error: fragment $f not found" >&2; exit 1; }
done
[ -f "$src/Makefile" ] || { echo "build-kernel: error: $src is not a kernel tree (run 'make tree')" >&2; exit 1; }

mkdir -p "$out"
out=$(cd "$out" && pwd)
log="$out/build.log"
jobs=$(nproc)
cc=gcc
target=bzImage
cross=()
case ${FF_ARCH:-x86_64} in
x86_64) ;;
arm64)
	cc=aarch64-linux-gnu-gcc
	target=Image
	cross=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
	command -v "$cc" >/dev/null ||
		{ echo "build-kernel: error: $cc missing (apt-get install gcc-aarch64-linux-gnu)" >&2; exit 1; }
	;;
*) echo "build-kernel: error: unknown FF_ARCH '$FF_ARCH' (x86_64, arm64)" >&2; exit 1 ;;
esac
command -v ccache >/dev/null && cc="ccache $cc"

# The last setting of each symbol in the fragments: a later fragment
# overrides an earlier one (rt.config turns PREEMPT off).
declare -A last=() from=()
for f in "$@"; do
	while IFS= read -r line; do
		if [[ $line =~ ^(CONFIG_[A-Z0-9_]+)= ]] || [[ $line =~ ^#\ (CONFIG_[A-Z0-9_]+)\ is\ not\ set ]]; then
			last[${BASH_REMATCH[1]}]=$line
			from[${BASH_REMATCH[1]}]=$f
		fi
	done <"$f"
done

# Whether every symbol the fragments set to y is in $out/.config; with
# "report", say which is not.
config_complete() {
	local sym line ok=0
	for sym in "${!last[@]}"; do
		line=${last[$sym]}
		[[ $line == *=y ]] || continue
		if ! grep -qx "$line" "$out/.config"; then
			[ "${1:-}" = report ] &&
				echo "build-kernel: error: ${from[$sym]} asks for $line but the config has: $(grep -E "^(# )?${sym}[= ]" "$out/.config" || echo unset)" >&2
			ok=1
		fi
	done
	return "$ok"
}

# Rebuild the configuration only when a fragment changed, so an incremental
# build after touching kernel/futex/ stays incremental; or when the
# configuration lost a symbol (a build of the tree at an older patch, which
# lacks it, drops it from .config for good).
stamp="$out/.fragments"
want=$(cat "$@" | sha256sum | cut -d' ' -f1)
reconfigure=0
if [ ! -f "$out/.config" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
	reconfigure=1
elif ! config_complete; then
	echo "build-kernel: $out/.config lacks symbols the fragments ask for: configuring it again"
	reconfigure=1
fi
if [ "$reconfigure" = 1 ]; then
	echo "build-kernel: configuring $out from tinyconfig + $*"
	make -s -C "$src" O="$out" "${cross[@]}" CC="$cc" tinyconfig >"$log" 2>&1
	"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$@" >>"$log" 2>&1
	make -s -C "$src" O="$out" "${cross[@]}" CC="$cc" olddefconfig >>"$log" 2>&1
	# Every symbol set to y must have survived olddefconfig.
	config_complete report || exit 1
	echo "$want" >"$stamp"
fi

echo "build-kernel: building $(make -s -C "$src" kernelversion) in $out ($jobs jobs, CC=$cc, log $log)"
start=$(date +%s)
if ! make -C "$src" O="$out" "${cross[@]}" CC="$cc" -j"$jobs" "$target" >>"$log" 2>&1; then
	echo "build-kernel: error: build failed; last lines of $log:" >&2
	grep -E 'error|Error' "$log" | tail -20 >&2 || tail -20 "$log" >&2
	exit 1
fi
echo "build-kernel: done in $(( $(date +%s) - start ))s"
if [ "$target" = Image ]; then echo "$out/arch/arm64/boot/Image"; else echo "$out/arch/x86/boot/bzImage"; fi
