#!/usr/bin/env bash
# Real A/A experiments: `workbench-cli try` of the default experiment against itself (the variant
# changes nothing), N times, as a user runs them (adaptive pairs of whole processes), then one line
# per try and how many ended "faster" or "slower" (false alarms). Never asserts.
#
#   bash tests/bench/bench_aa_tries.sh [N=10] [CLI=build/app/cli/workbench-cli] [--set KEY=VALUE ...]
set -euo pipefail
n=${1:-10}
cli=${2:-build/app/cli/workbench-cli}
shift $(( $# > 2 ? 2 : $# ))
out=$(mktemp -d /tmp/aa-tries.XXXXXX)
printf '%-4s %-8s %-44s %-44s %s\n' try pairs "train samples/s" "wall" stopped
for i in $(seq 1 "$n"); do
  "$cli" try --vary speedups.workers=0 --out "$out/try-$i" --json "$@" >"$out/try-$i.json" 2>"$out/try-$i.log" || true
  python3 - "$out/try-$i.json" "$i" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
e = doc.get("estimate", {})
def text(k):
    x = e.get(k, {})
    if x.get("point") is None: return "–"
    lo, hi = x.get("lo"), x.get("hi")
    iv = f" [{lo:.2f}, {hi:.2f}]" if lo is not None else ""
    return f"{x['point']:.2f}x{iv} {x.get('verdict','')}"
print(f"{sys.argv[2]:<4} {doc.get('pairs',0):<8} {text('throughput'):<44} {text('wall'):<44} {doc.get('settled','')}")
PY
done
python3 - "$out" "$n" <<'PY'
import glob, json, sys
docs = [json.load(open(f)) for f in sorted(glob.glob(sys.argv[1] + "/try-*.json"))]
for k in ("to_target", "throughput", "wall"):
    called = sum(d.get("estimate", {}).get(k, {}).get("verdict") in ("faster", "slower") for d in docs)
    print(f"{k}: {called} of {len(docs)} A/A tries called faster or slower")
print(f"runs in {sys.argv[1]}")
PY
