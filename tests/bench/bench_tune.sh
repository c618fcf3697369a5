#!/usr/bin/env bash
# What the search buys, as a user runs it: for each model on a PNG folder (Fashion-MNIST exported
# as images), the ladder (greedy) and `tune`, then the default config against the ladder's
# kept.json and against tune's best.json as `try` pairs: each one's time to the target with its
# interval, plus what each search cost. Never asserts.
#
#   bash tests/bench/bench_tune.sh [MODELS="lenet mnist-cnn resnet18"] [CLI=build/app/cli/workbench-cli]
# Sizes: LIMIT_TRAIN (default 6000 images), EPOCHS (2), BUDGET (tune's, 10m), PAIRS (try's --max-pairs, 3),
# RESNET_SIZE (resnet18's data.image_size, 32); SEARCHES ("ladder tune", or one of them).
set -euo pipefail
models=${1:-lenet mnist-cnn resnet18}
cli=${2:-build/app/cli/workbench-cli}
limit=${LIMIT_TRAIN:-6000}
epochs=${EPOCHS:-2}
budget=${BUDGET:-10m}
pairs=${PAIRS:-3}
out=$(mktemp -d /tmp/bench-tune.XXXXXX)
"$cli" dataset export --dataset fashion-mnist --format png --to "folder:$out/png" --limit "$((limit + 2000))" >/dev/null 2>&1
sets=(--set "data.dataset=folder:$out/png" --set "data.limit_train=$limit" --set "train.epochs=$epochs")
printf '%-10s %-10s %-46s %-10s %s\n' model config "time to target vs default [interval]" "search" "what"
for m in $models; do
  d="$out/$m"
  mkdir -p "$d"
  s=("${sets[@]}" --set "model.name=$m")
  [ "$m" = resnet18 ] && s+=(--set "data.image_size=${RESNET_SIZE:-32}")
  searches=${SEARCHES:-ladder tune}
  t0=$(date +%s)
  [[ $searches == *ladder* ]] && { "$cli" ladder --out "$d/ladder" --max-pairs 2 "${s[@]}" >"$d/ladder.log" 2>&1 || true; }
  t1=$(date +%s)
  [[ $searches == *tune* ]] && { "$cli" tune --out "$d/tune" --budget "$budget" "${s[@]}" >"$d/tune.log" 2>&1 || true; }
  t2=$(date +%s)
  picks=()
  [[ $searches == *ladder* ]] && picks+=(ladder/kept.json)
  [[ $searches == *tune* ]] && picks+=(tune/best.json)
  for pick in "${picks[@]}"; do
    [ -f "$d/$pick" ] || { printf '%-10s %-10s %s\n' "$m" "${pick%%/*}" "no pick (see $d/${pick%%/*}.log)"; continue; }
    "$cli" try --out "$d/try-${pick%%/*}" --variant-config "$d/$pick" --max-pairs "$pairs" --json "${s[@]}" >"$d/try-${pick%%/*}.json" 2>/dev/null || true
    [ "${pick%%/*}" = ladder ] && cost=$((t1 - t0)) || cost=$((t2 - t1))
    python3 - "$d/try-${pick%%/*}.json" "$m" "${pick%%/*}" "$cost" "$d/$pick" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
e = doc.get("estimate", {}).get("to_target", {})
iv = f" [{e['lo']:.2f}, {e['hi']:.2f}]" if e.get("lo") is not None else ""
text = f"{e['point']:.2f}x{iv} {e.get('verdict','')}" if e.get("point") is not None else "not reached"
name = json.load(open(sys.argv[5])).get("name", "")
print(f"{sys.argv[2]:<10} {sys.argv[3]:<10} {text:<46} {int(sys.argv[4])//60}m{int(sys.argv[4])%60:02d}s  {name}")
PY
  done
done
echo "runs in $out"
