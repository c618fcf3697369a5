#!/usr/bin/env bash
# The workbench's core and a PyTorch Lightning script on the same work, side by side as one `try`:
# the baseline is `workbench-cli run` of lenet on Fashion-MNIST, the variant the same lenet, data,
# optimiser and batch trained by Lightning with the workbench's callback (tests/bench/lenet_lightning.py,
# handed the baseline's settings through its placeholders), in interleaved pairs with the interval and
# verdict on time to the target accuracy, training throughput and wall time. Then what the recorder
# and the callback cost per step (tests/bench/bench_recorder.py). Needs Lightning: run it where it
# imports (packaging/torch2-check.sh --lightning --bench). Never asserts.
#
#   bash tests/bench/bench_lightning.sh [CLI=build/app/cli/workbench-cli]
# SKIP_COSTS=1: the try only.
# Sizes: LIMIT_TRAIN (default 12000 images), LIMIT_VAL (2000), EPOCHS (2), PAIRS (4), THREADS (1);
# TARGET (the try's --target-acc; default the baseline's best less its chance spread: the two pipelines
# seed their weights and data order differently, so one may end a point short of the other's best).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
cli=${1:-build/app/cli/workbench-cli}
out=$(mktemp -d /tmp/bench-lightning.XXXXXX)
export PYTHONPATH="$src/app/python${PYTHONPATH:+:$PYTHONPATH}"
if ! python3 -c "import lightning.pytorch" 2>/dev/null && ! python3 -c "import pytorch_lightning" 2>/dev/null; then
  echo "bench_lightning: Lightning does not import here (packaging/torch2-check.sh --lightning --bench runs this with it)" >&2
  exit 2
fi
script="python3 $src/tests/bench/lenet_lightning.py {run_dir} --epochs {train.epochs} --limit-train {data.limit_train}"
script+=" --limit-val {data.limit_val} --batch-size {train.batch_size} --lr {optim.lr} --workers {workers}"
script+=" --precision {precision} --threads {train.threads} --seed {seed}"
echo "== workbench-cli run vs the same lenet in Lightning (one try, ${PAIRS:-4} pairs) -> $out/try"
"$cli" try --out "$out/try" --repeats "${PAIRS:-4}" --label "the same lenet in Lightning" \
  --set "data.limit_train=${LIMIT_TRAIN:-12000}" --set "data.limit_val=${LIMIT_VAL:-2000}" \
  --set "train.epochs=${EPOCHS:-2}" --set "train.threads=${THREADS:-1}" \
  ${TARGET:+--target-acc "$TARGET"} --variant-command "$script" 2>"$out/try.log" || { tail -20 "$out/try.log"; exit 1; }
[ -n "${SKIP_COSTS:-}" ] && exit 0
echo
echo "== what the recorder and the callback cost per step"
python3 "$src/tests/bench/bench_recorder.py" --steps 20000 --repeats 5
python3 "$src/tests/bench/bench_recorder.py" --lightning --steps 3000 --repeats 5 2>/dev/null
