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
# Both methods measure at one target (the experiment's reference runs', made by the first change that
# needs them): the table says which and from what. Whole runs train one seed a pair (both runs of a
# pair the same), as the reference runs do, so their interval holds the seed's noise too.
# Before each change, `try --which-method` says which method `try` would choose on its own (the
# references as they are then) and why; the table says whether that was the cheaper of the two for
# the same precision (each cost scaled by its interval's squared log-width: precision grows with
# runs as 1/sqrt(n)). TABLE_ONLY=<folder of an earlier bench>: print its table again, no runs
# (with CHOOSE=1, asking `try --which-method` now, the references as each row found them).
# OUT=<an earlier bench's folder>: measure CHANGES again into it (its baseline run and reference runs
# reused, their rows replaced); TABLE_ONLY=<it> then prints every row.
# ONLY_FASTER=1: the by-parts tries ask only "faster?" (try --only-faster, the ladder's question): a
# larger global batch too slow to be faster even needing no more samples is answered by that bound,
# and the "agrees" column says whether the whole runs' speedup is under it.
set -euo pipefail
cli=${1:-build/app/cli/workbench-cli}
out=${TABLE_ONLY:-${OUT:-$(mktemp -d /tmp/bench-parts.XXXXXX)}}
mkdir -p "$out"
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

# Which method `try` would choose for the change, the references as they are now (or, with an empty
# folder, as they were before any), into $out/<change>-choice.json; nothing when the CLI cannot say.
choose() {
  local change=$1 refs_now=$2; shift 2
  local refs_dir=$WB_REFERENCES_DIR
  [ "$refs_now" = 0 ] && refs_dir=$out/no-references
  "$cli" try --which-method --json --references "$refs_dir" --out "$out/$change-choice" "${common[@]}" "$@" \
    >"$out/$change-choice.json" 2>/dev/null || rm -f "$out/$change-choice.json"
}
refs_count() { { find "$WB_REFERENCES_DIR" -name reference.json 2>/dev/null || true; } | wc -l; }

if [ -n "${TABLE_ONLY:-}" ]; then
  base_s=$(cat "$out/baseline-seconds")
  rows=()
  while read -r change ps ws rb bs; do
    # shellcheck disable=SC2046
    [ -n "${CHOOSE:-}" ] && { set -- $(varies "$change"); choose "$change" "$rb" "$@"; }
    rows+=("$change $ps $ws $rb ${bs:-$base_s}")
  done <"$out/rows"
else
# One baseline run timed as this bench finds the host (OUT=<an earlier bench's folder>: again, each
# row keeping the baseline run of its own measurement; its reference runs are reused).
[ -e "$out/baseline-run" ] && mv "$out/baseline-run" "$out/baseline-run.earlier-$(date +%s)"
t0=$(python3 -c 'import time; print(time.time())')
"$cli" run "${common[@]}" --run-dir "$out/baseline-run" >/dev/null 2>"$out/baseline-run.log"
base_s=$(seconds "$t0")
[ -s "$out/baseline-seconds" ] || echo "$base_s" >"$out/baseline-seconds"
echo "One baseline run: $base_s s ($out)"

rows=()
for change in $changes; do
  # shellcheck disable=SC2046
  set -- $(varies "$change")
  for kept in "$out/$change-parts" "$out/$change-whole"; do  # an earlier measurement: set aside, never reused
    [ -e "$kept" ] && mv "$kept" "$kept.earlier-$(date +%s)"
  done
  refs_before=$(refs_count)
  choose "$change" "$refs_before" "$@"
  t0=$(python3 -c 'import time; print(time.time())')
  "$cli" try --json --reference-runs "$refs" --variant-runs "$refs" ${ONLY_FASTER:+--only-faster} --out "$out/$change-parts" "${common[@]}" "$@" \
    >"$out/$change-parts.json" 2>"$out/$change-parts.log" || echo "($change by parts failed: $out/$change-parts.log)"
  parts_s=$(seconds "$t0")
  t0=$(python3 -c 'import time; print(time.time())')
  "$cli" try --json --whole-runs --repeats "$pairs" --out "$out/$change-whole" "${common[@]}" "$@" \
    >"$out/$change-whole.json" 2>"$out/$change-whole.log" || echo "($change whole runs failed: $out/$change-whole.log)"
  whole_s=$(seconds "$t0")
  rows+=("$change $parts_s $whole_s $refs_before $base_s")
  { grep -v "^$change " "$out/rows" 2>/dev/null || true; echo "$change $parts_s $whole_s $refs_before $base_s"; } >"$out/rows.new"
  mv "$out/rows.new" "$out/rows"
