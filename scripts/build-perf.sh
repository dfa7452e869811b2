#!/usr/bin/env bash
# Build the tree's own perf (tools/perf) for the guest: statically linked,
# with only what 'perf bench' needs (no libelf, libtraceevent, jevents,
# python, perl, BPF, unwinding, ...), out of tree in <outdir>.  The build is
# cached: it reruns only when the sources perf is built from (tools/perf,
# tools/lib, tools/include, tools/build, tools/arch, tools/scripts: their
# committed state plus uncommitted changes), the options or the compiler
# changed.  About 65 s on 2 idle cores from scratch (100-220 s while other
# jobs share them).
#
# usage: build-perf.sh <srcdir> <outdir>
# Prints the path of the stripped static binary on the last line of stdout.
set -euo pipefail

src=${1:?usage: build-perf.sh <srcdir> <outdir>}
out=${2:?usage: build-perf.sh <srcdir> <outdir>}

die() { echo "build-perf: error: $*" >&2; exit 1; }
[ -f "$src/tools/perf/Makefile.perf" ] || die "$src has no tools/perf (not a kernel tree?)"
src=$(cd "$src" && pwd)
mkdir -p "$out/build"
out=$(cd "$out" && pwd)
log=$out/build.log
bin=$out/perf

# No ccache: perf's ~320 objects built from scratch took 84 s through a
# warm ccache here, 65 s without it.
cc=gcc
# Everything 'perf bench' can do without: each NO_* drops a library (and
# its feature test), so the binary links statically against glibc alone.
opts=(LDFLAGS=-static WERROR=0 BUILD_BPF_SKEL=0
      NO_LIBELF=1 NO_LIBTRACEEVENT=1 NO_JEVENTS=1 NO_LIBPYTHON=1 NO_LIBPERL=1
      NO_LIBBPF=1 NO_SLANG=1 NO_GTK2=1 NO_DEMANGLE=1 NO_LIBUNWIND=1
      NO_LIBDW_DWARF_UNWIND=1 NO_DWARF=1 NO_LIBNUMA=1 NO_LIBCRYPTO=1
      NO_LIBCAP=1 NO_LIBBABELTRACE=1 NO_LIBZSTD=1 NO_LZMA=1 NO_ZLIB=1
      NO_AUXTRACE=1 NO_SDT=1 NO_LIBAUDIT=1 NO_LIBDEBUGINFOD=1 NO_LIBPFM4=1
      NO_SHELLCHECK=1 NO_JVMTI=1 NO_CAPSTONE=1)
dirs=(tools/perf tools/lib tools/include tools/build tools/arch tools/scripts)

# The cache key: the sources' state, the options, the compiler.
key=$(
	cd "$src"
	if git rev-parse --verify -q HEAD >/dev/null 2>&1; then
		for d in "${dirs[@]}"; do
			echo "$d $(git rev-parse "HEAD:$d" 2>/dev/null || echo none)"
		done
		git diff HEAD -- "${dirs[@]}"
		git ls-files -z -o --exclude-standard -- "${dirs[@]}" | xargs -0 -r sha256sum
	else
		find "${dirs[@]}" -type f -printf '%p %s %T@\n' | sort
	fi
	echo "${opts[*]}"
	gcc --version | head -1
)
key=$(sha256sum <<<"$key" | cut -d' ' -f1)
if [ -x "$bin" ] && [ "$(cat "$out/.key" 2>/dev/null)" = "$key" ]; then
	echo "build-perf: $bin is up to date with $src/tools/perf"
	echo "$bin"
	exit 0
fi

echo "build-perf: building $src/tools/perf statically in $out ($(nproc) jobs, CC=$cc, log $log)"
start=$(date +%s)
rm -f "$bin" "$out/.key"
if ! make -C "$src/tools/perf" O="$out/build" CC="$cc" -j"$(nproc)" "${opts[@]}" perf >"$log" 2>&1; then
	grep -E 'error|Error' "$log" | head -20 >&2
	die "perf build failed, see $log"
fi
file "$out/build/perf" | grep -q 'statically linked' || die "$out/build/perf is not statically linked"
strip -o "$bin" "$out/build/perf"
"$bin" bench futex hash -h >/dev/null 2>&1 || [ $? = 129 ] || die "$bin does not run"
echo "$key" >"$out/.key"
echo "build-perf: built $bin ($(du -h "$bin" | cut -f1)) in $(($(date +%s) - start))s"
echo "$bin"
