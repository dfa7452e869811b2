#!/usr/bin/env python3
"""make coverage: per-file gcov table of kernel/futex/ and the lines the
series adds that never ran.

Reads gcov's JSON output (gcov -b -c --json-format, one file per .gcda) and
the series' added lines (git diff -U0 base HEAD -- kernel/futex/ in the
tree that was built).  A line is executable when gcov has a count for it in
any translation unit, executed when any unit ran it (futex.h's inline
functions are compiled into several units).  Branches are gcov's "taken at
least once"; for a header line compiled into several units, branch i counts
as taken when it was taken in any unit.

Writes <out>/summary.md (the table) and <out>/unexecuted.txt (every added,
executable, never executed line as file:line: source, grouped by function).

usage: coverage-report.py <src-tree> <base-ref> <out-dir> <json.gz>...
"""
import collections
import gzip
import json
import os
import re
import subprocess
import sys

GOAL = 95.0
PREFIX = "kernel/futex/"


def rel_futex(path):
    """kernel/futex/<name> for a gcov source path, or None."""
    i = path.rfind(PREFIX)
    if i < 0:
        return None
    return path[i:]


def enclosing(source, n):
    """Name of the function around line n (1-based) in kernel style: the
    nearest "{" at column 0 above it, and the name before "(" of the
    signature above that."""
    for i in range(n - 1, -1, -1):
        if source[i].startswith("}") and i < n - 1:
            break
        if source[i].rstrip() == "{":
            sig = " ".join(source[max(0, i - 4):i])
            sig = re.split(r"[;}]|\*/", sig)[-1]
            m = re.search(r"(\w+)\s*\(\s*(\w*)", sig)
            if not m:
                break
            if m.group(1).startswith("SYSCALL_DEFINE"):
                return "sys_" + m.group(2)
            return m.group(1)
    return None


def added_lines(src, base):
    """{file: set(line numbers)} added by the commits base..HEAD."""
    diff = subprocess.run(
        ["git", "-C", src, "diff", "-U0", "--no-color", base, "HEAD", "--", PREFIX],
        check=True, capture_output=True, text=True).stdout
    added = collections.defaultdict(set)
    cur = None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            cur = line[6:] if line.startswith("+++ b/") else None
        elif line.startswith("@@") and cur and cur.endswith((".c", ".h")):
            m = re.match(r"@@ -\S+ \+(\d+)(?:,(\d+))? @@", line)
            start, count = int(m.group(1)), int(m.group(2) or 1)
            added[cur].update(range(start, start + count))
    return added


