#!/usr/bin/env bash
# Pack the guest initramfs: busybox, the tree's futex selftests (built
# static against the tree's own uapi headers), the harness's guest programs
# and suites, optionally Debian's perf, stress-ng, rt-tests and trinity
# with their shared libraries (--tools), and optionally the tree's own perf
# as /usr/bin/perf-tree (--tree-perf BIN: the static binary
# scripts/build-perf.sh builds; Debian's perf stays /usr/bin/perf).
# --arch arm64: a guest for an arm64 kernel: Debian's busybox-static:arm64
# (downloaded once into build/arm64/; scripts/deps.sh --matrix adds the
# architecture to dpkg) and the selftests cross-compiled with
# aarch64-linux-gnu-gcc against the tree's arm64 uapi headers.  --arch
# i386: x86_64 busybox and the selftests as 32-bit i686 binaries, for an
# x86_64 kernel with IA32_EMULATION.  Either has no guest programs (they
# are built for x86_64 only) and no --tools.
#
# usage: pack-guest.sh <kernel-srcdir> <work-dir> <out.cpio.gz> [--tools] [--tree-perf BIN] [--arch x86_64|arm64|i386]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: pack-guest.sh <srcdir> <workdir> <out.cpio.gz> [--tools] [--tree-perf BIN] [--arch x86_64|arm64|i386]"
src=$(cd "${1:?$usage}" && pwd)
work=${2:?missing work dir}
out=${3:?missing output file}
shift 3
tools=0
treeperf=
arch=x86_64
while [ $# -gt 0 ]; do
	case $1 in
	--tools) tools=1 ;;
	--tree-perf) treeperf=${2:?--tree-perf needs the perf binary}; shift ;;
	--arch) arch=${2:?--arch needs x86_64, arm64 or i386}; shift ;;
	*) echo "pack-guest: error: unknown argument $1; $usage" >&2; exit 1 ;;
	esac
	shift
done

die() { echo "pack-guest: error: $*" >&2; exit 1; }
busybox=/bin/busybox
cross=
hdrarch=()
case $arch in
x86_64) ;;
i386) cross=i686-linux-gnu- elf='Intel 80386' ;;
arm64) cross=aarch64-linux-gnu- elf='ARM aarch64' hdrarch=(ARCH=arm64) busybox=$top/build/arm64/busybox ;;
*) die "unknown --arch '$arch' (x86_64, arm64, i386)" ;;
esac
if [ "$arch" != x86_64 ]; then
	if [ "$tools" = 1 ] || [ -n "$treeperf" ]; then
		die "--tools and --tree-perf are for the x86_64 guest only"
	fi
	command -v "${cross}gcc" >/dev/null ||
		die "${cross}gcc missing (scripts/deps.sh --matrix installs it)"
fi
if [ "$arch" = arm64 ] && [ ! -x "$busybox" ]; then
	echo "pack-guest: downloading busybox-static:arm64 into $(dirname "$busybox")"
	dpkg --print-foreign-architectures | grep -qx arm64 ||
		die "dpkg lacks the arm64 architecture (scripts/deps.sh --matrix adds it)"
	dl=$(mktemp -d)
	chmod 755 "$dl"
	(cd "$dl" && apt-get download -q busybox-static:arm64 >"$dl/apt.log" 2>&1) ||
		die "apt-get download busybox-static:arm64 failed: $(tail -1 "$dl/apt.log")"
	dpkg-deb -x "$dl"/busybox-static_*_arm64.deb "$dl/x"
	mkdir -p "$(dirname "$busybox")"
	install -m 755 "$dl/x/bin/busybox" "$busybox"
	rm -rf "$dl"
fi
[ -x "$busybox" ] || die "$busybox missing (apt-get install busybox-static)"
file "$busybox" | grep -q 'statically linked' || die "$busybox is not static (install busybox-static)"

mkdir -p "$work"
work=$(cd "$work" && pwd)
root="$work/root"
rm -rf "$root"
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,etc,opt/tests,suites,usr/bin,usr/lib,lib64,root}

echo "pack-guest: installing uapi headers of $src"
make -s -C "$src" O="$work/hdr" "${hdrarch[@]}" headers_install INSTALL_HDR_PATH="$work/hdr/usr" >"$work/headers.log" 2>&1 ||
	die "headers_install failed, see $work/headers.log"

st="$src/tools/testing/selftests/futex/functional"
mkdir -p "$work/futex"
if [ "$arch" = x86_64 ]; then
	echo "pack-guest: building tools/testing/selftests/futex statically"
	if ! make -C "$st" OUTPUT="$work/futex" LDFLAGS=-static \
		KHDR_INCLUDES="-isystem $work/hdr/usr/include" >"$work/selftests.log" 2>&1; then
		grep -E 'error' "$work/selftests.log" | head -20 >&2
		die "building the futex selftests failed, see $work/selftests.log"
	fi
