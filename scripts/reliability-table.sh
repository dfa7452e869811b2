#!/usr/bin/env bash
# Print the README reliability table row for one console log of the
# reliability suite, from the "# ...-summary:" lines the guest programs
# print, and the splat verdict of report.sh.
#
# usage: reliability-table.sh <log> <config-label>
set -euo pipefail

log=${1:?usage: reliability-table.sh <log> <config-label>}
label=${2:?missing config label}
top=$(cd "$(dirname "$0")/.." && pwd)
[ -f "$log" ] || { echo "reliability-table: error: $log not found" >&2; exit 1; }

# Kernel splats as report.sh sees them (panic, Oops, BUG, WARNING, lockdep,
# KASAN, UBSAN, hung task, RCU stall, kmemleak).
splats=$("$top/scripts/report.sh" "$log" "$label" 2>&1 >/dev/null |
	grep -cE 'FAILED: (kernel|KASAN|lockdep|UBSAN|hung task|RCU stall|kmemleak)' || true)
verdict=PASS
"$top/scripts/report.sh" "$log" "$label" >/dev/null 2>&1 || verdict=FAIL

awk -v label="$label" -v splats="$splats" -v verdict="$verdict" '
function val(key,   i, n, kv) {
	n = split($0, f, " ")
	for (i = 1; i <= n; i++) {
		split(f[i], kv, "=")
		if (kv[1] == key) return kv[2] + 0
	}
	return 0
}
/# torture-summary:/ {
	ops += val("ops"); handoffs += val("handoffs"); resizes += val("resizes")
	switches += val("switches"); growths += val("growths"); migrated += val("migrated")
	forks += val("forks"); execs += val("execs"); lost += val("lost"); failed += val("failed_rounds"); spurious += val("spurious")
	runs++
}
/# inject-summary:/ { faults += val("faults_injected"); icases += val("cases"); ifail += val("failed") }
/# badinput-summary:/ { bcases += val("cases"); bfail += val("failed") }
/# fuzz-summary:/ { fuzzs += val("seconds"); fuzzc += val("syscalls") }
/# kmemleak-summary:/ { leaks += val("leaks"); kl = 1 }
# ff-rtswitch: FIFO wait/wake during switches by every path
/# rtswitch-summary:/ {
	rs = 1; rcases += val("cases"); rfail += val("failed"); rsw += val("switched")
	lost += val("lost") + val("stalls"); rerr += val("errors")
	if (val("max_late_us") > rlate) rlate = val("max_late_us")
	if (val("max_rtt_us") > rrtt) rrtt = val("max_rtt_us")
}
# ff-pilat: FIFO lock_pi/unlock_pi while a sibling switches under failslab
/# pilat-summary:/ {
	ps = 1; pfail += val("failed"); pops += val("lock_pi"); pcalls += val("calls")
	penomem += val("enomem"); pfaults += val("faults"); perr += val("errors")
	if (val("max_lock_us") > plock) plock = val("max_lock_us")
	if (val("max_unlock_us") > punlock) punlock = val("max_unlock_us")
}
END {
	fifo = rs ? sprintf("%d cases, %d switches, worst %.1f / %.1f ms, %d failed", rcases, rsw,
			    rlate / 1000, rrtt / 1000, rfail + rerr) : "n/a"
	pi = ps ? sprintf("%d locks, %d ENOMEM of %d calls (%d faults), worst %.1f / %.1f ms, %d failed",
			  pops, penomem, pcalls, pfaults, plock / 1000, punlock / 1000, pfail) : "n/a"
	printf "| %s | %d (%d runs) | %d / %d / %d / %d | %d / %d | %d (%d cases, %d failed) | %d cases, %d failed | %d s, %d calls | %s | %s | %s | %d | %d (%d spurious) | %s |\n",
		label, ops, runs, resizes, switches, growths, migrated, forks, execs,
		faults, icases, ifail, bcases, bfail, fuzzs, fuzzc, fifo, pi,
		kl ? leaks "" : "n/a", splats, lost + failed, spurious, verdict
}' "$log"