done
fi

python3 - "$out" "$base_s" "${rows[@]}" <<'PY'
import json, math, sys
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
def tt(doc): return (doc.get("estimate") or {}).get("to_target") or {}
def agrees(p, w, bound):
    # A bound agrees when the whole runs' speedup is under its high end; an estimate, when the two
    # intervals overlap (each is the method's own 95 % interval).
    pe, we = tt(p), tt(w)
    if pe.get("hi") is None or we.get("point") is None: return "–"
    if bound: return "yes" if we["point"] <= pe["hi"] else "no"
    if pe.get("lo") is None or we.get("lo") is None or we.get("hi") is None: return "–"
    return "yes" if pe["lo"] <= we["hi"] and we["lo"] <= pe["hi"] else "no"
def target(p, w):
    tp, tw = p.get("target_acc"), w.get("target_acc")
    if tp is None and tw is None: return "–"
    f = lambda t: "–" if t is None else f"{100 * t:.1f} %"
    if tp is not None and tw is not None and abs(tp - tw) < 1e-9: return f(tp) + " both"
    return f"{f(tp)} / {f(tw)}"
def precise_cost(doc, s):
    # Seconds for the precision of a 95 % interval [lo, hi]: cost x ln(hi/lo)^2 (width ~ 1/sqrt(runs)).
    e = tt(doc)
    if e.get("lo") is None or e.get("hi") is None or not e["lo"] > 0: return None
    return s * math.log(e["hi"] / e["lo"]) ** 2
def chosen(change, p, w, ps, ws):
    c = load(f"{out}/{change}-choice.json")
    if not c.get("method"): return "–", "–"
    name = "by parts" if c["method"] == "composed" else "whole runs"
    cp, cw = precise_cost(p, ps), precise_cost(w, ws)
    if cp is None or cw is None: return name, "–"
    cheaper = "composed" if cp <= cw else "whole"
    return name, "yes" if c["method"] == cheaper else f"no ({cp:.1f} vs {cw:.1f})"
print()
print("| change | by parts: to target | split | cost s (baseline runs) | whole runs (pairs): to target | cost s (baseline runs) | agrees | target | try chooses | the cheaper? |")
print("|---|---|---|---|---|---|---|---|---|---|")
seeds, reasons = set(), []
for row in sys.argv[3:]:
    change, ps, ws = row.split()[:3]
    ps, ws = float(ps), float(ws)
    rb = float(row.split()[4]) if len(row.split()) > 4 else base  # the baseline run of its own measurement
    p, w = load(f"{out}/{change}-parts.json"), load(f"{out}/{change}-whole.json")
    refs = p.get("references") or {}
    split = p.get("words", "–").split(": ", 1)[-1]
    note = f", {refs.get('ran', 0)} reference runs made" if refs.get("ran") else ""
    bound = isinstance(p.get("samples"), dict) and "assumed" in p["samples"]
    kind = " (bound: no run to the target)" if bound else ""
    for r in w.get("runs", []): seeds.add(r.get("seed", 0))
    name, cheaper = chosen(change, p, w, ps, ws)
    c = load(f"{out}/{change}-choice.json")
    if c.get("method_reason"): reasons.append(f"- {change}: {name}: {c['method_reason']}")
    print(f"| {change} | {est(tt(p))}{kind} | {split}{note} | {ps:.0f} ({ps/rb:.1f}) "
          f"| {est(tt(w))} ({w.get('pairs', 0)}) | {ws:.0f} ({ws/rb:.1f}) | {agrees(p, w, bound)} | {target(p, w)} | {name} | {cheaper} |")
srcs = {load(f"{out}/{r.split()[0]}-whole.json").get("target_source") for r in sys.argv[3:]} - {None, ""}
print()
print(f"One baseline run: {base:.1f} s (each row's in baseline runs: of its own measurement's). Target: the experiment's reference runs' fair target for both methods"
      f" (whole runs' from: {', '.join(sorted(srcs)) or '–'}).")
known = sorted(s for s in seeds if s)
if known:
    print(f"Whole runs: each pair its own seed ({known[0]}-{known[-1]}), both runs of a pair the same:"
          " their interval holds the seed's noise as well as the host's.")
elif seeds:
    print("Whole runs: every run trained the config's seed (a CLI from before pairs had their own).")
if reasons:
    print("Which method try chooses, and why:")
    print("\n".join(reasons))
PY
