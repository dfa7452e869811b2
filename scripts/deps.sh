#!/usr/bin/env bash
# Install the Debian 12 packages the harness needs (idempotent, quiet when
# everything is already there).  --matrix: also the packages of make matrix
# only (cross compilers and C libraries for arm64 and i686, QEMU for arm64,
# sparse, clang/LLVM, Debian's kernel configuration), which make test and
# make bench do not need, and the arm64 architecture in dpkg, so that
# pack-guest.sh --arch arm64 can download busybox-static:arm64.
#
# usage: deps.sh [--matrix]
set -euo pipefail

pkgs=(linux-source-6.12 build-essential bc bison flex libelf-dev libssl-dev
      cpio gzip xz-utils file rsync python3 dwarves ccache git
      qemu-system-x86 busybox-static shellcheck gdb
      linux-perf stress-ng rt-tests trinity gnuplot-nox)
matrix_pkgs=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm
      gcc-i686-linux-gnu libc6-dev-i386-cross sparse clang lld llvm
      linux-config-6.12)
case ${1:-} in
'') ;;
--matrix) pkgs+=("${matrix_pkgs[@]}") ;;
*) echo "deps: error: unknown argument '$1'; usage: deps.sh [--matrix]" >&2; exit 1 ;;
esac
export DEBIAN_FRONTEND=noninteractive
if [ "${1:-}" = --matrix ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
	[ "$(id -u)" = 0 ] || { echo "deps: error: need root to add the arm64 architecture to dpkg" >&2; exit 1; }
	echo "deps: adding the arm64 architecture to dpkg (for busybox-static:arm64)"
	dpkg --add-architecture arm64
	apt-get update -q >/dev/null
fi
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} = 0 ] && exit 0
[ "$(id -u)" = 0 ] || { echo "deps: error: need root to install: ${missing[*]}" >&2; exit 1; }
echo "deps: installing ${missing[*]}"
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
