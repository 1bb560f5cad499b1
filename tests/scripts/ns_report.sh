#!/bin/sh
# muonref tests: `muonref ns --report` on a small configuration writes every
# file it promises (spec/ns-study.md, "Report"), skips the plots without
# gnuplot, leaves nothing behind on failure, and refuses a non-empty
# directory with exit status 2.  Prints a Check-style summary line for
# tests/lib/summary.sh.  Run from the build directory (make check does).
MUONREF=./muonref
tmp=$(mktemp -d "${TMPDIR:-/tmp}/muonref-ns-report.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
checks=0; fails=0
check() { # check NAME CONDITION...
  name=$1; shift
  checks=$((checks + 1))
  if "$@"; then :; else fails=$((fails + 1)); echo "tests/scripts/ns_report.sh:0:F:report:$name: failed"; fi
}
SETS="simple deepseekv4"
promised() { # the files a report of $SETS on the quick inputs promises, plots if $1 = 1
  echo index.md presets.csv scalar_band.csv scalar_summary.csv matrix_runs.csv matrix_summary.csv exact_check.csv
  for s in $SETS; do
    echo data/band_$s.dat data/map_$s.dat
    for i in gauss_12x20 gauss_20x12 illcond_16x16_1e3; do echo data/mat_${s}_$i.dat; done
  done
  if [ "$1" = 1 ]; then
    echo study.gp
    for e in png svg; do
      echo plots/band.$e plots/phi_smin.$e plots/dist_gauss_12x20.$e plots/smin_illcond_16x16_1e3.$e
      for s in $SETS; do echo plots/map_$s.$e plots/formats_$s.$e; done
    done
  fi
}
all_present() { # all_present DIR PLOTS
  for f in $(promised "$2"); do [ -s "$1/$f" ] || { echo "missing $1/$f"; return 1; }; done
}
no_leftovers() { [ -z "$(ls -A "$tmp" | grep -v -e '^ok$' -e '^noplot$' -e '^full$')" ]; }

if [ -n "$(command -v gnuplot)" ] || [ -n "$MUONREF_GNUPLOT" ]; then
  $MUONREF ns --report "$tmp/ok" --presets simple,deepseekv4 --seeds 2 --quick >/dev/null
  check "report with plots: exit 0" [ $? -eq 0 ]
  check "report with plots: every promised file" all_present "$tmp/ok" 1
  check "report: png is a PNG" sh -c "head -c 4 '$tmp/ok/plots/band.png' | grep -q PNG"
  check "report: exact check rows (deepseekv4: 12 steps + step 0)" \
    [ "$(grep -c '^deepseekv4,gauss_8x12,' "$tmp/ok/exact_check.csv")" -eq 13 ]
  check "report: binary64 within 1e-8 of MPFR (relative)" grep -q 'so the binary64 column gives the exact' "$tmp/ok/index.md"
  check "report: rows for 2 sets x 2 inputs x 2 seeds x 3 formats" \
    [ "$(grep -c '^simple,gauss_12x20,12,20,2,bf16,' "$tmp/ok/matrix_runs.csv")" -eq 8 ]
  # the scalar maps on a log x axis from s_min (the small singular values
  # the study is about get their decades), their data log-spaced from s_min
  check "report: map plots on a log x axis" sh -c "sed -n '/map_simple.png/,/^plot/p' '$tmp/ok/study.gp' | grep -q 'set logscale x'"
  check "report: map data starts at s_min, log-spaced" \
    awk '!/^#/ {n++; x[n] = $1} END {exit !(x[1] == 0.001 && x[2] > 0.00100 && x[2] < 0.00102 && x[n] == 1)}' \
    "$tmp/ok/data/map_simple.dat"
  # no duplicate plot: the transposed Gaussian input gets none; the
  # ill-conditioned input plots its smallest singular value, not a flat distance
  check "report: no plot of the transposed input" [ ! -e "$tmp/ok/plots/dist_gauss_20x12.png" ]
  check "report: the page says why the transposed input has no plot" grep -q '^gauss_20x12: no plot' "$tmp/ok/index.md"
  check "report: ill-conditioned input: no distance plot" [ ! -e "$tmp/ok/plots/dist_illcond_16x16_1e3.png" ]
  check "report: every plot the page shows exists" sh -c "cd '$tmp/ok' && grep -o '(plots/[^)]*)' index.md | tr -d '()' | xargs ls >/dev/null"
fi
# the first paragraph answers which set is closest to the polar factor after
# 5 bf16 steps on the first input and which is worst, with the numbers of
# matrix_summary.csv (recomputed here from the CSV, not from the page)
answer_ok() { # answer_ok DIR
  awk -F, '$2 == "gauss_12x20" && $3 == "bf16" && $4 == 5 {
             d = $7 + 0; if (!(best != "") || d < bd) { best = $1; bd = d }
             if (!(worst != "") || !(d <= wd)) { worst = $1; wd = d } }
           END { printf "%s %.3g %s %.3g\n", best, bd, worst, wd }' "$1/matrix_summary.csv" >"$1/expect"
  read -r best bd worst wd <"$1/expect"; rm -f "$1/expect"
  line=$(sed -n 3p "$1/index.md")
  case "$line" in
    "**Which set converges fastest.**"*"**$best** comes closest to the polar factor Q ($bd)"*"the worst is **$worst** ($wd)"*) return 0 ;;
  esac
  echo "first paragraph: $line"; echo "expected best $best ($bd), worst $worst ($wd)"; return 1
}
MUONREF_GNUPLOT= $MUONREF ns --report "$tmp/answer" --presets simple,quintic,aol --seeds 2 --quick >/dev/null
check "first paragraph: exit 0" [ $? -eq 0 ]
check "first paragraph: the fastest and the worst set at 5 bf16 steps, with the CSV's numbers" answer_ok "$tmp/answer"
# every table of the page renders as a table on GitHub: rendered by a GFM
# renderer (cmark-gfm, Debian's), as many <table> elements as delimiter rows
if command -v cmark-gfm >/dev/null; then
  tables_ok() {
    md=$(grep -c '^|---' "$1/index.md")
    html=$(cmark-gfm -e table "$1/index.md" | grep -c '<table>')
    [ "$md" -gt 1 ] && [ "$md" -eq "$html" ] || { echo "index.md: $md tables, $html rendered"; return 1; }
  }
  check "page: every table renders in GFM" tables_ok "$tmp/answer"
