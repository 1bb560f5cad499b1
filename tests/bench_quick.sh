#!/bin/sh
# muonref tests: `muonref bench --quick --json` runs, prints JSON that
# parses, and has the keys the report promises.  Timings are not asserted
# (speed is the benchmark's business, not the tests').  Prints a Check-style
# summary line so that tests/summary.sh counts it.
# Environment: MUONREF (the command, default ./muonref), PYTHON3 (any Python
# 3 with the json module, for the parse; without one the test is skipped).
cmd=${MUONREF:-./muonref}
py=${PYTHON3:-python3}
out=${TMPDIR:-/tmp}/muonref-bench-quick.$$.json
trap 'rm -f "$out"' EXIT
if ! "$cmd" bench --quick --json >"$out"; then
  echo "bench_quick.sh:0:F:bench: muonref bench --quick --json failed"
  echo "0%: Checks: 1, Failures: 1, Errors: 0"
  exit 1
fi
if ! "$py" -c 'import json' 2>/dev/null; then
  echo "no Python 3 to parse the JSON: skipped"
  echo "100%: Checks: 0, Failures: 0, Errors: 0"
  exit 77
fi
"$py" - "$out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
fails = []
def need(obj, keys, where):
    for k in keys:
        if k not in obj:
            fails.append("%s: no key %r" % (where, k))
need(d, ["flop_model", "ns_steps", "reps", "set_reps", "warmup", "openblas_threads", "time_budget_s", "cases",
         "peak_rss_kib", "torch", "targets", "bf16_gemm", "peak_model", "peak_gflops"], "top")
need(d.get("bf16_gemm", {}), ["native", "note", "omp_wait_policy"], "bf16_gemm")
if not (isinstance(d.get("peak_gflops", {}).get("fp32"), (int, float)) and d["peak_gflops"]["fp32"] > 0):
    fails.append("peak_gflops.fp32 is not a positive number")
if d.get("bf16_gemm", {}).get("native") and not (d.get("peak_gflops", {}).get("bf16") or 0) > 0:
    fails.append("native bf16 GEMM but no measured bf16 peak")
if not d.get("cases"):
    fails.append("no cases")
for c in d.get("cases", []):
    where = c.get("name", "?")
    need(c, ["name", "matrices", "runs", "gflop", "ns_workspace_bytes", "optimizer_workspace_bytes",
             "seconds", "gflops", "ratios", "fraction_of_peak", "fp32_vs_naive_rel_err"], where)
    need(c.get("seconds", {}), ["naive_fp32", "bf16", "bf16_blas", "fp32", "step", "torch_bf16", "torch_fp32"], where)
    need(c.get("fraction_of_peak", {}), ["naive_fp32", "bf16", "bf16_blas", "fp32", "torch_bf16", "torch_fp32"], where)
    need(c.get("ratios", {}), ["bf16_over_naive", "bf16_blas_over_naive", "bf16_over_torch_bf16", "step_over_bf16",
                               "fp32_over_naive", "step_over_naive",
                               "torch_bf16_over_bf16", "torch_fp32_over_bf16"], where)
    for k in ("naive_fp32", "bf16", "bf16_blas", "fp32", "step"):
        v = c.get("seconds", {}).get(k)
        if not isinstance(v, (int, float)) or v <= 0:
            fails.append("%s: seconds.%s = %r is not a positive number" % (where, k, v))
    if not c.get("fp32_vs_naive_rel_err", 1) < 1e-4:
        fails.append("%s: fp32 differs from the naive fp32 baseline by %r" % (where, c.get("fp32_vs_naive_rel_err")))
need(d.get("torch", {}), ["measured", "note", "peak_rss_kib"], "torch")
for f in fails:
    print("bench_quick.sh:0:F:bench: " + f)
print("%d%%: Checks: 1, Failures: %d, Errors: 0" % (0 if fails else 100, 1 if fails else 0))
sys.exit(1 if fails else 0)
PY
