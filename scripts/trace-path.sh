#!/usr/bin/env bash
# Record the exact kernel instruction path of each futex operation of
# ff-icount (trace mode) on one kernel: boot it on one vCPU with QEMU's
# gdbstub, let gdb single-step every traced system call (scripts/
# trace-path.py), then count the instructions per call and per function
# (scripts/trace-report.py).  Compare two kernels with trace-report.py.
#
# usage: trace-path.sh <tree> <bzImage> <out.trace>
# The vmlinux next to the bzImage gives the symbols.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tree=${1:?usage: trace-path.sh <tree> <bzImage> <out.trace>}
image=${2:?missing bzImage}
out=${3:?missing output file}
command -v gdb >/dev/null || { echo "trace-path: error: gdb missing (apt-get install gdb)" >&2; exit 1; }
[ -f "$image" ] || { echo "trace-path: error: $image not found" >&2; exit 1; }

vmlinux=$(dirname "$image")/../../../vmlinux
[ -f "$vmlinux" ] || { echo "trace-path: error: no vmlinux next to $image" >&2; exit 1; }
entry=0x$(nm "$vmlinux" | awk '$3 == "do_syscall_64" { print $1 }')
[ "$entry" != 0x ] || { echo "trace-path: error: do_syscall_64 not in $vmlinux" >&2; exit 1; }

cd "$top"
scripts/pack-guest.sh "$tree" build/guest/trace build/guest/trace.cpio.gz >/dev/null
port=$((20000 + RANDOM % 20000))
log=${out%.trace}.log
FF_CPUS=1 FF_NODES=1 FF_GDB_PORT=$port scripts/boot.sh "$image" build/guest/trace.cpio.gz \
	trace "$log" 2400 &
qemu=$!
sleep 2
# ff-icount -t: 17 operations x 3 calls in each of 4 modes (vanilla: 1 mode)
FF_TRACE_ENTRY=$entry FF_GDB_PORT=$port FF_TRACE_OUT=$out FF_TRACE_CALLS=${FF_TRACE_CALLS:-1000} \
	timeout 2400 gdb -nx -batch -x scripts/trace-path.py >/dev/null 2>"$out.gdb.log" &
gdbpid=$!
wait "$qemu" || true
kill "$gdbpid" 2>/dev/null || true
wait "$gdbpid" 2>/dev/null || true
n=$(wc -l <"$out")
echo "trace-path: $n calls traced into $out (console: $log)"
[ "$n" -gt 0 ] || { echo "trace-path: error: nothing traced, see $out.gdb.log" >&2; exit 1; }