else
  check "cmark-gfm is installed (.ci/install-deps)" false
fi
rm -rf "$tmp/answer"
# a set whose bf16 iteration diverges where binary64 does not (cans, its
# last triple repeated past its 5 steps): the report is written and the page
# counts the bf16 blow-ups (it failed the whole report before)
MUONREF_GNUPLOT= $MUONREF ns --report "$tmp/cans" --presets cans --seeds 1 --quick >/dev/null 2>&1
check "bf16 divergence: exit 0" [ $? -eq 0 ]
check "bf16 divergence: the page counts the bf16 blow-ups" grep -q 'bf16 alone failed' "$tmp/cans/index.md"
rm -rf "$tmp/cans"
MUONREF_GNUPLOT= $MUONREF ns --report "$tmp/noplot" --presets simple,deepseekv4 --seeds 1 --quick >/dev/null 2>"$tmp/err"
check "no gnuplot: exit 0" [ $? -eq 0 ]
check "no gnuplot: CSV and page" all_present "$tmp/noplot" 0
check "no gnuplot: page says so" grep -q 'Plots skipped' "$tmp/noplot/index.md"
check "no gnuplot: no plots directory" [ ! -e "$tmp/noplot/plots" ]
rm -f "$tmp/err"
MUONREF_GNUPLOT=/bin/false $MUONREF ns --report "$tmp/bad" --presets simple --seeds 1 --quick >/dev/null 2>&1
check "failing gnuplot: exit 3" [ $? -eq 3 ]
check "failing gnuplot: nothing left behind" no_leftovers
mkdir "$tmp/full" && touch "$tmp/full/x"
$MUONREF ns --report "$tmp/full" --presets simple --quick >/dev/null 2>&1
check "non-empty directory: exit 2" [ $? -eq 2 ]
check "non-empty directory: untouched" [ "$(ls -A "$tmp/full")" = x ]
# cubic5 diverges past its 5 steps: the page and the band table name the
# values "diverged" or "undefined", never nan or inf (issue 16)
MUONREF_GNUPLOT= $MUONREF ns --report "$tmp/div" --presets cubic5 --seeds 1 --quick >/dev/null 2>&1
check "diverging set: exit 0" [ $? -eq 0 ]
check "diverging set: page prints no nan or inf" sh -c "! grep -qiwE -e '-?nan' -e '-?inf' '$tmp/div/index.md'"
check "diverging set: page names the divergence" grep -q 'beyond binary64.s range: diverged' "$tmp/div/index.md"
rm -rf "$tmp/div"
$MUONREF ns --preset cubic5 --steps 100 >"$tmp/band.txt"
check "band table at step 100: no nan" sh -c "! grep -qiwE -e '-?nan' -e '-?inf' '$tmp/band.txt' && grep -q undefined '$tmp/band.txt'"
rm -f "$tmp/band.txt"
check "phi at step 100: undefined, not nan" [ "$($MUONREF ns --preset cubic5 --steps 100 --sigma 0.5 | cut -c1-9)" = undefined ]
pct=$(( (checks - fails) * 100 / checks ))
echo "$pct%: Checks: $checks, Failures: $fails, Errors: 0"
[ "$fails" -eq 0 ]
