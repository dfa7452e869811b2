#!/usr/bin/env bash
# Turn the raw results of scripts/bench.sh into Markdown tables (stdout and
# <outdir>/summary.md) and gnuplot PNG plots.  Every number is a ratio of
# two results of the same run; absent results print as n/a.
#
# Figures from boots under QEMU -icount shift=0 are instruction counts
# ("TCG icount"); all others are guest wall-clock time ("TCG wall clock").
#
# usage: bench-report.sh <raw.csv> <outdir> [quick] [parts]
set -euo pipefail

raw=${1:?usage: bench-report.sh <raw.csv> <outdir> [quick] [parts]}
outdir=${2:?missing output dir}
quick=${3:-0}
parts=${4:-wall,2014,icount,rtlat,piinv,cyclic,perf,drain,snitch}
[ -f "$raw" ] || { echo "bench-report: error: $raw not found" >&2; exit 1; }
mkdir -p "$outdir"

python3 - "$raw" "$outdir" "$quick" "$parts" <<'PY'
import csv, os, statistics, sys

raw, outdir, quick = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
parts = sys.argv[4].split(",")
rows = list(csv.DictReader(open(raw)))
data = {}  # (workload, km, param, metric) -> [values]
for r in rows:
    try:
        v = float(r["value"])
    except ValueError:
        continue
    km = r["kernel"] + ("/" + r["mode"] if r["mode"] not in ("", "-") else "")
    if r["boot"].endswith("-8cpu") or "-8cpu-" in r["boot"]:
        km = r["boot"] + "/" + r["mode"]
    wl = r["workload"]
    # ff-bench's workloads booted under -icount: instruction counts.
    if "-icount" in r["boot"] and not wl.startswith("icount"):
        wl = "ic:" + wl
    if "-rtlat" in r["boot"] and wl == "hashsize":
        km = r["boot"]
    data.setdefault((wl, km, r["param"], r["metric"]), []).append(v)

def get(wl, km, param, metric):
    v = data.get((wl, km, str(param), metric))
    return statistics.median(v) if v else None

modes = ["0", "1", "2", "3", "prealloc", "attached"]
mode_name = {"0": "m0 (off)", "1": "m1 (first conflict)", "2": "m2 (first private op, default)",
             "3": "m3 (second thread)", "prealloc": "prealloc (m1 + FUTEX_PREALLOC_HASH)",
             "attached": "attached (m1, victim's futexes attached)"}
kms = [("vanilla/global", "vanilla")]
if any(k[1] == "patched/global" for k in data):
    kms.append(("patched/global", "patched (no policy sysctl)"))
kms += [("patched/" + (m if m in ("prealloc", "attached") else "m" + m), "patched " + mode_name[m]) for m in modes]
levels = sorted({int(k[2]) for k in data if k[0] == "victim-wake"} | ({0, 8192, 65536} if quick else {0, 2048, 8192, 32768, 65536}))

def fmt(x, unit="x"):
    if x is None:
        return "n/a"
    if unit == "x":
        return "%.2fx" % x
    return "%.0f" % x

def outcome(judged, bad):
    """A goal's verdict over `judged` comparisons, naming the failing ones."""
    if not judged:
        return "**n/a**"
    return "**PASS**" if not bad else "**FAIL** (" + ", ".join(bad) + ")"

out = []
def p(s=""):
    out.append(s)

def ratio_table(title, wl, metric, note=""):
    p("### " + title)
    p()
    if note:
        p(note)
        p()
    p("| kernel / policy | quiet (ns) | quiet / vanilla quiet | " + " | ".join("%d waiters" % n for n in levels if n) + " |")
    p("|---|---:|---:|" + "---:|" * len([n for n in levels if n]))
    vq = get(wl, "vanilla/global", 0, metric)
    for km, name in kms:
        q = get(wl, km, 0, metric)
        cells = []
        for n in levels:
            if not n:
                continue
            v = get(wl, km, n, metric)
            cells.append(fmt(v / q if v is not None and q else None))
        p("| %s | %s | %s | %s |" % (name, fmt(q, "ns"), fmt(q / vq if q is not None and vq else None), " | ".join(cells)))
    p()

p("# fastfutex bench%s" % (" (QUICK subset)" if quick else ""))
p()
p("QEMU TCG guests, 4 vCPUs, 2 NUMA nodes, same non-debug config for both kernels. "
  "Two kinds of figures: **TCG wall clock** (guest time of an emulated CPU on a shared 2-core host: "
  "only ratios of two results of the same run mean anything, and they move by up to 10%, more under "
  "contention) and **TCG icount** (guests booted with QEMU `-icount shift=0`, where guest time advances "
  "exactly 1 ns per executed instruction: the figures are instruction counts, repeatable to about 1%). "
  "quiet = the same measurement with 0 neighbour waiters. n/a = not measured (kernel or feature absent).")