else
	# -k: build every selftest that builds, then name those that do not.
	echo "pack-guest: building tools/testing/selftests/futex statically for $arch (${cross}gcc)"
	rm -f "$work/futex"/futex_*
	make -k -C "$st" OUTPUT="$work/futex" LDFLAGS=-static CROSS_COMPILE="$cross" \
		KHDR_INCLUDES="-isystem $work/hdr/usr/include" >"$work/selftests.log" 2>&1 || true
fi
progs=$(make -s -C "$st" -f - print-progs <<'MK' 2>/dev/null || true
include Makefile
print-progs:
	@echo $(TEST_GEN_PROGS)
MK
)
[ -n "$progs" ] || progs=$(find "$work/futex" -maxdepth 1 -type f -perm -u+x -printf '%f\n')
unbuilt=()
for p in $progs; do
	p=$(basename "$p")
	if [ ! -x "$work/futex/$p" ]; then
		[ "$arch" = x86_64 ] && die "selftest $p was not built"
		unbuilt+=("$p")
		continue
	fi
	if [ "$arch" != x86_64 ] && ! file "$work/futex/$p" | grep -q "$elf"; then
		die "selftest $p is not an $elf binary: $(file -b "$work/futex/$p")"
	fi
	cp "$work/futex/$p" "$root/opt/tests/"
done
if [ ${#unbuilt[@]} -gt 0 ]; then
	grep -E 'error' "$work/selftests.log" | head -20 >&2 || true
	die "selftests that do not build for $arch: ${unbuilt[*]} (see $work/selftests.log)"
fi
echo "pack-guest: $(echo "$progs" | wc -w) futex selftests"

if [ "$arch" = x86_64 ]; then
	echo "pack-guest: building guest programs"
	for c in "$top"/guest/*.c; do
		b=$(basename "$c" .c)
		gcc -O2 -Wall -Wextra -Werror -static -pthread -isystem "$work/hdr/usr/include" \
			-o "$root/opt/tests/$b" "$c" -lm || die "compiling $c failed"
	done
else
	echo "pack-guest: no guest programs for $arch (guest/*.c are built for x86_64 only)"
fi

cp "$busybox" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
install -m 755 "$top/guest/init" "$root/init"
install -m 755 "$top/guest/ff-run-suite" "$root/bin/ff-run-suite"
for s in ff-policy ff-fuzz ff-kmemleak ff-peer-stress ff-perf ff-gcov-dump ff-cyclic; do
	install -m 755 "$top/guest/$s" "$root/bin/$s"
done
cp "$top"/guest/suites/*.txt "$root/suites/"
printf "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/tmp:/bin/sh\n" >"$root/etc/passwd"
printf "root:x:0:\nnogroup:x:65534:\n" >"$root/etc/group"

copy_with_libs() {
	local bin=$1 lib
	[ -x "$bin" ] || die "$bin missing (install its Debian package)"
	cp -L "$bin" "$root/usr/bin/"
	for lib in $(ldd "$bin" | grep -oE '/[^ ]+\.so[^ ]*'); do
		mkdir -p "$root$(dirname "$lib")"
		[ -e "$root$lib" ] || cp -L "$lib" "$root$lib"
	done
}

if [ "$tools" = 1 ]; then
	echo "pack-guest: adding perf, stress-ng, rt-tests, trinity, chrt"
	# Debian 12 ships the real ELF as /usr/bin/perf; older releases have a
	# wrapper script there and the binaries as /usr/bin/perf_<version>.
	perf=$(find /usr/bin -maxdepth 1 -name 'perf_*' -type f | sort -V | tail -1)
	if [ -z "$perf" ] && file -L /usr/bin/perf 2>/dev/null | grep -q ELF; then
		perf=/usr/bin/perf
	fi
	[ -n "$perf" ] || die "no ELF /usr/bin/perf or /usr/bin/perf_* (apt-get install linux-perf)"
	copy_with_libs "$perf"
	[ "$perf" = /usr/bin/perf ] || mv "$root/usr/bin/$(basename "$perf")" "$root/usr/bin/perf"
	for b in /usr/bin/stress-ng /usr/bin/pi_stress /usr/bin/cyclictest /usr/bin/trinity /usr/bin/chrt; do
		copy_with_libs "$b"
	done
fi

if [ -n "$treeperf" ]; then
	[ -x "$treeperf" ] || die "--tree-perf $treeperf: no such executable (scripts/build-perf.sh builds it)"
	file -L "$treeperf" | grep -q 'statically linked' || die "--tree-perf $treeperf is not statically linked"
	echo "pack-guest: adding the tree's perf $treeperf as /usr/bin/perf-tree"
	install -m 755 "$treeperf" "$root/usr/bin/perf-tree"
fi

(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 >"$out"
echo "pack-guest: wrote $out ($(du -h "$out" | cut -f1))"