def main():
    if len(sys.argv) < 5:
        sys.exit("coverage-report: error: usage: coverage-report.py <src> <base> <out> <json.gz>...")
    src, base, out = sys.argv[1:4]
    counts = collections.defaultdict(dict)      # file -> line -> count (max over units)
    branches = collections.defaultdict(dict)    # file -> line -> [taken?]
    funcs = collections.defaultdict(list)       # file -> [(start, end, name)]
    for path in sys.argv[4:]:
        with gzip.open(path, "rt") as f:
            data = json.load(f)
        for fe in data["files"]:
            name = rel_futex(fe["file"])
            if name is None:
                continue
            for fn in fe["functions"]:
                entry = (fn["start_line"], fn["end_line"], fn["demangled_name"])
                if entry not in funcs[name]:
                    funcs[name].append(entry)
            for ln in fe["lines"]:
                n = ln["line_number"]
                counts[name][n] = max(counts[name].get(n, 0), ln["count"])
                taken = [b["count"] > 0 for b in ln["branches"]]
                old = branches[name].get(n, [])
                if len(old) < len(taken):
                    old = old + [False] * (len(taken) - len(old))
                branches[name][n] = [a or (i < len(taken) and taken[i]) for i, a in enumerate(old)]
    if not counts:
        sys.exit("coverage-report: error: no gcov data for " + PREFIX)

    added = added_lines(src, base)
    rows = []
    unexec = collections.defaultdict(lambda: collections.defaultdict(list))
    sources = {}
    for name in sorted(set(counts) | set(added)):
        c = counts.get(name, {})
        lines = len(c)
        ran = sum(1 for v in c.values() if v > 0)
        br = [t for ts in branches.get(name, {}).values() for t in ts]
        add = sorted(n for n in added.get(name, ()) if n in c)
        add_ran = sum(1 for n in add if c[n] > 0)
        rows.append((name, lines, ran, len(br), sum(br), len(added.get(name, ())), len(add), add_ran))
        if add_ran < len(add):
            with open(os.path.join(src, name), encoding="utf-8", errors="replace") as f:
                sources[name] = f.read().split("\n")
            for n in add:
                if c[n] > 0:
                    continue
                fn, best = None, None
                for s, e, fname in funcs.get(name, ()):
                    if s <= n <= e and (best is None or e - s < best):
                        fn, best = fname, e - s
                # Static inline functions gcov has no range for.
                fn = fn or enclosing(sources[name], n) or "(outside any function)"
                unexec[name][fn].append(n)

    def pct(a, b):
        return "-" if b == 0 else "%.1f%%" % (100.0 * a / b)

    def total(sel):
        t = [0] * 7
        for r in rows:
            if sel(r[0]):
                t = [x + y for x, y in zip(t, r[1:])]
        return t

    head = subprocess.run(["git", "-C", src, "log", "-1", "--format=%h %s"],
                          check=True, capture_output=True, text=True).stdout.strip()
    md = ["# Coverage of kernel/futex/ (make coverage)", "",
          "Kernel: %s (series: %s..HEAD)." % (head, base),
          "Lines and branches: gcov (`gcov -b -c`); branches = taken at least once.",
          "Series-added: lines of `git diff %s HEAD -- %s` that gcov counts as executable." % (base, PREFIX),
          "",
          "| file | lines executed | branches taken | series-added lines executed |",
          "| --- | --- | --- | --- |"]
    for name, lines, ran, nbr, nbr_t, nadd_all, nadd, nadd_ran in rows:
        md.append("| %s | %d/%d (%s) | %d/%d (%s) | %d/%d (%s) |" % (
            name, ran, lines, pct(ran, lines), nbr_t, nbr, pct(nbr_t, nbr),
            nadd_ran, nadd, pct(nadd_ran, nadd)))
    for label, sel in (("total", lambda n: True),
                       ("total without the KUnit tests", lambda n: not n.endswith("_kunit.c"))):
        lines, ran, nbr, nbr_t, _, nadd, nadd_ran = total(sel)
        md.append("| **%s** | %d/%d (%s) | %d/%d (%s) | %d/%d (%s) |" % (
            label, ran, lines, pct(ran, lines), nbr_t, nbr, pct(nbr_t, nbr),
            nadd_ran, nadd, pct(nadd_ran, nadd)))
    _, _, _, _, _, nadd, nadd_ran = total(lambda n: not n.endswith("_kunit.c"))
    got = 100.0 * nadd_ran / nadd if nadd else 100.0
    md += ["",
           "Goal: at least %.0f%% of the series-added executable lines outside the KUnit "
           "tests executed: %s (%d/%d, %.1f%%); the %d others are in unexecuted.txt." % (
               GOAL, "met" if got >= GOAL else "NOT met", nadd_ran, nadd, got, nadd - nadd_ran)]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("\n".join(md) + "\n")

    txt = ["# Lines the series adds to kernel/futex/ that gcov counts as executable",
           "# and that never ran during make coverage (%s)." % head,
           "# Grouped by file and function; file:line: source.", ""]
    for name in sorted(unexec):
        for fn in sorted(unexec[name], key=lambda k: unexec[name][k][0]):
            txt.append("## %s: %s() (%d)" % (name, fn, len(unexec[name][fn])))
            for n in unexec[name][fn]:
                txt.append("%s:%d: %s" % (name, n, sources[name][n - 1].strip()))
            txt.append("")
    with open(os.path.join(out, "unexecuted.txt"), "w") as f:
        f.write("\n".join(txt))
    print("\n".join(md))


if __name__ == "__main__":
    main()