p()
perf_ratios = []
if "wall" in parts:
    v65 = get("victim-wake", "vanilla/global", 65536, "p50_ns")
    v0 = get("victim-wake", "vanilla/global", 0, "p50_ns")
    m65 = get("victim-wake", "patched/m1", 65536, "p50_ns")
    m0 = get("victim-wake", "patched/m1", 0, "p50_ns")
    p("**Goal** (TCG wall clock; victim FUTEX_WAKE p50 at 65536 neighbour waiters, policy 1, <= 1.10x quiet): "
      "patched %s, vanilla %s." % (fmt(m65 / m0 if m65 and m0 else None), fmt(v65 / v0 if v65 and v0 else None)))
    p()
    p("## 1. Noisy neighbour: victim cost relative to quiet (TCG wall clock)")
    p()
    note = ("Single-threaded victim process, FUTEX_WAKE of private futexes nobody waits on (64 addresses in turn), "
            "while an unrelated process keeps N waiters queued in futex_waitv (128 private futexes a thread, "
            "all N verified queued before and after the measurement).")
    for metric, label in (("p50_ns", "p50"), ("p99_ns", "p99"), ("p99.9_ns", "p99.9"), ("max_ns", "max")):
        ratio_table("Victim FUTEX_WAKE, %s (TCG wall clock)" % label, "victim-wake", metric, note if metric == "p50_ns" else "")
    for metric, label in (("p50_ns", "p50"), ("p99_ns", "p99"), ("p99.9_ns", "p99.9")):
        ratio_table("Victim wait/wake round trip between two threads, %s (TCG wall clock)" % label, "victim-rtt", metric)

    p("## 2. The neighbour's own FUTEX_WAKE (unqueued futexes) relative to quiet (TCG wall clock)")
    p()
    for metric, label in (("p50_ns", "p50"), ("p99_ns", "p99")):
        ratio_table("Neighbour FUTEX_WAKE, %s (TCG wall clock)" % label, "neigh-wake", metric)
    p("Private table slots of the neighbour after queueing (0 = global table):")
    p()
    p("| kernel / policy | " + " | ".join("%d" % n for n in levels) + " |")
    p("|---|" + "---:|" * len(levels))
    for km, name in kms:
        p("| %s | %s |" % (name, " | ".join(fmt(get("neigh-hash", km, n, "slots"), "n") for n in levels)))
    p()

    if any(k[0] == "ahash" for k in data):
        p("## 2b. Attached futexes: perf bench futex hash's load (TCG wall clock)")
        p()
        p("ff-bench ahash: each thread calls FUTEX_WAKE on 64 futexes of its own that nobody waits on, as "
          "perf bench futex hash does, for 2 s; ops/s of all threads, median of the repeats; on the global table "
          "(policy 1, no conflict), a preallocated private table, and attached (every thread attached its futexes, "
          "FUTEX_WAKE | FUTEX_ATTACHED). ratio = ops/s / the patched kernel's global table (higher is better).")
        p()
        ths = sorted({int(k[2]) for k in data if k[0] == "ahash"})
        p("| kernel / mode | " + " | ".join("%d thread%s (ops/s, ratio)" % (t, "s" if t > 1 else "") for t in ths) + " |")
        p("|---|" + "---:|" * len(ths))
        for km, name in (("vanilla/global", "vanilla"), ("patched/m1", "patched, global table (policy 1)"),
                         ("patched/prealloc", "patched, private table"), ("patched/attached", "patched, attached")):
            cells = []
            for t in ths:
                v, g = get("ahash", km, t, "ops_per_s"), get("ahash", "patched/m1", t, "ops_per_s")
                cells.append("n/a" if v is None else "%.0f (%s)" % (v, fmt(v / g if g else None)))
            p("| %s | %s |" % (name, " | ".join(cells)))
        p()

    p("## 3. perf bench futex (Debian perf 6.1): patched / vanilla (TCG wall clock)")
    p()
    p("Debian 12's perf 6.1 (`/usr/bin/perf`) on both kernels, driven by ff-bench perf. Median of the repeats; spread = (max - min) / median over the repeats. ops/s: higher is better; ms: lower is better. "
      "Patched kernel with the policy off (m0: the lookup code only) and with policy 1 (m1; the default is 2). speed = patched speed / vanilla speed (ops/s ratio, or the inverse ratio of "
      "ms): >= 1.00 means the patched kernel is not slower; compare the distance from 1.00 with the spreads.")
    p()
    p("| benchmark | metric | vanilla | spread | patched m0 | spread | speed m0/vanilla | patched m1 | spread | speed m1/vanilla |")
    p("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    keys = sorted({(k[0], k[2], k[3]) for k in data if k[0].startswith("perf-") and not k[1].startswith(("vanilla-8cpu", "patched-8cpu"))})
    if not keys:
        keys = [("perf-hash", "t1", "ops_per_s")]
    for wl, param, metric in keys:
        def stats(km):
            v = data.get((wl, km, param, metric))
            if not v:
                return None, None
            med = statistics.median(v)
            return med, ((max(v) - min(v)) / med * 100 if med else 0)
        vm, vs = stats("vanilla/global")
        pm, ps = stats("patched/m1")
        if pm is None:
            pm, ps = stats("patched/global")
        zm, zs = stats("patched/m0")
        def speed(x):
            if x is None or not vm or not x:
                return None
            return vm / x if metric == "ms" else x / vm
        r = speed(pm)
        if r is not None:
            perf_ratios.append(("%s %s" % (wl[5:], param), r))
        def val(x):
            if metric != "ms":
                return fmt(x, "n")
            return "%.4f" % x if x else "n/a"
        def spr(x):
            return "%.0f%%" % x if x is not None else "n/a"
        p("| %s %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (wl[5:], param, metric, val(vm), spr(vs), val(zm), spr(zs), fmt(speed(zm)),
          val(pm), spr(ps), fmt(r)))
    p()

if not quick and "2014" in parts:
    p("## 4. The 2014 table: perf bench futex hash (Debian perf 6.1), 8 vCPUs, global table (policy 0) (TCG wall clock)")
    p()
    hs = {b: get("hashsize", b, "-", "entries") for b in ("vanilla-8cpu", "patched-8cpu", "patched-8cpu-hs256")}
    p("Global table entries printed at boot: " + ", ".join("%s %s" % (b, fmt(v, "n")) for b, v in hs.items()) + ".")
    p()
    p("| threads | vanilla ops/s | patched default ops/s | patched futex_hashsize=256 ops/s | default / 256 | patched / vanilla |")
    p("|---:|---:|---:|---:|---:|---:|")
    for t in (1, 2, 4, 8):
        def m(boot):
            for km in (boot + "/m0", boot + "/global"):
                v = get("perf-hash", km, "t%d" % t, "ops_per_s")
                if v is not None:
                    return v
            return None
        a, b, c = m("vanilla-8cpu"), m("patched-8cpu"), m("patched-8cpu-hs256")
        p("| %d | %s | %s | %s | %s | %s |" % (t, fmt(a, "n"), fmt(b, "n"), fmt(c, "n"),
          fmt(b / c if b and c else None), fmt(b / a if a and b else None)))
    p()

if not quick and "wall" in parts:
    p("## 5. Switch cost: first private ops after a conflict with N waiters of the process queued (TCG wall clock)")
    p()
    p("extra = time of the first 32 private FUTEX_WAKEs minus the next 32 (conflict detection + table switch), "
      "in microseconds of TCG time; call = one FUTEX_PREALLOC_HASH moving the N waiters; prealloc-first = "
      "table preallocated before queueing (no switch expected).")
    p()
    sl = sorted({int(k[2]) for k in data if k[0] == "switch"}) or [0, 2048, 8192, 32768, 65536]
    p("| measurement | " + " | ".join("%d" % n for n in sl) + " |")
    p("|---|" + "---:|" * len(sl))
    def us(x):
        return "n/a" if x is None else "%.0f" % (x / 1000.0)
    for label, km, wl, metric, conv in (
            ("conflict: extra (us)", "patched/conflict", "switch", "extra_ns", us),
            ("conflict: slowest first op (us)", "patched/conflict", "switch", "first_max_ns", us),
            ("conflict: waiters migrated", "patched/conflict", "switch-hash", "migrated", lambda x: fmt(x, "n")),
            ("FUTEX_PREALLOC_HASH call (us)", "patched/prealloc-call", "switch", "call_ns", us),
            ("prealloc-call: waiters migrated", "patched/prealloc-call", "switch-hash", "migrated", lambda x: fmt(x, "n")),
            ("prealloc-first: extra (us)", "patched/prealloc-first", "switch", "extra_ns", us)):
        p("| %s | %s |" % (label, " | ".join(conv(get(wl, km, n, metric)) for n in sl)))
    p()

    p("## 6. Memory: private table per process (slots x 64-byte buckets)")
    p()
    scen = ["1thread", "2threads", "16threads", "8192waiters"]
    p("| policy | " + " | ".join(scen) + " |")
    p("|---|" + "---:|" * len(scen))
    for km, name in kms[1:]:
        cells = []
        for s in scen:
            sl_ = get("mem", km, s, "slots")
            cells.append("n/a" if sl_ is None else "%d slots, %d B" % (sl_, sl_ * 64))
        p("| %s | %s |" % (name, " | ".join(cells)))
    p()
    p("The vanilla kernel has no private tables (0 bytes per process); its global table is shared.")
    p()

