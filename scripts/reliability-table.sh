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
END {
	printf "| %s | %d (%d runs) | %d / %d / %d / %d | %d / %d | %d (%d cases, %d failed) | %d cases, %d failed | %d s, %d calls | %s | %d | %d (%d spurious) | %s |\n",
		label, ops, runs, resizes, switches, growths, migrated, forks, execs,
		faults, icases, ifail, bcases, bfail, fuzzs, fuzzc,
		kl ? leaks "" : "n/a", splats, lost + failed, spurious, verdict
}' "$log"
