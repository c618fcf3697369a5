#!/usr/bin/env bash
# What every process the workbench starts pays before it trains: the time from a command's start
# (this script's clock just before it starts it) to the end of its first training step, as whole
# processes, interleaved round by round (version, plain, run warm and cold, worker, segments, the
# runs an experiment launches cold and warm; then in the other order...), so each
# command meets the host as the others found it. Prints min / median / max per command and, per
# round, its ratio to the plain LibTorch program (plain_start: LibTorch alone, one step on a random
# batch). Then where the time goes, once: the libraries loaded, the dynamic linker's own figures
# (LD_DEBUG=statistics) and, where perf works, which libraries the start's CPU time is spent in.
# Never asserts.
#
#   bash tests/bench/bench_startup.sh [CLI=build/app/cli/workbench-cli] [PLAIN=build/tests/bench/plain_start]
#
# Sizes: ROUNDS (5), LIMIT (training images a run reads, 1280), THREADS (intra-op threads, 1).
# The measures: `--version` and plain_start: the process's wall time, and plain_start's main
# entry (what loading and LibTorch's static initialisers took); `run` and `worker`: summary.json's
# first_step_unix (the trainer's clock when rank 0's first step ended); `probe segments`: the
# moment its "warming up both" line arrives on stderr (its data and model open, its first step
# about to start: a floor on its time to the first step); a run an experiment launches (`noise
# --runs 2`): its summary's time_to_first_step_s, from its launch (cold: WB_WARM_STARTS=0).
set -euo pipefail
cli=${1:-build/app/cli/workbench-cli}
plain=${2:-build/tests/bench/plain_start}
out=$(mktemp -d /tmp/bench-startup.XXXXXX)
threads=${THREADS:-1}
common=(--set model.name=lenet --set train.epochs=1 --set "data.limit_train=${LIMIT:-1280}" --set data.limit_val=256
        --set "train.threads=$threads")

# Each line of stdin with the time it came (bash's own clock: no process started per line).
stamped() {
  while IFS= read -r line; do printf '%s\t%s\n' "$EPOCHREALTIME" "$line"; done
}
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], 'nan'))" "$1" "$2"; }

# Each measure appends "name round seconds-to-first-step wall-seconds" to $out/times.
record() { echo "$1 $2 $3 $4" >>"$out/times"; }

version() {
  local t0=$EPOCHREALTIME
  "$cli" --version >/dev/null
  local t1=$EPOCHREALTIME
  record version "$1" nan "$(python3 -c "print($t1 - $t0)")"
}
plain_() {
  local t0=$EPOCHREALTIME
  "$plain" --threads "$threads" >"$out/plain-$1.json"
  local t1=$EPOCHREALTIME
  python3 - "$out/plain-$1.json" "$t0" "$t1" "$1" >>"$out/times" <<'PY'
import json, sys
d, t0, t1 = json.load(open(sys.argv[1])), float(sys.argv[2]), float(sys.argv[3])
print(f"plain {sys.argv[4]} {d['first_step_unix'] - t0} {t1 - t0}")
print(f"plain-main {sys.argv[4]} {d['main_unix'] - t0} nan")
PY
}
# `run` as the window and a user start it (its rank warm), and with WB_WARM_STARTS=0 (exec'd, as
# before runs started warm).
runAs() {
  local name=$1 dir=$out/$1-$2 t0=$EPOCHREALTIME
  WB_WARM_STARTS=$([[ $name == run ]] && echo 1 || echo 0) \
    "$cli" run "${common[@]}" --run-dir "$dir" >/dev/null 2>"$dir.log"
  local t1=$EPOCHREALTIME
  record "$name" "$2" "$(python3 -c "print($(field "$dir/summary.json" first_step_unix) - $t0)")" \
    "$(python3 -c "print($t1 - $t0)")"
}
run_() { runAs run "$1"; }
runcold() { runAs run-cold "$1"; }
worker() {
  local t0=$EPOCHREALTIME
  "$cli" worker --config "$out/config.json" --run-dir "$out/worker-$1" >/dev/null 2>"$out/worker-$1.log"
  local t1=$EPOCHREALTIME
  record worker "$1" "$(python3 -c "print($(field "$out/worker-$1/summary.json" first_step_unix) - $t0)")" \
    "$(python3 -c "print($t1 - $t0)")"
}
segments() {
  local t0=$EPOCHREALTIME
  "$cli" probe segments --config "$out/config.json" --vary speedups.channels_last=true --steps 5 --min-rounds 2 \
    --max-rounds 2 --json 2>&1 >/dev/null | stamped >"$out/segments-$1.log"
  local t1=$EPOCHREALTIME
  local at
  at=$(awk -F'\t' '/warming up both/ { print $1; exit }' "$out/segments-$1.log")
  record segments "$1" "$(python3 -c "print(${at:-nan} - $t0)")" "$(python3 -c "print($t1 - $t0)")"
}

