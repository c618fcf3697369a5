#!/usr/bin/env bash
# The single-node Slurm cluster (packaging/slurm-local.sh) against this machine's own launcher, as
# users run them, one after the other on the same experiment:
#   1. the same `try --whole-runs` here and with --executor slurm: each one's verdict and wall time,
#      and the cluster's overhead (the whole try and per run: the job's submission, the check that
#      the nodes see the folder, the polling);
#   2. the experiment's reference runs (REFS of them) one after another here (--parallel-runs 1)
#      against the same runs as one job array (a try by parts with --executor slurm, fresh stores):
#      the wall time of each until the try's answer, and the reference runs' share of it;
#   3. with LADDER=1, the default ladder by parts here against the same with --executor slurm
#      (its reference runs as one job array first, then the ladder as one job): wall time, answer.
# Starts its own cluster under the output folder (root; stopped at the end) unless SLURM_CONF names
# one. Never asserts.
#
#   bash tests/bench/bench_slurm.sh [CLI=build/app/cli/workbench-cli]
#
# Sizes: PAIRS (whole-run pairs: 3), REFS (reference and variant runs: 5), LIMIT (training images:
# 0, all 60000), MODEL (lenet), LADDER (1: the ladders too, about 10 minutes more).
set -euo pipefail
cli=$(readlink -f "${1:-build/app/cli/workbench-cli}")
here=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d /tmp/bench-slurm.XXXXXX)
pairs=${PAIRS:-3}
refs=${REFS:-5}
common=(--set "model.name=${MODEL:-lenet}" --set train.epochs=1 --set "data.limit_train=${LIMIT:-0}" --set train.threads=1)

if [ -z "${SLURM_CONF:-}" ]; then
  bash "$here/packaging/slurm-local.sh" start "$out/cluster" >/dev/null
  if [ -f "$out/cluster/unavailable" ]; then echo "no cluster here: $(cat "$out/cluster/unavailable")"; exit 0; fi
  trap 'bash "$here/packaging/slurm-local.sh" stop "$out/cluster" >/dev/null' EXIT
  export SLURM_CONF=$out/cluster/slurm.conf
fi
echo "Cluster: $(sinfo -h -o '%N, %c CPUs, state %t') ($out)"

now() { python3 -c 'import time; print(time.time())'; }
since() { python3 -c "import time; print(f'{time.time() - $1:.1f}')"; }
verdict() { python3 -c "
import json, sys
d = json.load(open('$1'))
e = d.get('estimate', {}).get('to_target') or d.get('composed', {}).get('speedup') or {}
print(f\"{e.get('point', float('nan')):.2f}x [{e.get('lo', float('nan')):.2f}, {e.get('hi', float('nan')):.2f}] {e.get('verdict', '?')}\")
" 2>/dev/null || echo "(no try.json)"; }

t0=$(now); "$cli" run "${common[@]}" --run-dir "$out/baseline-run" >/dev/null 2>&1; base_s=$(since "$t0")
echo "One baseline run here: $base_s s"
echo

vary=(--vary speedups.precision=bf16-mixed)
t0=$(now)
"$cli" try --whole-runs --repeats "$pairs" --out "$out/whole-here" "${common[@]}" "${vary[@]}" >/dev/null 2>"$out/whole-here.log" || true
here_s=$(since "$t0")
t0=$(now)
"$cli" try --whole-runs --repeats "$pairs" --out "$out/whole-slurm" --executor slurm "${common[@]}" "${vary[@]}" \
  >/dev/null 2>"$out/whole-slurm.log" || true
slurm_s=$(since "$t0")
runs=$((2 * pairs))
echo "| try --whole-runs (bf16-mixed, $pairs pairs) | wall s | verdict to target |"
echo "|---|---|---|"
echo "| here | $here_s | $(verdict "$out/whole-here/try.json") |"
echo "| single-node Slurm | $slurm_s | $(verdict "$out/whole-slurm/try.json") |"
python3 -c "print(f'| overhead | {$slurm_s - $here_s:.1f} ({($slurm_s - $here_s) / $runs:.1f} per run of $runs) | |')"
echo

lr=(--vary optim.lr=0.02)
t0=$(now)
"$cli" try --reference-runs "$refs" --variant-runs "$refs" --parallel-runs 1 --references "$out/refs-here" \
  --out "$out/parts-here" "${common[@]}" "${lr[@]}" >/dev/null 2>"$out/parts-here.log" || true
parts_here_s=$(since "$t0")
t0=$(now)
"$cli" try --reference-runs "$refs" --variant-runs "$refs" --references "$out/refs-slurm" --executor slurm \
  --out "$out/parts-slurm" "${common[@]}" "${lr[@]}" >/dev/null 2>"$out/parts-slurm.log" || true
parts_slurm_s=$(since "$t0")
array_s=$(python3 - "$out/refs-slurm" <<'PY'
import glob, os, sys
logs = glob.glob(os.path.join(sys.argv[1], '*', 'slurm', 'slurm-*.out'))
scripts = glob.glob(os.path.join(sys.argv[1], '*', 'slurm', 'array-*.sh'))
if logs and scripts:
    print(f"{max(os.path.getmtime(f) for f in logs) - min(os.path.getmtime(f) for f in scripts):.1f}")
else:
    print("?")
PY
)
echo "| try by parts (optim.lr 0.02: $refs reference + $refs variant runs) | wall s | reference runs | verdict to target |"
echo "|---|---|---|---|"
echo "| here, one after another | $parts_here_s | sequential | $(verdict "$out/parts-here/try.json") |"
echo "| single-node Slurm | $parts_slurm_s | one job array, ~$array_s s from submission to the last task's end | $(verdict "$out/parts-slurm/try.json") |"
echo
if [ "${LADDER:-0}" = 1 ]; then
  t0=$(now)
  "$cli" ladder --references "$out/ladder-refs-here" --out "$out/ladder-here" "${common[@]}" >"$out/ladder-here.txt" 2>"$out/ladder-here.log" || true
  ladder_here_s=$(since "$t0")
  t0=$(now)
  "$cli" ladder --references "$out/ladder-refs-slurm" --out "$out/ladder-slurm" --executor slurm "${common[@]}" \
    >"$out/ladder-slurm.txt" 2>"$out/ladder-slurm.log" || true
  ladder_slurm_s=$(since "$t0")
  kept() { grep -h "^kept:" "$@" 2>/dev/null | head -1 | cut -c1-90 || echo "(no answer)"; }
  echo "| default ladder by parts | wall s | answer |"
  echo "|---|---|---|"
  echo "| here, reference runs one after another | $ladder_here_s | $(kept "$out/ladder-here.txt" "$out/ladder-here.log") |"
  echo "| single-node Slurm, reference runs as one array | $ladder_slurm_s | $(kept "$out/ladder-slurm.txt" "$out/ladder-slurm.log") |"
  echo
fi
echo "Logs: $out"
