#!/bin/sh
# muonref tests: `muonref bench --quick --json` runs, prints JSON that
# parses, and has the keys the report promises (the machine and its load,
# the bound of the bf16 path, step / NS); `--markdown` prints the docs/
# page with a row per case and the load.  Timings are not asserted
# (speed is the benchmark's business, not the tests').  Prints a Check-style
# summary line so that tests/lib/summary.sh counts it.
# Environment: MUONREF (the command, default ./muonref), PYTHON3 (any Python
# 3 with the json module, for the parse; without one the test is skipped).
cmd=${MUONREF:-./muonref}
py=${PYTHON3:-python3}
out=${TMPDIR:-/tmp}/muonref-bench-quick.$$.json
md=${TMPDIR:-/tmp}/muonref-bench-quick.$$.md
trap 'rm -f "$out" "$md"' EXIT
if ! "$cmd" bench --quick --json >"$out"; then
  echo "bench_quick.sh:0:F:bench: muonref bench --quick --json failed"
  echo "0%: Checks: 1, Failures: 1, Errors: 0"
  exit 1
fi
mdfail=
"$cmd" bench --quick --shapes 64x256 --markdown >"$md" || mdfail="muonref bench --markdown failed"
[ -n "$mdfail" ] || grep -q '^# Benchmarks' "$md" || mdfail="the Markdown page has no title"
[ -n "$mdfail" ] || grep -q '^| 64x256 | 1 | 0 |' "$md" || mdfail="the Markdown page has no row for 64x256"
[ -n "$mdfail" ] || grep -q 'load average (1, 5, 15 min)' "$md" || mdfail="the Markdown page does not give the load"
[ -n "$mdfail" ] || grep -q '^| step time / bf16 NS time | 64x256 |' "$md" || mdfail="the Markdown page has no step / NS target"
"$cmd" bench --json --markdown >/dev/null 2>&1
[ $? -eq 2 ] || mdfail="${mdfail:-bench --json --markdown was not refused with exit 2}"
if ! "$py" -c 'import json' 2>/dev/null; then
  echo "no Python 3 to parse the JSON: skipped"
  echo "100%: Checks: 0, Failures: 0, Errors: 0"
  exit 77
fi
"$py" - "$out" "$mdfail" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
fails = [sys.argv[2]] if sys.argv[2] else []
def need(obj, keys, where):
    for k in keys:
        if k not in obj:
            fails.append("%s: no key %r" % (where, k))
need(d, ["flop_model", "ns_steps", "reps", "set_reps", "warmup", "openblas_threads", "time_budget_s", "cases",
         "peak_rss_kib", "torch", "targets", "bf16_gemm", "bf16_bound", "peak_model", "peak_gflops", "machine"], "top")
need(d.get("machine", {}), ["cpu", "processors", "avx2", "avx512_bf16", "date", "load_average_start",
                            "load_average_end"], "machine")
need(d.get("bf16_gemm", {}), ["native", "note", "omp_wait_policy"], "bf16_gemm")
if not (isinstance(d.get("peak_gflops", {}).get("fp32"), (int, float)) and d["peak_gflops"]["fp32"] > 0):
    fails.append("peak_gflops.fp32 is not a positive number")
if d.get("bf16_gemm", {}).get("native") and not (d.get("peak_gflops", {}).get("bf16") or 0) > 0:
    fails.append("native bf16 GEMM but no measured bf16 peak")
if not d.get("cases"):
    fails.append("no cases")
for c in d.get("cases", []):
    where = c.get("name", "?")
    need(c, ["name", "matrices", "vectors", "runs", "gflop", "ns_workspace_bytes", "optimizer_workspace_bytes",
             "seconds", "gflops", "ratios", "fraction_of_peak", "bound", "fp32_vs_naive_rel_err"], where)
    need(c.get("bound", {}), ["symmetric_flop_ratio", "bf16_over_naive_over_bound", "bf16_blas_over_naive_over_bound"],
         where)
    b = c.get("bound", {}).get("symmetric_flop_ratio")
    if not (isinstance(b, (int, float)) and 0.5 <= b < 0.75):
        fails.append("%s: bound.symmetric_flop_ratio = %r is not (3n + m) / (4n + 2m)" % (where, b))
    need(c.get("seconds", {}), ["naive_fp32", "bf16", "bf16_blas", "fp32", "step", "torch_bf16", "torch_fp32"], where)
    need(c.get("fraction_of_peak", {}), ["naive_fp32", "bf16", "bf16_blas", "fp32", "torch_bf16", "torch_fp32"], where)
    need(c.get("ratios", {}), ["bf16_over_naive", "bf16_blas_over_naive", "bf16_over_torch_bf16", "step_over_bf16",
                               "fp32_over_naive", "step_over_naive",
                               "torch_bf16_over_bf16", "torch_fp32_over_bf16"], where)
    for k in ("naive_fp32", "bf16", "bf16_blas", "fp32", "step"):
        v = c.get("seconds", {}).get(k)
        if not isinstance(v, (int, float)) or v <= 0:
            fails.append("%s: seconds.%s = %r is not a positive number" % (where, k, v))
    pairs, rs = c.get("step_pairs"), c.get("ratios", {}).get("step_over_bf16")
    if not (isinstance(pairs, int) and 1 <= pairs <= 16 and pairs >= min(c.get("runs", 0), 16)):
        fails.append("%s: step_pairs = %r is not from min(runs, 16) (runs %r) to 16" % (where, pairs, c.get("runs")))
    if not (isinstance(rs, (int, float)) and rs > 0):
        fails.append("%s: ratios.step_over_bf16 = %r is not a positive number" % (where, rs))
    # the step's memory bound (bench.h bench_step_bound): a single matrix moves 1.5 copies of itself
    mb, cp, ns = c.get("ratios", {}).get("step_over_bf16_memory_bound"), c.get("seconds", {}).get("copy"), \
        c.get("seconds", {}).get("bf16")
    if not (isinstance(cp, (int, float)) and cp > 0 and isinstance(mb, (int, float)) and mb > 1):
        fails.append("%s: seconds.copy = %r, ratios.step_over_bf16_memory_bound = %r: not measured" % (where, cp, mb))
    elif c.get("matrices") == 1 and c.get("vectors") == 0 and abs(mb - (1 + 1.5 * cp / ns)) > 1e-6 * mb:
        fails.append("%s: step_over_bf16_memory_bound %r is not 1 + 1.5 copy / bf16 = %r" % (where, mb, 1 + 1.5 * cp / ns))
    if not c.get("fp32_vs_naive_rel_err", 1) < 1e-4:
        fails.append("%s: fp32 differs from the naive fp32 baseline by %r" % (where, c.get("fp32_vs_naive_rel_err")))
need(d.get("torch", {}), ["measured", "note", "peak_rss_kib"], "torch")
if not any(t.get("what") == "step time / bf16 NS time" for t in d.get("targets", [])):
    fails.append("no step / NS target")
for f in fails:
    print("bench_quick.sh:0:F:bench: " + f)
print("%d%%: Checks: 1, Failures: %d, Errors: 0" % (0 if fails else 100, 1 if fails else 0))
sys.exit(1 if fails else 0)
PY
