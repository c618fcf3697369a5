#!/usr/bin/env bash
# The single-node Slurm cluster (packaging/slurm-local.sh) against this machine's own launcher, as
# users run them, one after the other on the same experiment:
#   1. the same `try --whole-runs` here and with --executor slurm: each one's verdict and wall time,
#      and the cluster's overhead (the whole try and per run: the job's submission, the check that
#      the nodes see the folder, the polling);
#   2. the experiment's reference runs (REFS of them) one after another here (--parallel-runs 1)
#      against the same runs as one job array (a try by parts with --executor slurm, fresh stores):
#      the wall time of each until the try's answer, and the reference runs' share of it; the
#      variant's runs after its first as an array from the job (the default) against one after
#      another in the job (--variant-parallel 1), and here one after another against side by side;
#   3. with LADDER=1, the default ladder by parts here against the same with --executor slurm
#      (its reference runs as one job array first, then the ladder as one job, its variants' runs
#      as arrays from it), and the same with --variant-parallel 1: wall time, answer.
# WHOLE=0 leaves out part 1.
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
if [ "${WHOLE:-1}" = 1 ]; then
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
fi

lr=(--vary optim.lr=0.02)
parts() {  # name, then the try's own options; its wall time in s
  local t0; t0=$(now)
  "$cli" try --reference-runs "$refs" --variant-runs "$refs" --out "$out/$1" "${common[@]}" "${lr[@]}" "${@:2}" \
    >/dev/null 2>"$out/$1.log" || true
  since "$t0"
}
variants() {  # the variant's runs a try counted, and those past its last look
  python3 -c "
import json
l = json.load(open('$out/$1/try.json')).get('variant_looks') or {}
print(f\"{l.get('runs', '?')} counted, {len(l.get('beyond') or [])} past the last look\")" 2>/dev/null || echo "?"
}
parts_here_s=$(parts parts-here --parallel-runs 1 --variant-parallel 1 --references "$out/refs-here")
parts_slurm_s=$(parts parts-slurm --references "$out/refs-slurm" --executor slurm)
# The reference runs kept from those two: the variant's runs (and the math check, the segments) only.
one_here_s=$(parts one-here --variant-parallel 1 --references "$out/refs-here")
side_here_s=$(parts side-here --references "$out/refs-here")
one_slurm_s=$(parts one-slurm --references "$out/refs-slurm" --executor slurm --variant-parallel 1)
array_slurm_s=$(parts array-slurm --references "$out/refs-slurm" --executor slurm)
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
echo "| the variant's runs to the target (optim.lr 0.02, at most $refs; reference runs kept) | wall s of the try | runs | verdict to target |"
echo "|---|---|---|---|"
echo "| here, one after another (--variant-parallel 1) | $one_here_s | $(variants one-here) | $(verdict "$out/one-here/try.json") |"
echo "| here, after the first side by side (default) | $side_here_s | $(variants side-here) | $(verdict "$out/side-here/try.json") |"
echo "| single-node Slurm, one after another in the job (--variant-parallel 1) | $one_slurm_s | $(variants one-slurm) | $(verdict "$out/one-slurm/try.json") |"
echo "| single-node Slurm, after the first as one array from the job (default) | $array_slurm_s | $(variants array-slurm) | $(verdict "$out/array-slurm/try.json") |"
echo
if [ "${LADDER:-0}" = 1 ]; then
  t0=$(now)
  "$cli" ladder --references "$out/ladder-refs-here" --out "$out/ladder-here" "${common[@]}" >"$out/ladder-here.txt" 2>"$out/ladder-here.log" || true
  ladder_here_s=$(since "$t0")
  t0=$(now)
  "$cli" ladder --references "$out/ladder-refs-slurm" --out "$out/ladder-slurm" --executor slurm "${common[@]}" \
    >"$out/ladder-slurm.txt" 2>"$out/ladder-slurm.log" || true
  ladder_slurm_s=$(since "$t0")
  t0=$(now)
  "$cli" ladder --references "$out/ladder-refs-slurm" --out "$out/ladder-slurm-kept" --executor slurm "${common[@]}" \
    >"$out/ladder-slurm-kept.txt" 2>"$out/ladder-slurm-kept.log" || true
  ladder_kept_s=$(since "$t0")
  t0=$(now)
  "$cli" ladder --references "$out/ladder-refs-slurm" --out "$out/ladder-slurm1" --executor slurm --variant-parallel 1 \
    "${common[@]}" >"$out/ladder-slurm1.txt" 2>"$out/ladder-slurm1.log" || true
  ladder_slurm1_s=$(since "$t0")
  kept() { grep -h "^kept:" "$@" 2>/dev/null | head -1 | cut -c1-90 || echo "(no answer)"; }
  echo "| default ladder by parts | wall s | answer |"
  echo "|---|---|---|"
  echo "| here, reference runs one after another | $ladder_here_s | $(kept "$out/ladder-here.txt" "$out/ladder-here.log") |"
  echo "| single-node Slurm, reference runs as one array, variants' runs after the first as arrays | $ladder_slurm_s | $(kept "$out/ladder-slurm.txt" "$out/ladder-slurm.log") |"
  echo "| the same, reference runs kept | $ladder_kept_s | $(kept "$out/ladder-slurm-kept.txt" "$out/ladder-slurm-kept.log") |"
  echo "| the same, reference runs kept, variants' runs one after another in the job | $ladder_slurm1_s | $(kept "$out/ladder-slurm1.txt" "$out/ladder-slurm1.log") |"
  echo
fi
echo "Logs: $out"