# Runs an experiment launches (`noise --runs 2`, as a ladder's or a try's), started warm (forked
# from the process that loaded LibTorch once) or cold (WB_WARM_STARTS=0: exec'd): each run's
# summary time_to_first_step_s, from its launch to its first step's end.
launched() {
  local mode=$1 dir=$out/noise-$1-$2
  WB_WARM_STARTS=$([[ $mode == warm ]] && echo 1 || echo 0) WB_NOISE_DIR=$out/noise \
    "$cli" noise --runs 2 --no-store --out "$dir" "${common[@]}" >/dev/null 2>"$dir.log" || true  # 1: contended, no band
  for i in 1 2; do
    record "launched-$mode" "$2.$i" "$(field "$dir/aa-$i/summary.json" time_to_first_step_s)" \
      "$(field "$dir/aa-$i/summary.json" run_wall_s)"
  done
}
warm() { launched warm "$1"; }
cold() { launched cold "$1"; }

# One untimed run first: the caches, and the config the worker and the segments read.
"$cli" run "${common[@]}" --run-dir "$out/warm-up" >/dev/null 2>"$out/warm-up.log"
cp "$out/warm-up/config.json" "$out/config.json"
"$plain" >/dev/null
for ((r = 1; r <= ${ROUNDS:-5}; ++r)); do
  # A B A B: the order turns each round, so no command always follows the same one.
  if ((r % 2)); then order=(version plain_ run_ runcold worker segments cold warm)
  else order=(warm cold segments worker runcold run_ plain_ version); fi
  for m in "${order[@]}"; do "$m" "$r"; done
done

python3 - "$out/times" <<'PY'
import collections, math, statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
by = collections.defaultdict(dict)
for name, rnd, first, wall in rows: by[name][rnd] = (float(first), float(wall))
def mmm(xs):
    xs = [x for x in xs if math.isfinite(x)]
    return f"{min(xs):.3f} / {statistics.median(xs):.3f} / {max(xs):.3f}" if xs else "–"
names = [("plain-main", "plain LibTorch program: to main"), ("plain", "plain LibTorch program"),
         ("version", "workbench-cli --version"), ("run", "workbench-cli run"),
         ("run-cold", "workbench-cli run, its rank cold (WB_WARM_STARTS=0)"),
         ("worker", "workbench-cli worker"), ("segments", "probe segments (to its first step's start)"),
         ("launched-cold", "a run an experiment launches, cold"), ("launched-warm", "a run an experiment launches, warm")]
print("\nStart to the end of the first training step, seconds (min / median / max);")
print("ratio: per round against the plain program's start to its first step (median, min-max)\n")
print("| command | to first step s | wall s | ratio to plain |")
print("|---|---|---|---|")
for key, label in names:
    if key not in by: continue
    rounds = by[key]
    first = [v[0] for v in rounds.values()]
    wall = [v[1] for v in rounds.values()]
    metric = first if any(math.isfinite(x) for x in first) else wall
    plain = lambda r: by["plain"].get(r.split(".")[0])
    ratios = [metric[i] / plain(r)[0] for i, r in enumerate(rounds) if plain(r) and math.isfinite(metric[i])]
    ratio = f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})" if ratios else "–"
    print(f"| {label} | {mmm(first)} | {mmm(wall)} | {ratio} |")
PY

echo
echo "Where the time goes (once, not interleaved):"
torch_cpu=$(ldd "$cli" | awk '/libtorch_cpu/ { print $3 }')
echo "  libraries loaded: workbench-cli $(ldd "$cli" | wc -l), plain_start $(ldd "$plain" | wc -l);" \
  "libtorch_cpu needs $(readelf -d "$torch_cpu" | grep -c NEEDED) directly"
for who in "$cli --version" "$plain --threads $threads"; do
  echo "  dynamic linker, $who:"
  # shellcheck disable=SC2086
  LD_DEBUG=statistics $who 2>&1 >/dev/null | grep -E 'total startup time|time needed for relocation|number of relocations:|final number of' |
    sed -E 's/^ *[0-9]+: *//; s/^/    /' | head -6
done
if perf record -q -o "$out/perf.data" -F 4999 -- "$cli" --version >/dev/null 2>&1; then
  echo "  perf, workbench-cli --version: CPU samples by library (top 8) and symbol (top 12)"
  perf report -i "$out/perf.data" --no-children --sort dso --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -8 | sed 's/^/   /'
  perf report -i "$out/perf.data" --no-children --sort dso,sym --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -12 |
    cut -c1-110 | sed 's/^/   /'
else
  echo "  perf: cannot record here"
fi
echo "($out)"
