#!/usr/bin/env bash
# Whether a guest console log shows QEMU's stale-int3 TCG bug; if so, set
# the log aside as <log>.qemu-int3, say so on stderr and exit 0.
#
# QEMU before 8.1 (Debian 12 has 7.2) can run a stale translation of a
# kernel text page another vCPU has just patched (fixed by QEMU commit
# deba78709a, "accel/tcg: Always lock pages before translation"): the guest
# then executes the int3 which text_poke_bp() had put on a jump label site
# after the patching is over, and dies with "Oops: int3" at that site. That
# is not a kernel bug: bench.sh and test.sh boot such a guest again, once;
# a second one fails the run like any other oops.
#
# usage: qemu-stale-int3.sh <log> <who>   (who: prefix of the message)
set -euo pipefail

log=${1:?usage: qemu-stale-int3.sh <log> <who>}
who=${2:?usage: qemu-stale-int3.sh <log> <who>}
[ -f "$log" ] || exit 1
grep -qE 'Oops: int3: ' "$log" || exit 1
mv "$log" "$log.qemu-int3"
rip=$(grep -m1 -E 'RIP: ' "$log.qemu-int3" | tr -d '\r' | sed 's/^.*RIP: //' || true)
echo "$who: the guest died of QEMU's stale-int3 TCG bug ($rip; log $log.qemu-int3); booting it again, once" >&2