# ---- NUMA noisy neighbour: shared futexes, per-node parts (ff-bench numa) ----
numa_lv = sorted({int(k[2]) for k in data if k[0] == "numa-wake"})
if "wall" in parts and (numa_lv or any(k[0] == "numa-mem" for k in data)):
    p("## 6b. NUMA noisy neighbour: shared futexes, per-node parts of the global table (TCG wall clock)")
    p()
    p("ff-bench numa: a neighbour process pinned to node 1's CPUs keeps N waiters queued on shared futexes "
      "(a MAP_SHARED mapping, futex_waitv, 128 futexes a thread), with FUTEX2_NUMA and node 1 in their node "
      "words where the kernel takes the flag (vanilla refuses it with EINVAL: there the same waiters without "
      "it); a fresh victim process pinned to node 0 times futex_wake(2) of 64 shared futexes nobody waits on, "
      "without flags and with FUTEX2_NUMA and node 0 in their node words, the two in turns. Shared futexes "
      "always use the global table, which the patched kernel splits in one part per node: without a node, a "
      "futex's hash picks the part. Ratios: to the same victim's figure at 0 neighbour waiters, and to "
      "vanilla's at the same N.")
    p()
    fl = {k: get("numa-info", k, "-", "futex2_numa") for k in ("vanilla", "patched")}
    p("Neighbour's waiters with FUTEX2_NUMA (node 1): " + ", ".join(
        "%s %s" % (k, "n/a" if v is None else "yes" if v else "no (EINVAL)") for k, v in fl.items()) + ".")
    p()
    numa_rows = [("vanilla/noflag", "vanilla, no flag"), ("patched/noflag", "patched, no flag"),
                 ("patched/numa", "patched, FUTEX2_NUMA, node 0")]
    p("| victim futex_wake | neighbour waiters | p50 (ns) | p50 / 0 waiters | p50 / vanilla | p99 (ns) "
      "| p99 / 0 waiters | p99 / vanilla | mean / 0 waiters |")
    p("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for km, name in numa_rows:
        for n in numa_lv:
            cells = []
            for metric in ("p50_ns", "p99_ns"):
                v, q = get("numa-wake", km, n, metric), get("numa-wake", km, 0, metric)
                vv = get("numa-wake", "vanilla/noflag", n, metric)
                cells += [fmt(v, "n"), fmt(v / q if v is not None and q else None),
                          "-" if km == "vanilla/noflag" else fmt(v / vv if v is not None and vv else None)]
            m, mq = get("numa-wake", km, n, "mean_ns"), get("numa-wake", km, 0, "mean_ns")
            cells.append(fmt(m / mq if m is not None and mq else None))
            p("| %s | %d | %s |" % (name, n, " | ".join(cells)))
    p()
    p("Without a flag, the victim's futexes fall into either part by their hash: its p50 sits between two "
      "populations (futexes in node 0's part and in node 1's), the mean shows their average.")
    p()
    a0, b0 = get("numa-wake", "patched/noflag", 0, "p50_ns"), get("numa-wake", "patched/numa", 0, "p50_ns")
    p("The flag itself at 0 waiters (the node word read), patched FUTEX2_NUMA / no flag, p50: %s." % fmt(
      b0 / a0 if a0 and b0 is not None else None))
    p()
    p("The global table at boot, as the kernel logged it (`futex: node N: buckets A-B, K KiB on node M`; "
      "vanilla: its single table):")
    p()
    p("| kernel | part | buckets | KiB | memory on node |")
    p("|---|---|---:|---:|---:|")
    for kern in ("vanilla", "patched"):
        for mode in ("pernode", "global"):
            km = kern + "/" + mode
            ps = sorted({k[2] for k in data if k[0] == "numa-mem" and k[1] == km},
                        key=lambda s_: (s_ == "all", int(s_[4:]) if s_.startswith("node") and s_[4:].isdigit() else 0))
            for prm in ps:
                on = get("numa-mem", km, prm, "on_node")
                p("| %s | %s | %s | %s | %s |" % (kern, ("node %s" % prm[4:]) if prm != "all" else
                  ("total" if mode == "pernode" else "one table"), fmt(get("numa-mem", km, prm, "buckets"), "n"),
                  fmt(get("numa-mem", km, prm, "kib"), "n"), "-" if on is None else "%d" % on))
    p()
    top, q0 = (numa_lv[-1] if numa_lv else None), get("numa-wake", "patched/numa", 0, "p50_ns")
    vt = get("numa-wake", "patched/numa", top, "p50_ns") if top else None
    if not top or vt is None or not q0:
        res_ = "**n/a** (not measured)"
    else:
        res_ = "**%s** (%.2fx at %d waiters)" % ("PASS" if vt / q0 <= 1.2 else "FAIL", vt / q0, top)
    p("- Goal (reported, not enforced): victim with FUTEX2_NUMA on its own node: p50 at the largest level "
      "<= 1.2x its level-0 p50: %s, TCG wall clock" % res_)
    p()

# ---- TCG icount: instructions per call ----
ic_modes = [("vanilla/global", "vanilla")] + [("patched/" + m, "patched " + n) for m, n in (
    ("m0", "m0 (off)"), ("m1", "m1 (global path)"), ("m1on", "m1 (global path, tables in use)"),
    ("m2", "m2 (first op: private table)"),
    ("m3", "m3 (second thread)"), ("prealloc", "prealloc 16"), ("prctl", "prctl SET_SLOTS 16"),
    ("attached", "attached (m1, 2 futexes attached)"),
    ("m1key", "m1, another process attached"), ("m2key", "m2, another process attached"))]
ic_ops = ["getpid"] + ["%s_%s" % (o, k) for o in ("wake", "wait", "trylock_pi", "cmp_requeue", "wake_op",
                                                  "waitv", "futex2_wake", "futex2_wait") for k in ("private", "shared")]
ic_have = [o for o in ic_ops if any(get("icount", km, o, "insn_per_call") is not None for km, _ in ic_modes)]
if "icount" in parts and ic_have:
    cols = [(km, name) for km, name in ic_modes
            if km == "vanilla/global" or any(get("icount", km, o, "insn_per_call") is not None for o in ic_have)]
    p("## 7. Instructions per call (TCG icount)")
    p()
    p("Guests booted with QEMU `-icount shift=0` (4 vCPUs, the others idle): a single-threaded loop timed with "
      "clock_gettime reads instructions. Fastest of 40 loops of 1,000 calls (QUICK: 20 loops; a loop is shorter than a timer tick, so the fastest runs without one), including the "
      "system call entry/exit (`getpid`) and a few instructions of loop and libc `syscall()`. No call sleeps "
      "or wakes anybody (guest/ff-icount.c). Cells: instructions per call (patched / vanilla).")
    p()
    p("| operation | " + " | ".join(name for _, name in cols) + " |")
    p("|---|" + "---:|" * len(cols))
    vv = {o: get("icount", "vanilla/global", o, "insn_per_call") for o in ic_have}
    ratios = {}
    for o in ic_have:
        cells = []
        for km, _ in cols:
            x = get("icount", km, o, "insn_per_call")
            if x is None:
                cells.append("n/a")
            elif km == "vanilla/global" or not vv[o]:
                cells.append("%.0f" % x)
            else:
                ratios[(km, o)] = x / vv[o]
                cells.append("%.0f (%.3fx)" % (x, x / vv[o]))
        p("| %s | %s |" % (o, " | ".join(cells)))
    p("| private table slots | " + " | ".join(fmt(get("icount-slots", km, "-", "slots"), "n") for km, _ in cols) + " |")
    p()

    def verdict(label, kms_, ops_, ok, bound):
        got = [(ratios[(k, o)], k, o) for k in kms_ for o in ops_ if (k, o) in ratios]
        if not got:
            p("- %s: n/a (not measured)" % label)
            return
        bad = [g for g in got if not ok(g[0])]
        worst = max(got, key=lambda g: abs(g[0] - bound)) if not bad else max(bad, key=lambda g: abs(g[0] - bound))
        p("- %s: **%s** (%d of %d cells pass; %s %s %.3fx%s)" % (
            label, "PASS" if not bad else "FAIL", len(got) - len(bad), len(got),
            "worst" if not bad else "e.g.", "%s %s" % (worst[1].split("/")[1], worst[2]), worst[0],
            "" if not bad else "; failing: " + ", ".join("%s %s %.3fx" % (g[1].split("/")[1], g[2], g[0]) for g in sorted(bad)[-6:])))
    priv = [o for o in ic_have if o.endswith("_private")]
    p("Goals (issue 11), each verdict from this run (reported, not enforced):")
    p()
    verdict("policy 0 (off) == vanilla, every operation (at most 0.5% above)", ["patched/m0"], ic_have,
            lambda r: r <= 1.005, 1.005)
    verdict("policy 1 global path <= 1.02x vanilla, every operation (m1: no private table in the system)",
            ["patched/m1"], ic_have, lambda r: r <= 1.02, 1.02)
    verdict("policy 1 global path <= 1.02x vanilla, every operation (m1on: private tables in use elsewhere)",
            ["patched/m1on"], ic_have, lambda r: r <= 1.02, 1.02)
    verdict("private table (m2, prealloc, prctl) < 1.00x vanilla, every private operation",
            ["patched/m2", "patched/prealloc", "patched/prctl"], priv, lambda r: r < 1.0, 1.0)
    verdict("private table (m2, prealloc, prctl) <= 0.97x for wake_private and cmp_requeue_private",
            ["patched/m2", "patched/prealloc", "patched/prctl"], ["wake_private", "cmp_requeue_private"],
            lambda r: r <= 0.97, 0.97)
    # A process which never attached, once another one did: against the same mode before
    # m1key's process is on the global table with private tables in use elsewhere: as m1on
    for key, base in (("patched/m1key", "patched/m1on"), ("patched/m2key", "patched/m2")):
        got = [(get("icount", key, o, "insn_per_call") / get("icount", base, o, "insn_per_call"), o)
               for o in ic_have if get("icount", key, o, "insn_per_call") and get("icount", base, o, "insn_per_call")]
        if not got:
            p("- %s vs %s (attachments elsewhere) <= 1.005x: n/a (not measured)" % (key[8:], base[8:]))
            continue
        worst = max(got)
        p("- a process which never attached, once another one did (%s vs %s) <= 1.005x, every operation: "
          "**%s** (worst %s %.3fx)" % (key[8:], base[8:], "PASS" if worst[0] <= 1.005 else "FAIL", worst[1], worst[0]))
    p()

    at = "patched/attached"
    if get("icount", at, "attached_wake", "insn_per_call") is not None:
        p("### Attached futexes (TCG icount)")
        p()
        p("The same boots: the patched kernel's mode `attached` (policy 1, the measuring thread attached the "
          "words of the attached operations with FUTEX_ATTACH first; guest/ff-icount.c). Each attached "
          "operation against the same operation unattached on the global table (policy 1, mode m1) and on a "
          "private table (prealloc 16). Goal (issue 12): attached <= 0.95x of unattached.")
        p()
        p("| operation | attached (insn) | unattached, global table (m1) | ratio | unattached, private table "
          "(prealloc) | ratio |")
        p("|---|---:|---:|---:|---:|---:|")
        bad, judged = [], 0
        rows = [(o + " vs " + u, get("icount", at, o, "insn_per_call"),
                 get("icount", "patched/m1", u, "insn_per_call"),
                 get("icount", "patched/prealloc", u, "insn_per_call"), goal)
                for o, u, goal in (("attached_wake", "wake_private", True),
                                   ("attached_wait", "wait_private", False),
                                   ("attached_trylock_pi", "trylock_pi_private", False))]
        # The wait/wake round trip of ff-bench noisy's victim (quiet, p50)
        rows.append(("wait/wake round trip, 2 threads (noisy victim p50)",
                     get("ic:victim-rtt", at, 0, "p50_ns"), get("ic:victim-rtt", "patched/m1", 0, "p50_ns"),
                     get("ic:victim-rtt", "patched/prealloc", 0, "p50_ns"), True))
        for name, a, g, q, goal in rows:
            for ref in (g, q):
                if goal and a and ref:
                    judged += 1
                    if a / ref > 0.95:
                        bad.append("%s %.3fx" % (name, a / ref))
            p("| %s | %s | %s | %s | %s | %s |" % (name, fmt(a, "n"), fmt(g, "n"),
              "%.3fx" % (a / g) if a and g else "n/a", fmt(q, "n"), "%.3fx" % (a / q) if a and q else "n/a"))
        p()
        p("- attached <= 0.95x of unattached (global and private table) for the wake and the round trip "
          "(the goal's operations; wait and trylock-PI reported only): %s, %d of 4 comparisons "
          "measured in this run" % (outcome(judged, bad), judged))
        ad = get("icount", at, "attach_detach", "insn_per_call")
        ag = get("icount", at, "attach_grow", "insn_per_call")
        gr = get("icount-attach", at, "-", "growths")
        p("- FUTEX_ATTACH + FUTEX_DETACH of one futex, cache already sized: %s instructions per pair" % fmt(ad, "n"))
        p("- FUTEX_ATTACH of 64 futexes by a new thread, cache growths included: %s instructions per attach "
          "(%s growths)" % (fmt(ag, "n"), fmt(gr, "n")))
        ar = get("icount", at, "attach_random", "insn_per_call")
        rr = get("icount-attach", at, "-", "random_refused")
        if ar is not None or rr is not None:
            rb = get("icount-attach", at, "-", "random_bytes_per_attach")
            rs = get("icount-attach", at, "-", "random_slots")
            rg = get("icount-attach", at, "-", "random_growths")
            rh = get("icount-attach", at, "-", "random_rehashes")
            p("- FUTEX_ATTACH of 4,096 random addresses by a new thread (kernel.futex_attached_max 4,096): "
              "%s instructions per attach; cache %s bytes per attachment (%s slots, %s growths, %s rebuilds)"
              % (fmt(ar, "n"), fmt(rb, "n"), fmt(rs, "n"), fmt(rg, "n"), fmt(rh, "n")))
            p("- Goal (issue 24): 4,096 random addresses attached without a refusal: %s (%s refused)"
              % ("PASS" if rr == 0 else "FAIL" if rr else "n/a", fmt(rr, "n")))
        p()

    nk = [("vanilla/global", "vanilla"), ("patched/m0", "patched m0 (off)"),
          ("patched/m1", "patched m1 (first conflict)"), ("patched/m2", "patched m2 (first private op, default)"),
          ("patched/prealloc", "patched prealloc"),
          ("patched/attached", "patched attached (FUTEX_WAKE with FUTEX_ATTACHED)")]
    if any(get("ic:victim-wake", km, 0, "p50_ns") is not None for km, _ in nk):
        p("### Noisy neighbour under TCG icount: victim FUTEX_WAKE (instructions)")
        p()
        p("ff-bench noisy's single-threaded victim (FUTEX_WAKE of private futexes nobody waits on, each call "
          "timed with two clock_gettime calls, which are counted too) while an unrelated process keeps 65,536 "
          "waiters queued, against 0 waiters; same boots as the table above (TCG icount).")
        p()
        p("| kernel / policy | quiet p50 (insn) | 65536 waiters p50 (insn) | ratio p50 | quiet p99 | 65536 p99 | ratio p99 |")
        p("|---|---:|---:|---:|---:|---:|---:|")
        for km, name in nk:
            q, v = get("ic:victim-wake", km, 0, "p50_ns"), get("ic:victim-wake", km, 65536, "p50_ns")
            q9, v9 = get("ic:victim-wake", km, 0, "p99_ns"), get("ic:victim-wake", km, 65536, "p99_ns")
            p("| %s | %s | %s | %s | %s | %s | %s |" % (name, fmt(q, "n"), fmt(v, "n"), fmt(v / q if q and v else None),
              fmt(q9, "n"), fmt(v9, "n"), fmt(v9 / q9 if q9 and v9 else None)))
        p()
        q, v = get("ic:victim-wake", "patched/attached", 0, "p50_ns"), get("ic:victim-wake", "patched/attached", 65536, "p50_ns")
        if q and v:
            p("- Goal (issue 12): attached victim FUTEX_WAKE at 65,536 neighbour waiters <= 1.05x of quiet: "
              "**%s** (%.3fx, TCG icount)" % ("PASS" if v / q <= 1.05 else "FAIL", v / q))
            p()

    # The attached neighbour: markers of another process (ff-bench markers)
    mk_levels = sorted({k[2] for k in data if k[0] == "ic:markers" and k[2] != "0x0"})
    if mk_levels:
        mk_ops = ("wake_private", "wake_shared", "wait_private", "wait_shared")
        mk_kms = [("vanilla/global", "vanilla"), ("patched/m0", "patched m0 (off)"),
                  ("patched/m1", "patched m1"),
                  ("patched/m1global", "patched m1, neighbour on the global table (SET_SLOTS 0)")]
        p("### Attached neighbour under TCG icount: a process which never attached")
        p()
        p("ff-bench markers: a neighbour process whose threads attach futexes (THREADSxATTACHMENTS; under "
          "policy 0 and on the global table FUTEX_ATTACH fails with EPERM, so it holds none), and a fresh "
          "victim process which never attached: FUTEX_WAKE of nobody and FUTEX_WAIT with a value mismatch, "
          "private and shared, fastest of 20 loops of 1,000 calls, instructions per call with the clock "
          "reads (TCG icount), against a neighbour which attaches nothing (0x0); same boots as the tables "
          "above.")
        p()
        bad, judged = [], 0
        for lv in mk_levels:
            p("| kernel / policy (%s) | neighbour attachments | %s |" % (lv, " | ".join(
                "%s quiet | %s | ratio" % (o, lv) for o in mk_ops)))
            p("|---|---:|%s" % ("---:|---:|---:|" * len(mk_ops)))
            for km, name in mk_kms:
                cells = []
                for o in mk_ops:
                    q, v = get("ic:markers", km, "0x0", o), get("ic:markers", km, lv, o)
                    r = v / q if q and v else None
                    if r is not None and km.startswith("patched/"):
                        judged += 1
                        if r > 1.01:
                            bad.append("%s %s %.3fx" % (km, o, r))
                    cells += [fmt(q, "n"), fmt(v, "n"), "%.3fx" % r if r is not None else "n/a"]
                if all(c in ("n/a", "-") for c in cells):
                    continue
                p("| %s | %s | %s |" % (name, fmt(get("ic:markers-neigh", km, lv, "attached"), "n"),
                                        " | ".join(cells)))
            p()
        p("- Goal (issue 24): a neighbour's attachments leave another process's private and shared "
          "FUTEX_WAKE/FUTEX_WAIT <= 1.01x of quiet, under policy 0, policy 1 and with the "
          "neighbour on the global table: %s (%d cells, TCG icount)" % (outcome(judged, bad), judged))
        p()

# ---- rtlat: SCHED_FIFO lateness during table switches ----
rt_cases = [("quiet", "quiet (trigger loops on getppid())"),
            ("mm-churn", "mm churn: map, populate, unmap 4 MiB (no futex)"),
            ("prctl", "prctl SET_SLOTS 65536 <-> 2"),
            ("prctl-waiters", "prctl SET_SLOTS 65536 <-> 2, 1000 waiters"),
            ("fork-prealloc", "fork + FUTEX_PREALLOC_HASH(16)"), ("fork-firstop", "fork + first private op (policy 2)"),
            ("fork-conflict", "fork + conflict in the global table (policy 1)"),
            ("fork-thread", "fork + second thread (policy 3)"), ("growth", "growth, 128 colliding waiters x4 (policy 2)")]
rt_sizes = sorted({int(k[2]) for k in data if k[0] == "rtlat" and k[1].startswith("patched/")})
rt_vsize = sorted({int(k[2]) for k in data if k[0] == "rtlat" and k[1].startswith("vanilla/")})
if "rtlat" in parts and (rt_sizes or rt_vsize):
    p("## 8. Worst SCHED_FIFO lateness during table switches (us of TCG icount time)")
    p()
    p("One vCPU, QEMU `-icount shift=0` (1 us = 1,000 instructions): a SCHED_FIFO (80) thread sleeps 2,000 "
      "periods of 1 ms (clock_nanosleep TIMER_ABSTIME) while an ordinary process on the same CPU triggers table "
      "switches by each path as fast as it can (guest/ff-rtlat.c). One boot per global table size "
      "(`futex_hashsize=`); vanilla has no `futex_hashsize=`, so it runs once at its own size and its cases "
      "run the same system calls as a baseline (FUTEX_PREALLOC_HASH fails with ENOSYS there; the prctl cases are n/a). "
      "Goal (issue 10): worst lateness <= 250 us, flat across sizes.")
    p()
    hdr = ["vanilla (%d)" % s_ for s_ in rt_vsize] + ["patched %d" % s_ for s_ in rt_sizes]
    p("| case | " + " | ".join(hdr) + " | goal <= 250 us |")
    p("|---|" + "---:|" * len(hdr) + "---|")
    def rcell(km, sz, metric):
        return get("rtlat", km, sz, metric)
    for c, name in rt_cases:
        cells = [fmt(rcell("vanilla/" + c, s_, "max_late_us"), "n") for s_ in rt_vsize]
        pv = [rcell("patched/" + c, s_, "max_late_us") for s_ in rt_sizes]
        cells += [fmt(x, "n") for x in pv]
        have = [x for x in pv if x is not None]
        if c == "mm-churn":
            v_ = "baseline, no switch" if have else "n/a"
        elif not have:
            v_ = "n/a"
        elif len(have) < len(pv):
            v_ = ("FAIL" if max(have) > 250 else "PASS") + " (incomplete)"
        else:
            v_ = "**FAIL** (max %.0f us)" % max(have) if max(have) > 250 else "PASS"
        p("| %s | %s | %s |" % (name, " | ".join(cells), v_))
    p()
    p("Periods more than 100 us late (of 2,000), p99 lateness (us), and triggers (calls or children; in brackets "
      "those that made the kernel switch: call succeeded / child ended with a private table):")
    p()
    p("| case | " + " | ".join(hdr) + " |")
    p("|---|" + "---:|" * len(hdr))
    for c, name in rt_cases:
        cells = []
        for k, szs in (("vanilla/", rt_vsize), ("patched/", rt_sizes)):
            for s_ in szs:
                n1 = rcell(k + c, s_, "late_gt100us")
                if n1 is None:
                    cells.append("n/a")
                    continue
                cells.append("%d late, p99 %s, %s (%s)" % (n1, fmt(rcell(k + c, s_, "p99_late_us"), "n"),
                             fmt(rcell(k + c, s_, "triggers"), "n"), fmt(rcell(k + c, s_, "switched"), "n")))
        p("| %s | %s |" % (name, " | ".join(cells)))
    p()

# ---- piinv: priority inversion through the table machinery ----
pi_cases = [("policy0", "no table (policy 0)"),
            ("first-op", "the owner's FUTEX_LOCK_PI is the first private op (policy 2)"),
            ("conflict", "the owner's FUTEX_LOCK_PI conflicts in the global table (policy 1)"),
            ("growth", "the owner's FUTEX_LOCK_PI with a growth pending (policy 2)"),
            ("thread", "the owner thread's creation asks for the table (policy 3)"),
            ("uncontended", "owner takes it in user space, then a first private FUTEX_WAKE (policy 2)")]
if "piinv" in parts and any(k[0] == "piinv" for k in data):
    p("## 10. Priority inversion through the table machinery (us of TCG icount time)")
    p()
    p("Two vCPUs, QEMU `-icount shift=0` (1 us = 1,000 instructions). Each trial forks a fresh process: its "
      "SCHED_OTHER owner thread (CPU 0) takes a PI futex and releases it as soon as the FIFO thread waits for it, "
      "its SCHED_FIFO thread (CPU 1) calls FUTEX_LOCK_PI as soon as the futex is owned (guest/ff-piinv.c). "
      "**acquired**: from the FIFO thread's call until the futex is its own (the owner's FUTEX_UNLOCK_PI, which "
      "hands it over, has returned, or the FIFO thread's call has, whichever is first): the inversion. "
      "**returned**: until the FIFO thread's call returned. Under `-icount` QEMU runs the vCPUs in turns and "
      "does not leave CPU 0 for CPU 1 while the FIFO thread spins in the rt_mutex, so *returned* also counts "
      "everything CPU 0 runs after the handover until it idles (the process' kernel worker, RCU, other "
      "kworkers), which a machine runs in parallel; `ff-piinv -t` (suite bench-piinv-trace) prints the worst "
      "trial's events. Median, 90th percentile and worst of the trials; on vanilla the same system calls run "
      "as a baseline. Goal (issue 26): patched worst acquisition <= vanilla's worst of the same case + 50 us. "
      "tables = trials whose process ended with a private table.")
    p()
    p("| case | vanilla acquired p50 / p90 / worst | patched acquired p50 / p90 / worst | goal: worst <= vanilla + 50 us "
      "| returned worst, vanilla / patched | tables |")
    p("|---|---:|---:|---|---:|---:|")
    def pi_acq(km):  # acquisition p50, p90, worst of one kernel/case, and as a cell
        v = [get("piinv", km, "-", "acq_" + q + "_us") for q in ("p50", "p90", "max")]
        return v[2], " / ".join(fmt(x, "n") for x in v)
    for c, name in pi_cases:
        (vm, vs), (pm, ps) = pi_acq("vanilla/" + c), pi_acq("patched/" + c)
        vr, pr = get("piinv", "vanilla/" + c, "-", "max_us"), get("piinv", "patched/" + c, "-", "max_us")
        t = get("piinv", "patched/" + c, "-", "tables")
        n = get("piinv", "patched/" + c, "-", "trials")
        if pm is None or vm is None:
            v_ = "n/a"
        else:
            v_ = "PASS" if pm <= vm + 50 else "**FAIL** (+%.0f us)" % (pm - vm)
        p("| %s | %s | %s | %s | %s / %s | %s |" % (
            name, vs, ps, v_, fmt(vr, "n"), fmt(pr, "n"),
            "n/a" if t is None else "%d of %d" % (t, n or 0)))
    p()

# ---- cyclic: cyclictest on PREEMPT_RT ----
if "cyclic" in parts and any(k[0] == "cyclic" for k in data):
    p("## 11. cyclictest on PREEMPT_RT (us of TCG icount time)")
    p()
    rounds = sorted({k[2] for k in data if k[0] == "cyclic" and k[2].startswith("r")},
                    key=lambda r: int(r[1:]) if r[1:].isdigit() else 0)
    p("PREEMPT_RT builds of both trees (the bench config plus configs/rt.config), one vCPU, QEMU `-icount "
      "shift=0` (1 us = 1,000 instructions): `cyclictest -q -m -S -N -p 90 -i 1000` (ns resolution, one "
      "SCHED_FIFO 90 thread), %d round(s), each a quiet run and then a run while `ff-rtlat -L` runs each "
      "table-switch trigger in turn (prctl toggles with and without waiters, fork + prealloc, fork + first "
      "op, fork + conflict, fork + thread, growth; guest/ff-cyclic, suite bench-cyclic). Maximum of each "
      "round, worst of all rounds, highest thread average. Goals (issue 26): patched worst under load <= "
      "1.1x patched quiet worst, and <= vanilla-RT's under the same load. A worst case is one sample: the "
      "rounds show how far it moves between runs of the same kernel." % max(len(rounds), 1))
    p()
    p("| kernel | quiet max by round | quiet worst | quiet avg | load max by round | load worst | load avg "
      "| load / quiet |")
    p("|---|---:|---:|---:|---:|---:|---:|---:|")
    f1 = lambda x: "n/a" if x is None else "%.1f" % x
    for k in ("vanilla", "patched"):
        qm, qa = get("cyclic", k + "/quiet", "-", "max_us"), get("cyclic", k + "/quiet", "-", "avg_us")
        lm, la = get("cyclic", k + "/load", "-", "max_us"), get("cyclic", k + "/load", "-", "avg_us")
        qr = " / ".join(f1(get("cyclic", k + "/quiet", r, "max_us")) for r in rounds) or "n/a"
        lr = " / ".join(f1(get("cyclic", k + "/load", r, "max_us")) for r in rounds) or "n/a"
        r_ = "%.2fx" % (lm / qm) if lm is not None and qm else "n/a"
        p("| %s-RT | %s | %s | %s | %s | %s | %s | %s |" % (k, qr, f1(qm), f1(qa), lr, f1(lm), f1(la), r_))
    qm, lm = get("cyclic", "patched/quiet", "-", "max_us"), get("cyclic", "patched/load", "-", "max_us")
    vq, vl = get("cyclic", "vanilla/quiet", "-", "max_us"), get("cyclic", "vanilla/load", "-", "max_us")
    if qm is not None and lm is not None:
        p()
        p("Goals: load <= 1.1x quiet: %s%s; load <= vanilla-RT load: %s." % (
            "PASS" if lm <= 1.1 * qm else "**FAIL**",
            "" if vq is None or vl is None else " (vanilla-RT: %.2fx)" % (vl / vq),
            "n/a" if vl is None else ("PASS" if lm <= vl else "**FAIL** (+%.1f us)" % (lm - vl))))
    p()

# ---- the tree's perf bench futex ----
def tp_stats(wl, km, param, metric):
    v = data.get((wl, km, param, metric))
    if not v:
        return None, None
    med = statistics.median(v)
    return med, ((max(v) - min(v)) / med * 100 if med else 0)

tp_have = any(k[0].startswith("tperf-") for k in data)
if "perf" in parts and tp_have:
    p("## 9. perf bench futex, the tree's perf: -b, --prealloc, policies, --node (TCG wall clock)")
    p()
    p("**tree perf** = `perf` built from the patched tree's tools/perf with the series' perf patches "
      "(scripts/build-perf.sh, static, `/usr/bin/perf-tree` in the guest), on both kernels; vanilla 6.12 "
      "has no PR_FUTEX_HASH and no FUTEX_PREALLOC_HASH, so it runs without -b and --prealloc (which fail "
      "there, see the last table). 4 vCPUs, 2 NUMA nodes. Median of the repeats (guest/ff-perf, "
      "guest/suites/bench-perf*.txt), spread = (max - min) / median. slots = the hash in effect as perf "
      "printed it after the run (PR_FUTEX_HASH_GET_SLOTS; 0 = global hash). Policy 1 unless "
      "the row says otherwise (the default is 2 since patch 43).")
    p()
    p("### perf bench futex hash (tree perf): ops/s, in brackets relative to vanilla at the same thread count")
    p()
    rows = [("vanilla/global", "vanilla, no option")]
    rows += [("patched/auto-m%d" % m, "patched, no option, policy %s" % n) for m, n in
             ((0, "0 (off)"), (1, "1 (first conflict)"), (2, "2 (first private op, default)"), (3, "3 (second thread)"))]
    rows += [("patched/b0", "patched -b 0 (global hash)")]
    rows += [("patched/b%d" % b, "patched -b %d" % b) for b in (16, 64, 256, 1024, 4096, 16384, 65536)]
    rows += [("patched/prealloc%d" % b, "patched --prealloc %d" % b) for b in (0, 16, 1024, 65536)]
    p("| hash (tree perf) | t1 ops/s | t2 ops/s | t4 ops/s | slots t1/t2/t4 | largest spread |")
    p("|---|---:|---:|---:|---|---:|")
    for km, name in rows:
        if not any(k[0] == "tperf-hash" and k[1] == km for k in data):
            continue
        cells, spreads, slots = [], [], []
        for t in ("t1", "t2", "t4"):
            v, sp = tp_stats("tperf-hash", km, t, "ops_per_s")
            vv, _ = tp_stats("tperf-hash", "vanilla/global", t, "ops_per_s")
            if v is None:
                cells.append("n/a")
            else:
                cells.append("%.0f (%s)" % (v, fmt(v / vv if vv else None)))
                spreads.append(sp)
            sl = get("tperf-hash", km, t, "slots")
            slots.append(fmt(sl, "n"))
        p("| %s | %s | %s | %s |" % (name, " | ".join(cells), "/".join(slots),
          "%.0f%%" % max(spreads) if spreads else "n/a"))
    p()
    if any(k[0] == "tperf-hash" and k[1] == "patched/attached" for k in data):
        p("### -a/--attached (tree perf): hash with 256 futexes per thread, attached or not, ops/s")
        p()
        p("Every thread attaches its 256 futexes (FUTEX_ATTACH) before the run and operates on them with "
          "FUTEX_ATTACHED; the reference runs the same load without -a (policy 1). In brackets: relative to "
          "vanilla with the same -f 256.")
        p()
        p("| hash -f 256 (tree perf) | t1 ops/s | t2 ops/s | t4 ops/s | largest spread |")
        p("|---|---:|---:|---:|---:|")
        for km, name in (("vanilla/f256", "vanilla"), ("patched/f256", "patched, no option"),
                         ("patched/attached", "patched -a")):
            cells, spreads = [], []
            for t in ("t1", "t2", "t4"):
                v, sp = tp_stats("tperf-hash", km, t, "ops_per_s")
                vv, _ = tp_stats("tperf-hash", "vanilla/f256", t, "ops_per_s")
                cells.append("n/a" if v is None else "%.0f (%s)" % (v, fmt(v / vv if vv else None)))
                if v is not None:
                    spreads.append(sp)
            p("| %s | %s | %s |" % (name, " | ".join(cells), "%.0f%%" % max(spreads) if spreads else "n/a"))
        p()
    p("### --node (tree perf): threads, futex words and memory policy bound to one NUMA node, 2 threads")
    p()
    p("A 2-core TCG host has no NUMA latencies: these rows show that the binding works (and where the "
      "private hash landed: perf checks /proc/self/futex_hash's node), not a NUMA effect.")
    p()
    p("| kernel / options | hash t2 ops/s | slots | private hash on the node | lock-pi -M t2 ops/s |")
    p("|---|---:|---:|---|---:|")
    nodes = sorted({k[1] for k in data if k[0] in ("tperf-hash", "tperf-lock-pi") and "/node" in k[1]
                    and k[3] == "ops_per_s"})
    for km in nodes:
        kern, mode = km.split("/", 1)
        opts = "--node " + mode[4:].replace("-b", " -b ").replace("-prealloc", " --prealloc ")
        h, _ = tp_stats("tperf-hash", km, "t2", "ops_per_s")
        l, _ = tp_stats("tperf-lock-pi", km, "t2", "ops_per_s")
        on = get("tperf-hash", km, "t2", "hash_on_node")
        sl = get("tperf-hash", km, "t2", "slots")
        p("| %s %s | %s | %s | %s | %s |" % (kern, opts, fmt(h, "n"), fmt(sl, "n"),
          "yes" if on else ("n/a" if kern == "vanilla" or not sl else "no"), fmt(l, "n")))
    p()
    p("### lock-pi, wake, wake-parallel, requeue with -b (tree perf)")
    p()
    p("ops/s: higher is better; ms: lower is better; in brackets the speed relative to vanilla "
      "(>= 1.00: not slower), then the spread of the repeats.")
    p()
    cols = [("vanilla/global", "vanilla"), ("patched/auto-m1", "patched, no option"), ("patched/b0", "patched -b 0"),
            ("patched/b16", "patched -b 16"), ("patched/b1024", "patched -b 1024"), ("patched/attached", "patched -a")]
    p("| benchmark (tree perf) | metric | " + " | ".join(n for _, n in cols) + " |")
    p("|---|---|" + "---:|" * len(cols))
    for wl, param, metric in (("tperf-lock-pi", "t4", "ops_per_s"), ("tperf-wake", "t32", "ms"),
                              ("tperf-wake-parallel", "t32", "ms"), ("tperf-requeue", "t32", "ms")):
        vm, _ = tp_stats(wl, "vanilla/global", param, metric)
        cells = []
        for km, _ in cols:
            v, sp = tp_stats(wl, km, param, metric)
            if v is None:
                cells.append("n/a")
                continue
            val = "%.0f" % v if metric != "ms" else "%.4f" % v
            if km == "vanilla/global" or not vm:
                cells.append("%s, %.0f%%" % (val, sp))
            else:
                cells.append("%s (%.2fx), %.0f%%" % (val, vm / v if metric == "ms" else v / vm, sp))
        p("| %s %s | %s | %s |" % (wl[6:], param, metric, " | ".join(cells)))
    p()
    refused = sorted({(k[1], k[2], k[0]) for k in data if k[0].startswith("tperf-") and k[3] == "refused"})
    if refused:
        p("### Requests the kernel cannot honour fail, with the reason (tree perf)")
        p()
        p("Each run must exit non-zero with a `perf:` message naming the reason instead of measuring another "
          "hash (the messages are in the guest logs).")
        p()
        p("| kernel | request | refused |")
        p("|---|---|---|")
        names = {"b0": "-b 0", "b3": "-b 3", "b16": "-b 16", "prealloc16": "--prealloc 16",
                 "b16-m0": "-b 16 with policy 0", "prealloc16-m0": "--prealloc 16 with policy 0",
                 "b16-prealloc16": "-b 16 --prealloc 16", "node2": "--node 2 (2 nodes)",
                 "attached": "-a (no attached futexes)", "attached-m0": "-a with policy 0",
                 "attached-shared": "-a -S", "attached-f1024": "-a with -f 1024 (over kernel.futex_attached_max)"}
        for km, param, wl in refused:
            kern, mode = km.split("/", 1)
            p("| %s | %s | %s |" % (kern, names.get(mode, mode), "yes" if get(wl, km, param, "refused") else "no"))
        p()

# ---- drain: automatic switches against the waiters they move, and other processes' ----
if "drain" in parts and any(k[0] in ("drain", "worker") for k in data):
    p("## 12. Automatic switches under attack (ms of TCG icount time)")
    p()
    p("Patched kernel only (vanilla has no tables), two vCPUs, QEMU `-icount shift=0` (1 ms = 10^6 "
      "instructions of both vCPUs; guest/ff-drain.c, suite bench-drain). **drain**: a new process parks N "
      "io_uring FUTEX_WAITs on N private words from io-wq workers (IOSQE_ASYNC), which ask for no table, so "
      "all of them sit in the global table; one private FUTEX_WAKE of its main thread then queues its "
      "worker: time until the grown table is in place (first table of 16 buckets, N waiters moved out of "
      "the global table, growth to a bucket per waiter, N waiters moved again). Goal (issue 39): each "
      "doubling of N at most 2.2x the time. **worker**: a victim process created under policy 2 makes one "
      "private FUTEX_WAKE: time until its first table exists, alone and right after 8 attacker processes "
      "have each queued their worker for a drain of 100,000 waiters. Goal: at most 2x alone.")
    p()
    ns_ = sorted({int(k[2]) for k in data if k[0] == "drain" and k[3] == "switch_ms"})
    if ns_:
        p("| waiters moved (x2) | switch ms | / previous row | goal: <= 2.2x |")
        p("|---:|---:|---:|---|")
        prev = None
        for n in ns_:
            v = get("drain", "patched/1", n, "switch_ms")
            r = v / prev if v is not None and prev else None
            verdict = "" if r is None else ("PASS" if r <= 2.2 else "**FAIL**")
            p("| %d | %s | %s | %s |" % (n, "n/a" if v is None else "%.1f" % v, fmt(r), verdict))
            prev = v
        p()
    alone = get("worker", "patched/2", "alone", "first_table_ms")
    alone_c = get("worker", "patched/2", "alone", "complete_ms")
    loaded = [(k[2], get(*k)) for k in data if k[0] == "worker" and k[1] == "patched/2" and k[2] != "alone"
              and k[3] == "first_table_ms"]
    if alone is not None:
        p("In use: the table is published, the process's lookups use it (PR_FUTEX_HASH_GET_SLOTS sees it); "
          "complete: the grace period is over and every waiter moved (its switch is counted). Polled every "
          "millisecond.")
        p()
        p("| victim's first table | in use, ms | / alone | goal: <= 2x | complete, ms | / alone |")
        p("|---|---:|---:|---|---:|---:|")
        p("| alone | %.2f | 1.00x | | %s | 1.00x |" % (alone, "n/a" if alone_c is None else "%.2f" % alone_c))
        for param, v in sorted(loaded):
            att = get("worker", "patched/1", param, "attacker_switch_ms")
            c = get("worker", "patched/2", param, "complete_ms")
            p("| with attackers %s (their slowest switch: %s ms) | %.2f | %s | %s | %s | %s |" % (
                param, "n/a" if att is None else "%.0f" % att, v, fmt(v / alone if alone else None),
                "PASS" if alone and v <= 2 * alone else "**FAIL**",
                "n/a" if c is None else "%.2f" % c, fmt(c / alone_c if c and alone_c else None)))
        p()

# ---- snitch: a victim's waiters seen by another user's timing ----
if "snitch" in parts and any(k[0] == "snitch" for k in data):
    p("## 13. Waiters seen by another process's timing (TCG icount)")
    p()
    p("KernelSnitch (NDSS 2025) against each kernel, booted with QEMU `-icount shift=0` (4 vCPUs, one node; "
      "guest/ff-snitch.c, suite bench-snitch): an attacker process (uid 65534) times a shared FUTEX_WAKE on "
      "each of 8,192 words of a memfd of its own (the fastest of 5 calls: its instruction count), once "
      "before and once while a victim process (uid 1000, created under the policy) has 8 threads asleep (the "
      "attacker starts 20 ms, or the column's time, after they went to sleep), each on its own word: **private** FUTEX_WAIT_PRIVATE, **shared** FUTEX_WAIT without the private "
      "flag on its private memory (as `pthread_join()` waits), **none** no victim (the noise). Cells: "
      "words whose call got more than 40 instructions slower, i.e. that share a global bucket with a "
      "victim's waiter. Goal (issue 40): 0 under the default policy (2) for both forms.")
    p()
    cols = sorted({k[2] for k in data if k[0] == "snitch" and k[3] == "detected"},
                  key=lambda c: (["none", "private", "shared"].index(c.split("@")[0])
                                 if c.split("@")[0] in ("none", "private", "shared") else 9,
                                 int(c.split("@")[1]) if "@" in c else 0))
    last = {}
    for c in cols:
        form, _, ms = c.partition("@")
        last[form] = max(last.get(form, 0), int(ms or 0))
    p("| kernel/policy | " + " | ".join(c.replace("@", ", after ") + (" ms" if "@" in c else "") for c in cols)
      + " | goal |")
    p("|---|" + "---:|" * len(cols) + "---|")
    kms_ = sorted({k[1] for k in data if k[0] == "snitch"}, key=lambda x: (x != "vanilla", x))
    for km in kms_:
        c = [get("snitch", km, col, "detected") for col in cols]
        goal = ""
        if km == "patched/2":
            settled = [get("snitch", km, "%s@%d" % (f, last[f]), "detected") for f in ("private", "shared")
                       if f in last]
            goal = "PASS" if settled and all(v == 0 for v in settled) else "**FAIL**"
        p("| %s | %s | %s |" % (km, " | ".join("n/a" if v is None else "%d" % v for v in c), goal))
    p()
    p("The goal is read in the last columns (the victim asleep longest, its switch complete).")
    p()

text = "\n".join(out) + "\n"
open(os.path.join(outdir, "summary.md"), "w").write(text)
sys.stdout.write(text)

# Plot data: ratio vs waiters (N > 0, log x), one column per kernel/policy.
for metric in (("p50_ns", "p99_ns") if "wall" in parts else ()):
    with open(os.path.join(outdir, "victim-wake-%s.dat" % metric[:-3]), "w") as f:
        f.write("# waiters " + " ".join('"%s"' % name for _, name in kms) + "\n")
        for n in levels:
            if not n:
                continue
            cells = []
            for km, _ in kms:
                q, v = get("victim-wake", km, 0, metric), get("victim-wake", km, n, metric)
                cells.append("%.4f" % (v / q) if q and v is not None else "NaN")
            f.write("%d %s\n" % (n, " ".join(cells)))
with open(os.path.join(outdir, "perf-ratio.dat"), "w") as f:
    for name, r in perf_ratios:
        f.write('"%s" %.4f\n' % (name, r))
with open(os.path.join(outdir, "plot-columns"), "w") as f:
    if "wall" in parts:
        f.write("\n".join(name for _, name in kms) + "\n")
PY

command -v gnuplot >/dev/null || { echo "bench-report: warning: gnuplot missing, no plots" >&2; exit 0; }
mapfile -t names <"$outdir/plot-columns"
for m in p50 p99; do
	dat=$outdir/victim-wake-$m.dat
	[ -s "$outdir/plot-columns" ] || continue
	plot=""
	for i in "${!names[@]}"; do
		# gnuplot's single-quoted strings escape ' as ''.
		title=${names[$i]//\'/\'\'}
		plot+="${plot:+, }'$dat' using 1:$((i + 2)) with linespoints lw 2 title '$title'"
	done
	gnuplot <<EOF || echo "bench-report: warning: gnuplot failed for $dat" >&2
set terminal pngcairo size 900,560 noenhanced
set output '$outdir/victim-wake-$m.png'
set title 'Victim FUTEX_WAKE $m relative to quiet vs neighbour waiters'
set logscale x 2
set logscale y 2
set xlabel 'waiters queued by an unrelated process'
set ylabel 'cost / cost with 0 waiters'
set key top left
set grid
plot $plot
EOF
done
if [ -s "$outdir/perf-ratio.dat" ]; then
	gnuplot <<EOF || echo "bench-report: warning: gnuplot failed for perf-ratio" >&2
set terminal pngcairo size 900,500 noenhanced
set output '$outdir/perf-ratio.png'
set title 'perf bench futex: speed patched / vanilla (>= 1: patched not slower)'
set style data histograms
set style fill solid 0.6
set boxwidth 0.8
set xtics rotate by -30
set yrange [0:*]
set grid ytics
plot '$outdir/perf-ratio.dat' using 2:xtic(1) notitle
EOF
fi
rm -f "$outdir/plot-columns"
