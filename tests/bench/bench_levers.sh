#!/usr/bin/env bash
# The levers past the recipe's six, each measured as users run them: one `workbench-cli try` per
# lever, whole `workbench-cli run` processes in interleaved pairs (baseline, variant), each with
# the ratio's interval and verdict on time to the target accuracy, training throughput and wall
# time. Never asserts; prints each try's table.
#
#   bash tests/bench/bench_levers.sh [CLI=build/app/cli/workbench-cli]
#
#   decoded cache   lenet and resnet18 on a PNG and on a JPEG folder exported from Fashion-MNIST
#                   (28 px, no resize: data.image_size set would also turn on random-resized crops),
#                   3 epochs: memory vs off
#   channels-last   mnist-cnn and resnet18 on Fashion-MNIST
#   fused steps     mnist-cnn and resnet18 (sgd with momentum), and adamw on mnist-cnn
#   accumulation    lenet under devices 2 (CPU processes over Gloo): 4 micro-batches of 16 vs
#                   batches of 64 (the same effective batch: what accumulation saves is the
#                   all-reduces of the other three)
# Sizes: PAIRS (3), LIMIT (images per folder and Fashion-MNIST run: 3000; resnet18 trains on 1/12 of it
# for the cache and 1/6 for the others: about 30 images/s on one thread), THREADS (1 per process),
# ONLY (a space-separated subset of: cache channels_last fused accumulation), SKIP_LENET=1 (the cache's
# resnet18 tries only).
set -euo pipefail
cli=${1:-build/app/cli/workbench-cli}
out=$(mktemp -d /tmp/bench-levers.XXXXXX)
pairs=${PAIRS:-3}
limit=${LIMIT:-3000}
threads=${THREADS:-1}
only=" ${ONLY:-cache channels_last fused accumulation} "

# One try; $1 names it, $2 the folder, the rest are try's options.
try_one() {
  local name=$1 dir=$2
  shift 2
  echo
  echo "== $name ($pairs pairs) -> $out/$dir"
  if ! "$cli" try --out "$out/$dir" --repeats "$pairs" --set "train.threads=$threads" "$@" 2>"$out/$dir.log"; then
    echo "(failed: the last lines of $out/$dir.log)"
    tail -5 "$out/$dir.log"
  fi
}

if [[ $only == *" cache "* ]]; then
  # resnet18 (about 30 images/s on one thread) gets folders of its own, LIMIT / 12 images a split:
  # a folder lists its images class by class, so data.limit_* would keep the first classes only.
  for format in png jpg; do
    "$cli" dataset export --to "folder:$out/$format" --format "$format" --limit "$limit" >/dev/null
    "$cli" dataset export --to "folder:$out/$format-small" --format "$format" --limit $((limit / 12)) >/dev/null
  done
  for format in png jpg; do
    [[ -n ${SKIP_LENET:-} ]] || try_one "decoded cache, lenet, $format folder, 3 epochs" "cache-lenet-$format" --speedup decoded_cache \
      --set "data.dataset=folder:$out/$format" --set train.epochs=3 --vary speedups.decoded_cache=memory
    try_one "decoded cache, resnet18, $format folder, 3 epochs" "cache-resnet18-$format" --speedup decoded_cache \
      --set "data.dataset=folder:$out/$format-small" --set model.name=resnet18 --set train.epochs=3 \
      --vary speedups.decoded_cache=memory
  done
fi

if [[ $only == *" channels_last "* ]]; then
  try_one "channels-last, mnist-cnn" "cl-mnist-cnn" --speedup channels_last --set model.name=mnist-cnn \
    --set "data.limit_train=$limit" --set data.limit_val=1000 --vary speedups.channels_last=true
  try_one "channels-last, resnet18 (Fashion-MNIST at 32 px)" "cl-resnet18" --speedup channels_last --set model.name=resnet18 \
    --set data.image_size=32 --set data.limit_train=$((limit / 6)) --set data.limit_val=250 --vary speedups.channels_last=true
fi

if [[ $only == *" fused "* ]]; then
  try_one "multi-tensor step, mnist-cnn, sgd" "fused-mnist-cnn" --speedup fused_optimizer --set model.name=mnist-cnn \
    --set "data.limit_train=$limit" --set data.limit_val=1000 --vary speedups.fused_optimizer=true
  try_one "multi-tensor step, mnist-cnn, adamw" "fused-mnist-cnn-adamw" --speedup fused_optimizer --set model.name=mnist-cnn \
    --set optim.name=adamw --set optim.lr=0.001 --set "data.limit_train=$limit" --set data.limit_val=1000 \
    --vary speedups.fused_optimizer=true
  try_one "multi-tensor step, resnet18 (32 px), sgd" "fused-resnet18" --speedup fused_optimizer --set model.name=resnet18 \
    --set data.image_size=32 --set data.limit_train=$((limit / 6)) --set data.limit_val=250 --vary speedups.fused_optimizer=true
fi

if [[ $only == *" accumulation "* ]]; then
  try_one "accumulation 4 x 16 vs batches of 64, lenet, devices 2" "accumulate-lenet" --speedup grad_accumulation \
    --set speedups.devices=2 --set "data.limit_train=$((limit * 4))" --set data.limit_val=1000 --set train.batch_size=64 \
    --vary speedups.grad_accumulation=4 --vary train.batch_size=16
fi
echo
echo "(every try's pairs.json, runs and logs: $out)"
