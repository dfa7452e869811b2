#!/usr/bin/env bash
# Install the Debian 12 packages the harness needs (idempotent, quiet when
# everything is already there).
set -euo pipefail

pkgs=(linux-source-6.12 build-essential bc bison flex libelf-dev libssl-dev
      cpio gzip xz-utils file rsync python3 dwarves ccache git
      qemu-system-x86 busybox-static shellcheck gdb
      linux-perf stress-ng rt-tests trinity gnuplot-nox)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} = 0 ] && exit 0
[ "$(id -u)" = 0 ] || { echo "deps: error: need root to install: ${missing[*]}" >&2; exit 1; }
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
