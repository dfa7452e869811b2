#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Instructions per futex call from scripts/trace-path.sh traces.

usage: trace-report.py VMLINUX TRACE [VMLINUX2 TRACE2]
       trace-report.py --insns OP[#N] FUNCTION VMLINUX TRACE

For each operation of ff-icount -t (named from the system call, the futex
op and the fixed address it used), the last call of each run of calls is
the steady-state one: print its instruction count from do_syscall_64() to
its return and, with two kernels, the difference per function.  --insns
prints the instructions one call executed in one function, disassembled.
"""
import bisect
import subprocess
import sys
from collections import Counter, OrderedDict

BASE = 0x7F0000000000
FUTEX_CMDS = {0: "wait", 1: "wake", 3: "requeue", 4: "cmp_requeue",
              5: "wake_op", 6: "lock_pi", 7: "unlock_pi", 8: "trylock_pi"}
TRACED = (202, 449, 454, 455)	# futex, futex_waitv, futex_wake, futex_wait


def symbols(vmlinux):
    out = subprocess.run(["nm", "-n", vmlinux], check=True,
                         capture_output=True, text=True).stdout
    addrs, names = [], []
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "tTwW":
            addrs.append(int(f[0], 16))
            names.append(f[2])
    return addrs, names


def opname(nr, a0, a1):
    shared = "shared" if a0 >= BASE + 4096 else "private"
    if nr == 202:
        cmd = FUTEX_CMDS.get(a1 & 0x7f, "op%d" % (a1 & 0x7f))
        return "%s_%s" % (cmd, shared)
    if nr == 449:
        # the futex_waitv array sits in the private page; its word decides
        return "waitv"
    return {454: "futex2_wake", 455: "futex2_wait"}.get(nr, "nr%d" % nr) + "_" + shared


def load(vmlinux, trace, syms=None):
    addrs, names = syms or symbols(vmlinux)
    calls = []
    for line in open(trace):
        f = line.split()
        nr, a0, a1, n = int(f[0]), int(f[1], 16), int(f[2], 16), int(f[3])
        if nr not in TRACED:
            continue
        funcs = Counter()
        for pc in f[4:]:
            i = bisect.bisect_right(addrs, int(pc, 16)) - 1
            funcs[names[i] if i >= 0 else "?"] += 1
        calls.append((opname(nr, a0, a1), n, (funcs, f[4:])))
    # the last call of each run of identical operations, per occurrence
    runs = OrderedDict()
    seen = Counter()
    for i, (name, n, funcs) in enumerate(calls):
        if i + 1 < len(calls) and calls[i + 1][0] == name:
            continue
        seen[name] += 1
        runs["%s#%d" % (name, seen[name])] = (n, funcs)
    return runs


def insns(op, func, vmlinux, trace):
    addrs, names = symbols(vmlinux)
    runs = load(vmlinux, trace, (addrs, names))
    if "#" not in op:
        op += "#1"
    if op not in runs:
        sys.exit("trace-report: no operation %s in %s" % (op, trace))
    pcs = runs[op][1][1]
    if func not in names:
        sys.exit("trace-report: no function %s in %s" % (func, vmlinux))
    i = names.index(func)
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn",
                          "--start-address=0x%x" % addrs[i],
                          "--stop-address=0x%x" % addrs[i + 1], vmlinux],
                         check=True, capture_output=True, text=True).stdout
    text = {}
    for line in dis.splitlines():
        f = line.split(":", 1)
        if len(f) == 2 and f[0].strip().startswith("ffffffff") and " " not in f[0].strip():
            text[int(f[0], 16)] = f[1].strip()
    n = 0
    for pc in pcs:
        a = int(pc, 16)
        if addrs[i] <= a < addrs[i + 1]:
            n += 1
            print("%s+%-5d %s" % (func, a - addrs[i], text.get(a, "?")))
    print("%d instructions" % n)


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "--insns":
        insns(*sys.argv[2:])
        return
    if len(sys.argv) not in (3, 5):
        sys.exit(__doc__)
    a = load(sys.argv[1], sys.argv[2])
    if len(sys.argv) == 3:
        for k, (n, (funcs, _)) in a.items():
            print("%-26s %6d  %s" % (k, n, ", ".join(
                "%s %d" % kv for kv in funcs.most_common(12))))
        return
    b = load(sys.argv[3], sys.argv[4])
    for k, (n, (funcs, _)) in b.items():
        base = k.split("#")[0] + "#1"
        if base not in a:
            print("%-26s %6d  (no match in the first trace)" % (k, n))
            continue
        na, (fa, _) = a[base]
        diff = Counter(funcs)
        diff.subtract(fa)
        parts = ["%s %+d" % (f, d) for f, d in sorted(diff.items(), key=lambda x: -abs(x[1])) if d]
        print("%-26s %6d vs %6d (%+d)  %s" % (k, n, na, n - na, ", ".join(parts)))


if __name__ == "__main__":
    main()
