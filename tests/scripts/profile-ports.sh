#!/bin/sh
# tests/scripts/profile-ports.sh: the PyTorch test ports of the profiles (tests/ports/torch_<profile>_port.py)
# against the facts of their spec pages (spec/profiles/<profile>.md), through
# tests/scripts/profile-ports.py; then every record's test port but nemo's (the records:
# tests/lib/ports.sh) through vectors/drivers/torch_driver.py with its adapter over vectors/nemo/:
# the driver must run every case, skipping only cases the adapter reports as
# not expressible, and `muonref check --results` must judge the file (exit 0 or 1:
# these are cross-profile runs, so failures are expected; spec/profiles/README.md
# lists what they are). make check.
# Exit: 0 pass; 77 skip (no torch for $PYTHON); 1 fail.
srcdir=${MUONREF_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$srcdir/tests/lib/lib.sh"

need_python torch
"$python" "$srcdir/tests/scripts/profile-ports.py" || exit 1

work_dir profile-ports || exit 1
status=0
. "$srcdir/tests/lib/plan.sh"  # the runs in one plan
. "$srcdir/tests/lib/ports.sh"
ports_read || exit 1
# every record's test port (a list by hand drifts: it had left out emerging and normuon); nemo's
# own port on vectors/nemo is no cross-profile run
profiles=$(port_profiles | grep -vx nemo)
for profile in $profiles; do
  set -- $(port_of "$profile")
  plan_add "$profile" --mode raw --optimizer "$1" --adapter "$2" "$srcdir/vectors/nemo"
done
plan_run
for profile in $profiles; do
  if ! plan_ran "$profile"; then
    echo "FAIL: the driver failed on the $profile port:"; grep -v 'platform:' "$work/plan.err"; status=1; continue
  fi
  # every skipped case must be one the adapter cannot express, or a refusal the
  # profile's record lists (test_port.refuses: the upstream's bare asserts and
  # rules no error case carries, each documented on its page)
  bad=$("$python" -c 'import json, sys
port = json.load(open(sys.argv[2])).get("test_port", {})
ok = tuple(port.get("refuses", []))
r = json.load(open(sys.argv[1]))["results"]
bad = [e for e in r if "skipped" in e and not e["skipped"].startswith(("NotExpressible: ",) + ok)]
for e in bad:
    print(e["file"], e["tcId"], e["skipped"][:200], file=sys.stderr)
print(len(bad))' "$work/$profile.json" "${MUONREF_RECORDS:-$srcdir/spec/profiles}/$profile.json")
  # --no-diagnosis: these are cross-profile runs, most cases fail, and the fit of each failure (about 200 s of CPU
  # for the eleven, 3 to 4 times that under ASan) explains what the cross matrix's first failures already show
  # explained (tests/scripts/cross-matrix.sh); what this test asserts is the exit status and the skip reasons
  "$muonref" check --quiet --no-diagnosis --results "$work/$profile.json" "$srcdir/vectors/nemo" >"$work/$profile.check" 2>&1
  rc=$?
  echo "$profile port on vectors/nemo (cross-profile): $(tail -n 1 "$work/$profile.check"), $(grep -F -- "-> $work/$profile.json" "$work/plan.err" | sed 's/.*files, //')"
  if [ "$bad" != 0 ]; then
    echo "FAIL: $bad cases of the $profile port were skipped for another reason than NotExpressible"; status=1
  fi
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
    echo "FAIL: muonref check --results exited $rc on the $profile port:"; cat "$work/$profile.check"; status=1
  fi
done
exit $status
