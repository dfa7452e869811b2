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

# Rebuild the configuration only when a fragment changed, so an incremental
# build after touching kernel/futex/ stays incremental.
stamp="$out/.fragments"
want=$(cat "$@" | sha256sum | cut -d' ' -f1)
if [ ! -f "$out/.config" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
	echo "build-kernel: configuring $out from tinyconfig + $*"
	make -s -C "$src" O="$out" "${cross[@]}" CC="$cc" tinyconfig >"$log" 2>&1
	"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$@" >>"$log" 2>&1
	make -s -C "$src" O="$out" "${cross[@]}" CC="$cc" olddefconfig >>"$log" 2>&1
	# Every symbol set to y must have survived olddefconfig. A later
	# fragment overrides an earlier one (rt.config turns PREEMPT off), so
	# only the last setting of each symbol is checked.
	missing=0
	declare -A last=() from=()
	for f in "$@"; do
		while IFS= read -r line; do
			if [[ $line =~ ^(CONFIG_[A-Z0-9_]+)= ]] || [[ $line =~ ^#\ (CONFIG_[A-Z0-9_]+)\ is\ not\ set ]]; then
				last[${BASH_REMATCH[1]}]=$line
				from[${BASH_REMATCH[1]}]=$f
			fi
		done <"$f"
	done
	for sym in "${!last[@]}"; do
		line=${last[$sym]}
		[[ $line == *=y ]] || continue
		if ! grep -qx "$line" "$out/.config"; then
			echo "build-kernel: error: ${from[$sym]} asks for $line but the config has: $(grep -E "^(# )?${sym}[= ]" "$out/.config" || echo unset)" >&2
			missing=1
		fi
	done
	[ "$missing" = 0 ] || exit 1
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
