#!/usr/bin/env bash
# Whether a guest console log shows QEMU's stale-int3 TCG bug: exit 0 if so.
#
# QEMU before 8.1 (Debian 12 has 7.2) can run a stale translation of a
# kernel text page another vCPU has just patched (fixed by QEMU commit
# deba78709a, "accel/tcg: Always lock pages before translation"): the guest
# then executes the int3 which text_poke_bp() had put on a jump label site
# after the patching is over, and dies with "Oops: int3" at that site. That
# is not a kernel bug: bench.sh and test.sh boot such a guest again, once,
# and say so; a second one fails the run like any other oops.
#
# usage: qemu-stale-int3.sh <log>
set -euo pipefail

log=${1:?usage: qemu-stale-int3.sh <log>}
[ -f "$log" ] || exit 1
grep -qE 'Oops: int3: ' "$log"
