#!/usr/bin/env bash
# make test: build the kernel with the series for one config, pack the
# guest, boot it, run the suites and judge the log; then prove the harness
# can fail (harness self-test).  One summary line at the end; non-zero exit
# on any failure.
#
# usage: test.sh <tree> <config-name> <suites> [--no-selftest]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tree=${1:?usage: test.sh <tree> <config> <suites> [--no-selftest]}
config=${2:?missing config name}
suites=${3:?missing suites}
selftest=1
[ "${4:-}" = --no-selftest ] && selftest=0
cd "$top"
res="results/test-$config"
mkdir -p "$res"

frags=(configs/base.config configs/attached.config)
case "$config" in
debug) frags+=(configs/debug.config) ;;
rt) frags+=(configs/debug.config configs/rt.config) ;;
base) ;;
*) echo "test: error: unknown config '$config' (base, debug, rt)" >&2; exit 1 ;;
esac

echo "== test[$config]: kernel"
image=$(scripts/build-kernel.sh "$tree" "build/out/$(basename "$tree")-$config" "${frags[@]}" | tee /dev/stderr | tail -1)
echo "== test[$config]: guest"
# --tools: stress-ng, pi_stress and trinity for the reliability suite.
scripts/pack-guest.sh "$tree" "build/guest/test" "build/guest/test.cpio.gz" --tools

status=0
summary=()
npass=0 nfail=0 nskip=0
run() { # label suites timeout expect(pass|fail) [reason-regex]
	local label=$1 s=$2 limit=$3 expect=$4 want=${5:-} log="$res/$1.log" out rc=0
	echo "== test[$config]: boot $label ($s)"
	scripts/boot.sh "$image" build/guest/test.cpio.gz "$s" "$log" "$limit" || true
	# A guest killed by QEMU 7.2, not by the kernel: see the script
	if scripts/qemu-stale-int3.sh "$log" "test: $label"; then
		scripts/boot.sh "$image" build/guest/test.cpio.gz "$s" "$log" "$limit" || true
	fi
	out=$(scripts/report.sh "$log" "$label" 2>&1) || rc=$?
	if [ "$expect" = pass ]; then
		echo "$out"
		summary+=("$(echo "$out" | tail -1)")
		read -r p f k < <(echo "$out" | tail -1 | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped/\1 \2 \3/')
		npass=$((npass + p)) nfail=$((nfail + f)) nskip=$((nskip + k))
		if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
			nfail=$((nfail + 1)) # a splat or a timeout without a failed test
		fi
		if [ "$rc" != 0 ]; then
			status=1
			scripts/splat.sh "$log" || true
		fi
	elif [ "$rc" = 0 ]; then
		echo "test: harness self-test $label: the harness accepted a deliberate fault"
		echo "$out"
		summary+=("harness-selftest $label: FAILED (fault not detected)")
		nfail=$((nfail + 1))
		status=1
	elif ! echo "$out" | grep -qE "$want"; then
		echo "test: harness self-test $label: failed for the wrong reason (wanted /$want/):"
		echo "$out"
		summary+=("harness-selftest $label: FAILED (wrong reason)")
		nfail=$((nfail + 1))
		status=1
	else
		echo "harness self-test $label: caught as expected: $(echo "$out" | grep -E "$want" | head -1)"
		summary+=("harness-selftest $label: ok (fault detected)")
		npass=$((npass + 1))
	fi
}

run "$config" "$suites" 4800 pass
if [ "$selftest" = 1 ]; then
	run harness-notok harness-fail-notok 300 fail 'not ok: harness-fail-notok/reports_not_ok'
	run harness-hang harness-fail-hang 300 fail 'TIMEOUT after 5s|not ok: harness-fail-hang/hangs'
	run harness-warn harness-fail-warn 300 fail 'kernel WARNING'
	run harness-lostwake harness-fail-lostwake 300 fail 'not ok: harness-fail-lostwake/lost_wakeup'
	run harness-fuzz harness-fail-fuzz 300 fail 'not ok: harness-fail-fuzz/sysfuzz_checks'
fi

echo
echo "== test[$config] summary (logs in $res/)"
printf '  %s\n' "${summary[@]}"
if [ "$status" = 0 ]; then echo "test[$config]: PASS"; else echo "test[$config]: FAIL"; fi
echo "$config: $npass passed, $nfail failed, $nskip skipped"
exit "$status"
