#!/usr/bin/env bash
# Judge a guest console log: count KTAP results of the guest suites and of
# KUnit (printed by the kernel at boot), and look for kernel splats.  Prints
# one summary and fails with the reason on: a panic, an Oops, BUG:, WARNING:,
# a lockdep or KASAN report, a kmemleak report, a soft lockup or hung task, a
# "not ok" result, a missing or unmet KTAP plan, or a guest that never
# finished (timeout or crash).
#
# usage: report.sh <log> [label]
set -euo pipefail

log=${1:?usage: report.sh <log> [label]}
label=${2:-$(basename "$log" .log)}
[ -f "$log" ] || { echo "report: error: $log not found" >&2; exit 1; }

awk -v label="$label" '
function fail(why) { reasons[++nreasons] = why }
{
	sub(/\r$/, "")
	line = $0
	kernel = 0
	if (match(line, /^\[ *[0-9]+\.[0-9]+\] /)) {
		kernel = 1
		line = substr(line, RLENGTH + 1)
	}
}
kernel {
	if (line ~ /Kernel panic/) fail("kernel panic: " line)
	else if (line ~ /BUG: KASAN/) fail("KASAN report: " line)
	else if (line ~ /BUG:/) fail("kernel BUG: " line)
	else if (line ~ /^Oops|general protection fault/) fail("kernel Oops: " line)
	else if (line ~ /WARNING: .*(locking|lock state|lock held|suspicious RCU)/) fail("lockdep report: " line)
	else if (line ~ /WARNING:/) fail("kernel WARNING: " line)
	else if (line ~ /UBSAN:/) fail("UBSAN report: " line)
	else if (line ~ /INFO: task .* blocked for more than/) fail("hung task: " line)
	else if (line ~ /rcu: INFO: .* stall/) fail("RCU stall: " line)
	else if (line ~ /kmemleak: [0-9]+ new suspected memory leaks/) fail("kmemleak: " line)
	# KUnit: suites at column 0, cases indented by 4.
	if (line ~ /^KTAP version/) kunit_seen = 1
	if (kunit_seen && line ~ /^    (not )?ok [0-9]+ /) {
		if (line ~ /# SKIP/) kskip++
		else if (line ~ /^    not ok/) { kfail++; fail("KUnit: " line) }
		else kpass++
	}
	next
}
# kmemleak leak reports printed by a guest program (ff-kmemleak scan).
/unreferenced object 0x[0-9a-f]+/ { fail("kmemleak: " $0) }
# Guest KTAP, printed by ff-run-suite at column 0.
/^# suite: / { suite = substr($0, 10); nsuites++; plan[suite] = -1; got[suite] = 0; next }
/^1\.\.[0-9]+$/ && suite != "" && plan[suite] == -1 { plan[suite] = substr($0, 4) + 0; next }
/^(not )?ok [0-9]+ / && suite != "" {
	got[suite]++
	name = $0; sub(/^(not )?ok [0-9]+ /, "", name)
	if ($0 ~ /# SKIP/) { skip++; results[++nres] = "SKIP " suite "/" name }
	else if ($1 == "not") { failed++; results[++nres] = "FAIL " suite "/" name; fail("not ok: " suite "/" name) }
	else { pass++; results[++nres] = "ok   " suite "/" name }
	next
}
/^FF-DONE$/ { done = 1 }
/^boot: TIMEOUT/ { fail($0) }
END {
	for (s in plan) {
		if (plan[s] < 0) fail("suite " s ": no KTAP plan")
		else if (got[s] != plan[s]) fail("suite " s ": planned " plan[s] " tests, got " got[s] " results")
	}
	if (nsuites == 0) fail("no guest suite output at all")
	if (!done) fail("guest did not finish (no FF-DONE): crash, hang or timeout")
	for (i = 1; i <= nres; i++) print "  " results[i]
	if (kpass + kfail + kskip > 0)
		printf "  KUnit: %d passed, %d failed, %d skipped\n", kpass, kfail, kskip
	printf "%s: %d passed, %d failed, %d skipped\n", label, pass + kpass, failed + kfail, skip + kskip
	if (nreasons) {
		for (i = 1; i <= nreasons && i <= 20; i++) print "FAILED: " reasons[i] > "/dev/stderr"
		if (nreasons > 20) print "FAILED: ... and " nreasons - 20 " more" > "/dev/stderr"
		exit 1
	}
}' "$log"
