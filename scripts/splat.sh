#!/usr/bin/env bash
# Print the first kernel splat of a guest console log (panic, Oops, BUG:,
# WARNING:, general protection fault) with its registers and call trace,
# and the guest step that was running, so that a failure in CI shows its
# reason and not only its first line.  Prints nothing without a splat.
#
# usage: splat.sh <log> [max-lines]
set -euo pipefail

log=${1:?usage: splat.sh <log> [max-lines]}
max=${2:-60}
[ -f "$log" ] || { echo "splat: error: $log not found" >&2; exit 1; }

awk -v max="$max" '
{ sub(/\r$/, "") }
# The guest step in progress: ff-run-suite prints "# <name>: <command>".
!start && /^(# suite: |# [A-Za-z0-9_.-]+: )/ { step = $0 }
!start && /\] (Kernel panic|BUG:|WARNING:|Oops|general protection fault)/ {
	start = NR
	print "splat: first kernel splat at line " NR " of " FILENAME
	if (step != "") print "splat: guest step running: " step
}
start {
	print "  " $0
	if (++n >= max || /---\[ end trace|Kernel panic - not syncing/) exit
}' "$log"
