#!/usr/bin/env bash
# What the default ladder's answer costs, as users run it: one baseline `workbench-cli run` timed
# RUNS times (its median is the unit; one untimed run first, for the caches), interleaved with the
# default ladder on a new experiment (its reference runs made first) and the same ladder again
# once they exist: base, ladder, base, ladder, base…, so the unit is timed on the host as the
# ladders found it. Prints each ladder's wall time in
# seconds and in baseline runs, its answer, and each step's seconds (from the step's first line on
# stderr to the next step's), so the fixed cost per step and what grows with the run are apart.
# Never asserts.
#
#   bash tests/bench/bench_ladder_cost.sh [CLI=build/app/cli/workbench-cli]
#
# Sizes: RUNS (3 baseline runs), MODEL (lenet), EPOCHS (1), LIMIT (training images, 0: all 60000).
set -euo pipefail
cli=${1:-build/app/cli/workbench-cli}
out=$(mktemp -d /tmp/bench-ladder-cost.XXXXXX)
common=(--set "model.name=${MODEL:-lenet}" --set "train.epochs=${EPOCHS:-1}" --set "data.limit_train=${LIMIT:-0}")
export WB_REFERENCES_DIR=$out/references
now() { python3 -c 'import time; print(f"{time.time():.3f}")'; }

# Each stderr line with the time it came (bash's own clock: no process started per line).
stamped() {
  while IFS= read -r line; do printf '%s\t%s\n' "$EPOCHREALTIME" "$line"; done
}

base=()
baseline() {
  local t0
  t0=$(now)
  "$cli" run "${common[@]}" --run-dir "$out/baseline-$1" >/dev/null 2>"$out/baseline-$1.log"
  [[ $1 == warm-up ]] || base+=("$(python3 -c "import time; print(f'{time.time() - $t0:.2f}')")")
}

baseline warm-up
n=0
for which in new again; do
  baseline $((++n))
  t0=$(now)
  echo "$t0" >"$out/ladder-$which.t0"
  "$cli" ladder --out "$out/ladder-$which" "${common[@]}" 2> >(stamped >"$out/ladder-$which.log") >"$out/ladder-$which.txt" ||
    echo "(the $which ladder failed: $out/ladder-$which.log)"
  python3 -c "import time; print(f'{time.time() - $t0:.1f}')" >"$out/ladder-$which.s"
  sleep 1  # the stamping loop's last lines
done
while ((n < ${RUNS:-3})); do baseline $((++n)); done
echo "Baseline runs: ${base[*]} s ($out)"

python3 - "$out" "${base[@]}" <<'PY'
import re, statistics, sys
out, base = sys.argv[1], statistics.median(float(b) for b in sys.argv[2:])
def steps(which):
    t0, marks = float(open(f"{out}/ladder-{which}.t0").read()), []
    for line in open(f"{out}/ladder-{which}.log", encoding="utf-8", errors="replace"):
        t, _, text = line.rstrip("\n").partition("\t")
        t = float(t) - t0
        m = re.match(r"\[(\d+)/\d+\] (.*?): by parts ->", text) or re.match(r"\[(\d+)/\d+\] (.*?) ->", text)
        if m: marks.append((float(t), m.group(2)))
    return marks
def kept(txt):
    # The answer: the paragraph the ladder prints first (to its first blank line), on one line.
    words = []
    for line in open(txt, encoding="utf-8", errors="replace"):
        if not line.strip(): break
        words.append(line.strip())
    return " ".join(words) or "–"
print(f"\nOne baseline run (median): {base:.2f} s\n")
print("| ladder | wall s | in baseline runs | answer |")
print("|---|---|---|---|")
for which, name in (("new", "new experiment (its reference runs made)"), ("again", "reference runs already there")):
    s = float(open(f"{out}/ladder-{which}.s").read())
    print(f"| {name} | {s:.1f} | {s / base:.1f} | {kept(f'{out}/ladder-{which}.txt')} |")
for which in ("new", "again"):
    marks, end = steps(which), float(open(f"{out}/ladder-{which}.s").read())
    if not marks: continue
    print(f"\nSteps, {which} ({marks[0][0]:.1f} s before the first):")
    print("| step | s | in baseline runs |")
    print("|---|---|---|")
    for (t, name), nxt in zip(marks, [m[0] for m in marks[1:]] + [end]):
        print(f"| {name} | {nxt - t:.1f} | {(nxt - t) / base:.1f} |")
PY
