#!/usr/bin/env bash
# `try` by parts against `try --whole-runs`, as users run them: for each change, the by-parts try
# (the math check, segments, the experiment's reference runs and, when the math changes, the
# variant's runs to the target) and the whole-run try (pairs of whole runs) on the same experiment,
# one after the other. Prints one row per change: each method's speedup to the target with its
# interval and verdict, its split (by parts), and what each cost in seconds and in baseline runs
# (one baseline `workbench-cli run` is timed first). The reference runs are made by the first
# change that needs them and reused by the others: the first's cost includes them. Never asserts.
#
#   bash tests/bench/bench_parts.sh [CLI=build/app/cli/workbench-cli]
#
# Sizes: PAIRS (whole runs: 3 pairs), REFS (reference and variant runs: 5), EPOCHS (1), MODEL (lenet),
# LIMIT (training images, 0: all 60000), CHANGES (a space-separated subset of: bf16 batch32 batch256
# workers2 pin devices2 channels_last evalbatch1 inference_eval early_stopping; the last three change
# the evaluation or where the run ends: short evaluating trials and a replay on the reference runs).
# ONLY_FASTER=1: the by-parts tries ask only "faster?" (try --only-faster, the ladder's question): a
# larger global batch too slow to be faster even needing no more samples is answered by that bound,
# and the "agrees" column says whether the whole runs' speedup is under it.
set -euo pipefail
cli=${1:-build/app/cli/workbench-cli}
out=$(mktemp -d /tmp/bench-parts.XXXXXX)
pairs=${PAIRS:-3}
refs=${REFS:-5}
changes=${CHANGES:-bf16 batch32 batch256 workers2 pin devices2 channels_last}
common=(--set "model.name=${MODEL:-lenet}" --set "train.epochs=${EPOCHS:-1}" --set "data.limit_train=${LIMIT:-0}")
export WB_REFERENCES_DIR=$out/references

varies() {
  case $1 in
    bf16) echo "--vary speedups.precision=bf16-mixed" ;;
    batch32) echo "--vary train.batch_size=32 --vary optim.lr=0.005" ;;   # lr scaled with the batch (64: 0.01)
    batch256) echo "--vary train.batch_size=256 --vary optim.lr=0.04" ;;
    workers2) echo "--vary speedups.workers=2" ;;
    pin) echo "--vary speedups.pin_memory=true" ;;
    devices2) echo "--vary speedups.devices=2 --vary optim.lr_scaling=linear" ;;   # 2 CPU processes, lr x2
    channels_last) echo "--vary speedups.channels_last=true" ;;
    evalbatch1) echo "--set train.eval_batch_size=256 --vary train.eval_batch_size=1" ;;
    inference_eval) echo "--set speedups.inference_eval=false --vary speedups.inference_eval=true" ;;
    early_stopping) echo "--vary speedups.early_stopping.patience=2" ;;
  esac
}

seconds() { local t0=$1; python3 -c "import time; print(f'{time.time() - $t0:.1f}')"; }

t0=$(python3 -c 'import time; print(time.time())')
"$cli" run "${common[@]}" --run-dir "$out/baseline-run" >/dev/null 2>"$out/baseline-run.log"
base_s=$(seconds "$t0")
echo "One baseline run: $base_s s ($out)"

rows=()
for change in $changes; do
  # shellcheck disable=SC2046
  set -- $(varies "$change")
  t0=$(python3 -c 'import time; print(time.time())')
  "$cli" try --json --reference-runs "$refs" --variant-runs "$refs" ${ONLY_FASTER:+--only-faster} --out "$out/$change-parts" "${common[@]}" "$@" \
    >"$out/$change-parts.json" 2>"$out/$change-parts.log" || echo "($change by parts failed: $out/$change-parts.log)"
  parts_s=$(seconds "$t0")
  t0=$(python3 -c 'import time; print(time.time())')
  "$cli" try --json --whole-runs --repeats "$pairs" --out "$out/$change-whole" "${common[@]}" "$@" \
    >"$out/$change-whole.json" 2>"$out/$change-whole.log" || echo "($change whole runs failed: $out/$change-whole.log)"
  whole_s=$(seconds "$t0")
  rows+=("$change $parts_s $whole_s")
done

python3 - "$out" "$base_s" "${rows[@]}" <<'PY'
import json, sys
out, base = sys.argv[1], float(sys.argv[2])
def load(p):
    try: return json.load(open(p))
    except Exception: return {}
def est(e):
    if not e or e.get("point") is None: return "–"
    if e.get("text"): return e["text"]  # the product's own words (a bound reads "at most ...")
    lo, hi = e.get("lo"), e.get("hi")
    iv = f" [{lo:.2f}, {hi:.2f}]" if lo is not None and hi is not None else ""
    return f"{e['point']:.2f}×{iv} {e.get('verdict', '')}"
def agrees(p, w, bound):
    # A bound agrees when the whole runs' speedup is under its high end; an estimate, when the two
    # intervals overlap (each is the method's own 95 % interval).
    pe, we = (p.get("estimate") or {}).get("to_target") or {}, (w.get("estimate") or {}).get("to_target") or {}
    if pe.get("hi") is None or we.get("point") is None: return "–"
    if bound: return "yes" if we["point"] <= pe["hi"] else "no"
    if pe.get("lo") is None or we.get("lo") is None or we.get("hi") is None: return "–"
    return "yes" if pe["lo"] <= we["hi"] and we["lo"] <= pe["hi"] else "no"
print()
print(f"| change | by parts: to target | split | cost s (baseline runs) | whole runs ({'pairs'}): to target | cost s (baseline runs) | agrees |")
print("|---|---|---|---|---|---|---|")
for row in sys.argv[3:]:
    change, ps, ws = row.split()
    p, w = load(f"{out}/{change}-parts.json"), load(f"{out}/{change}-whole.json")
    refs = p.get("references") or {}
    split = p.get("words", "–").split(": ", 1)[-1]
    note = f", {refs.get('ran', 0)} reference runs made" if refs.get("ran") else ""
    bound = isinstance(p.get("samples"), dict) and "assumed" in p["samples"]
    kind = " (bound: no run to the target)" if bound else ""
    print(f"| {change} | {est(p.get('estimate', {}).get('to_target'))}{kind} | {split}{note} | {ps} ({float(ps)/base:.1f}) "
          f"| {est(w.get('estimate', {}).get('to_target'))} ({w.get('pairs', 0)}) | {ws} ({float(ws)/base:.1f}) | {agrees(p, w, bound)} |")
PY
