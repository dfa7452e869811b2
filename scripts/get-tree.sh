#!/usr/bin/env bash
# Install Debian's linux-source-6.12, unpack it into a git work tree tagged
# 'base', and apply patches/series on top as commits.
#
# usage: get-tree.sh <dir> [--no-series]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:?usage: get-tree.sh <dir> [--no-series]}
apply=1
[ "${2:-}" = --no-series ] && apply=0
tarball=/usr/src/linux-source-6.12.tar.xz

die() { echo "get-tree: error: $*" >&2; exit 1; }

if [ ! -f "$tarball" ]; then
	echo "get-tree: installing linux-source-6.12 with apt-get"
	apt-get install -y -q linux-source-6.12 >/dev/null ||
		die "apt-get install linux-source-6.12 failed (run 'apt-get update' first?)"
fi
[ -f "$tarball" ] || die "$tarball missing after install"
pkgver=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || echo unknown)

if [ -d "$dir/.git" ]; then
	echo "get-tree: $dir already exists; leaving it alone (remove it to recreate)"
	exit 0
fi

mkdir -p "$dir"
echo "get-tree: unpacking $tarball (linux-source-6.12 $pkgver) into $dir"
tar -xf "$tarball" -C "$dir" --strip-components=1

cd "$dir"
git init -q -b master
git config user.name "fastfutex harness"
git config user.email "fastfutex@localhost"
git config core.autocrlf false
git add -A -f . >/dev/null
git commit -q -m "linux-source-6.12 $pkgver (Debian, pristine)"
git tag base
kver=$(make -s kernelversion)
echo "get-tree: kernel $kver (Debian linux-source-6.12 $pkgver), tagged 'base'"

[ "$apply" = 1 ] || exit 0
series="$top/patches/series"
[ -f "$series" ] || { echo "get-tree: no patches/series; tree is vanilla"; exit 0; }
n=0
while read -r p; do
	case "$p" in ''|'#'*) continue ;; esac
	n=$((n + 1))
	if ! git am -q --keep-cr "$top/patches/$p" 2>/dev/null; then
		git am --abort 2>/dev/null || true
		die "patch $n ($p) does not apply to linux-source-6.12 $pkgver"
	fi
done < "$series"
echo "get-tree: applied $n patches from patches/series"
