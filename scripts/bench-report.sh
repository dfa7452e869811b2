#!/usr/bin/env bash
# Turn the raw results of scripts/bench.sh into Markdown tables (stdout and
# <outdir>/summary.md) and gnuplot PNG plots.  Every number is a ratio of
# two results of the same run; absent results print as n/a.
#
# usage: bench-report.sh <raw.csv> <outdir> [quick]
set -euo pipefail

raw=${1:?usage: bench-report.sh <raw.csv> <outdir> [quick]}
outdir=${2:?missing output dir}
quick=${3:-0}
[ -f "$raw" ] || { echo "bench-report: error: $raw not found" >&2; exit 1; }
mkdir -p "$outdir"

python3 - "$raw" "$outdir" "$quick" <<'PY'
import csv, os, statistics, sys

raw, outdir, quick = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
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
    data.setdefault((r["workload"], km, r["param"], r["metric"]), []).append(v)

def get(wl, km, param, metric):
    v = data.get((wl, km, str(param), metric))
    return statistics.median(v) if v else None

modes = ["0", "1", "2", "3", "prealloc"]
mode_name = {"0": "m0 (off)", "1": "m1 (first conflict, default)", "2": "m2 (first private op)",
             "3": "m3 (second thread)", "prealloc": "prealloc (m1 + FUTEX_PREALLOC_HASH)"}
kms = [("vanilla/global", "vanilla")]
if any(k[1] == "patched/global" for k in data):
    kms.append(("patched/global", "patched (no policy sysctl)"))
kms += [("patched/" + ("m" + m if m != "prealloc" else m), "patched " + mode_name[m]) for m in modes]
levels = sorted({int(k[2]) for k in data if k[0] == "victim-wake"} | ({0, 8192, 65536} if quick else {0, 2048, 8192, 32768, 65536}))

def fmt(x, unit="x"):
    if x is None:
        return "n/a"
    if unit == "x":
        return "%.2fx" % x
    return "%.0f" % x

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
  "Every figure is a ratio of two results of the same run (absolute TCG timings are noise); "
  "quiet = the same measurement with 0 neighbour waiters. n/a = not measured (kernel or feature absent).")
p()
v65 = get("victim-wake", "vanilla/global", 65536, "p50_ns")
v0 = get("victim-wake", "vanilla/global", 0, "p50_ns")
m65 = get("victim-wake", "patched/m1", 65536, "p50_ns")
m0 = get("victim-wake", "patched/m1", 0, "p50_ns")
p("**Goal** (victim FUTEX_WAKE p50 at 65536 neighbour waiters, default policy, <= 1.10x quiet): "
  "patched %s, vanilla %s." % (fmt(m65 / m0 if m65 and m0 else None), fmt(v65 / v0 if v65 and v0 else None)))
p()
p("## 1. Noisy neighbour: victim cost relative to quiet")
p()
note = ("Single-threaded victim process, FUTEX_WAKE of private futexes nobody waits on (64 addresses in turn), "
        "while an unrelated process keeps N waiters queued in futex_waitv (128 private futexes a thread, "
        "all N verified queued before and after the measurement).")
for metric, label in (("p50_ns", "p50"), ("p99_ns", "p99"), ("p99.9_ns", "p99.9"), ("max_ns", "max")):
    ratio_table("Victim FUTEX_WAKE, %s" % label, "victim-wake", metric, note if metric == "p50_ns" else "")
for metric, label in (("p50_ns", "p50"), ("p99_ns", "p99"), ("p99.9_ns", "p99.9")):
    ratio_table("Victim wait/wake round trip between two threads, %s" % label, "victim-rtt", metric)

p("## 2. The neighbour's own FUTEX_WAKE (unqueued futexes) relative to quiet")
p()
for metric, label in (("p50_ns", "p50"), ("p99_ns", "p99")):
    ratio_table("Neighbour FUTEX_WAKE, %s" % label, "neigh-wake", metric)
p("Private table slots of the neighbour after queueing (0 = global table):")
p()
p("| kernel / policy | " + " | ".join("%d" % n for n in levels) + " |")
p("|---|" + "---:|" * len(levels))
for km, name in kms:
    p("| %s | %s |" % (name, " | ".join(fmt(get("neigh-hash", km, n, "slots"), "n") for n in levels)))
p()

p("## 3. perf bench futex: patched / vanilla")
p()
p("Median of the repeats; spread = (max - min) / median over the repeats. ops/s: higher is better; ms: lower is better. "
  "Patched kernel with the policy off (m0: the lookup code only) and with the default policy (m1). speed = patched speed / vanilla speed (ops/s ratio, or the inverse ratio of "
  "ms): >= 1.00 means the patched kernel is not slower; compare the distance from 1.00 with the spreads.")
p()
p("| benchmark | metric | vanilla | spread | patched m0 | spread | speed m0/vanilla | patched m1 | spread | speed m1/vanilla |")
p("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
perf_ratios = []
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

if not quick:
    p("## 4. The 2014 table: perf bench futex hash, 8 vCPUs, global table (policy 0)")
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

    p("## 5. Switch cost: first private ops after a conflict with N waiters of the process queued")
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

text = "\n".join(out) + "\n"
open(os.path.join(outdir, "summary.md"), "w").write(text)
sys.stdout.write(text)

# Plot data: ratio vs waiters (N > 0, log x), one column per kernel/policy.
for metric in ("p50_ns", "p99_ns"):
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
    f.write("\n".join(name for _, name in kms) + "\n")
PY

command -v gnuplot >/dev/null || { echo "bench-report: warning: gnuplot missing, no plots" >&2; exit 0; }
mapfile -t names <"$outdir/plot-columns"
for m in p50 p99; do
	dat=$outdir/victim-wake-$m.dat
	plot=""
	for i in "${!names[@]}"; do
		plot+="${plot:+, }'$dat' using 1:$((i + 2)) with linespoints lw 2 title '${names[$i]}'"
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
