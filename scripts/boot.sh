#!/usr/bin/env bash
# Boot a kernel and initramfs in QEMU (TCG, 4 vCPUs, two NUMA nodes), run
# the given guest suites, stream the serial console to a log file, and
# enforce a time limit.  Exit status: 0 when the guest powered off by
# itself, 124 on timeout, QEMU's status otherwise.  Judging the log is
# report.sh's job.
#
# usage: boot.sh <bzImage> <initrd> <suites|shell> <log> [timeout-s] [extra cmdline]
# Environment: FF_CPUS (4), FF_MEM_MB (2048), FF_NODES (2); one socket a node.
# FF_ICOUNT=1 adds -icount shift=0,sleep=off: guest time advances exactly
# 1 ns per executed instruction (of all vCPUs; TCG then runs the vCPUs
# round-robin in one host thread), so guest clock readings are instruction
# counts; when every vCPU idles, time jumps to the next timer instead of
# following the host's clock (sleep=off), which keeps timer lateness
# deterministic too.  FF_GDB_PORT=N opens QEMU's gdbstub on localhost:N
# (scripts/trace-path.sh).  FF_ARCH=arm64 boots an arm64 Image with
# qemu-system-aarch64 -M virt -cpu max instead (console ttyAMA0, with
# earlycon: a panic before the PL011 driver is up is seen too; FF_CPUS
# default 2, one node: FF_NODES must be 1).
set -euo pipefail

kernel=${1:?usage: boot.sh <bzImage> <initrd> <suites|shell> <log> [timeout] [cmdline]}
initrd=${2:?missing initrd}
suites=${3:?missing suites}
log=${4:?missing log file}
limit=${5:-1800}
extra=${6:-}
arch=${FF_ARCH:-x86_64}
case $arch in
x86_64) cpus=${FF_CPUS:-4} nodes=${FF_NODES:-2} ;;
arm64) cpus=${FF_CPUS:-2} nodes=${FF_NODES:-1} ;;
*) echo "boot: error: unknown FF_ARCH '$arch' (x86_64, arm64)" >&2; exit 1 ;;
esac
mem=${FF_MEM_MB:-2048}
icount=()
[ "${FF_ICOUNT:-0}" = 1 ] && icount=(-icount 'shift=0,sleep=off')
[ -n "${FF_GDB_PORT:-}" ] && icount+=(-gdb "tcp:127.0.0.1:$FF_GDB_PORT")

for f in "$kernel" "$initrd"; do
	[ -f "$f" ] || { echo "boot: error: $f not found" >&2; exit 1; }
done
if [ "$arch" = arm64 ]; then
	command -v qemu-system-aarch64 >/dev/null ||
		{ echo "boot: error: qemu-system-aarch64 missing (apt-get install qemu-system-arm)" >&2; exit 1; }
	[ "$nodes" = 1 ] || { echo "boot: error: FF_NODES=$nodes: the arm64 guest has one node" >&2; exit 1; }
else
	command -v qemu-system-x86_64 >/dev/null ||
		{ echo "boot: error: qemu-system-x86_64 missing (apt-get install qemu-system-x86)" >&2; exit 1; }
fi

numa=()
if [ "$nodes" -gt 1 ]; then
	per=$((cpus / nodes))
	for ((n = 0; n < nodes; n++)); do
		numa+=(-object "memory-backend-ram,id=m$n,size=$((mem / nodes))M"
		       -numa "node,nodeid=$n,cpus=$((n * per))-$(((n + 1) * per - 1)),memdev=m$n")
	done
fi

cmdline="console=ttyS0,115200 panic=-1 oops=panic softlockup_panic=0 loglevel=7 ff.suite=$suites $extra"
qemu=(qemu-system-x86_64 -accel tcg -cpu max -smp "$cpus,sockets=$nodes,cores=$((cpus / nodes)),threads=1" -m "${mem}M" "${numa[@]}" "${icount[@]}"
      -kernel "$kernel" -initrd "$initrd" -append "$cmdline"
      -nographic -no-reboot -nodefaults -serial stdio -monitor none)
if [ "$arch" = arm64 ]; then
	cmdline="console=ttyAMA0 earlycon panic=-1 oops=panic softlockup_panic=0 loglevel=7 ff.suite=$suites $extra"
	qemu=(qemu-system-aarch64 -M virt -cpu max -accel tcg -smp "$cpus" -m "${mem}M" "${icount[@]}"
	      -kernel "$kernel" -initrd "$initrd" -append "$cmdline"
	      -nographic -no-reboot -nodefaults -serial stdio -monitor none)
fi

if [ "$suites" = shell ]; then
	exec "${qemu[@]}"
fi

echo "boot: $(basename "$kernel") suites=$suites${icount[*]:+ (${icount[*]})}, limit ${limit}s, log $log"
rc=0
# Stream the console into the log; show suite headers and top-level results
# (and kernel splats) as progress.
timeout --foreground -k 10 "$limit" "${qemu[@]}" </dev/null 2>&1 | tee "$log" |
	grep --line-buffered -E '^(not )?ok [0-9]+ |^# suite:|Kernel panic|BUG:|WARNING:|Oops' |
	sed -u 's/^/  guest: /' || true
rc=${PIPESTATUS[0]}
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	echo "boot: TIMEOUT: guest still running after ${limit}s, killed" | tee -a "$log" >&2
	exit 124
fi
exit "$rc"
