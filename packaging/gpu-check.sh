#!/usr/bin/env bash
# The one prepared check for a lent GPU machine: one H200, PyTorch 2.11 with its bundled LibTorch and
# CUDA 13, the CUDA toolkit in /usr/local/cuda (nvcc, cuDNN, NCCL), Lightning; no Qt, no OpenCV,
# nlohmann or CLI11 headers, no dataset and no registry: .gpu-carry/ (made HERE by
# packaging/gpu-carry.sh) brings those. Budget: 8 minutes start to end (the machine allows 10 a
# command, and its start-up counts too). Each phase runs under its own limit, and only while the
# budget still has room for it:
#   phase                                                                   limit
#   1. preflight: torch sees CUDA; nvcc found and of torch.version.cuda's     30 s  (stops in seconds,
#      major version; the toolkit's headers, nccl.h; cmake, ninja, g++                naming what is missing)
#   2. .gpu-carry unpacked beside the system (dpkg -x, never over it)          30 s
#   3. configure, then build workbench-cli + the gpu tests only               60 + 240 s
#      (-DWB_BUILD_GUI=OFF with the carried Qt Core + Test; -DWB_CORE_ONLY=ON, core + CLI alone, if that
#      Qt does not configure: the gpu tests are then not built)
#   4. ctest -L gpu: pinned side-stream copies, fp16 scaler, NCCL, allocator figures   60 s
#   5. data: the carried Fashion-MNIST slice as 32x32 PNGs (dataset export)      30 s
#   6. the ladder on resnet18: the GPU steps (pin_memory, precision) and the levers a GPU measures
#      (cudnn_benchmark, tf32, channels_last, fused_optimizer), $STEPS steps a rung              90 s
#   7. the same workload as a workbench run, plain PyTorch, and Lightning (only if it imports)  3 x 40 s
# If the build is slow, the phases after it are left out from the end back: Lightning, plain PyTorch,
# the workbench run, then the ladder; the gpu tests are the last to go. results.md names each phase
# left out and why; a phase that ran out of its own time is cut there and the rest goes on.
#   8 (after 7, only with budget left): how far from the limit: `probe peak` right after the build, then
#      lenet, mnist-cnn and resnet18 on the PNGs: FLOPs per step, GFLOP/s, % of measured and datasheet peak
# Writes one results folder: $OUT when set (the device tool's), else gpu-check-out/<time>/:
#   results.md (the tables), gpu-check.log, build.log, gpu-tests.log, ladder.md, ladder.json, env.txt
#
#   bash packaging/gpu-carry.sh                          # here, once (needs the Debian mirror)
#   bash packaging/gpu-check.sh [--steps N] [--dry-run]  # there, in the source root; carry .gpu-carry
# --dry-run (WB_GPU_DRY_RUN=1): on a machine without a GPU (packaging/torch2-check.sh --cuda's root):
# the preflight without the device check, the carried packages, configure; WB_GPU_DRY_BUILD=1 also
# builds and runs the gpu tests (which skip). Data, ladder and comparison need the GPU.
# WB_GPU_TIME_SCALE=N multiplies every limit and the budget (for a dry run on a slow, shared machine).
set -uo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
STEPS=150
DRY=${WB_GPU_DRY_RUN:-}
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) STEPS=$2; shift 2 ;;
    --dry-run) DRY=1; shift ;;
    *) echo "usage: $0 [--steps N] [--dry-run]" >&2; exit 2 ;;
  esac
done
RES=${OUT:-$SRC/gpu-check-out/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$RES"
exec > >(tee "$RES/gpu-check.log") 2>&1
T0=$(date +%s)
# WB_GPU_TIME_SCALE: every limit and the budget times this (a dry run on a slow, shared machine).
SCALE=${WB_GPU_TIME_SCALE:-1}
BUDGET=$(( ${WB_GPU_BUDGET_S:-480} * SCALE ))
log() { echo "gpu-check [$(( $(date +%s) - T0 ))s]: $*"; }
note() { echo -e "$*" >>"$RES/results.md"; }
fail() { log "FAILED: $*"; note "\n**gpu-check failed:** $*"; finish 1; }
finish() { log "done in $(( $(date +%s) - T0 )) s of ${BUDGET}; results in $RES"; cat "$RES/results.md"; exit "$1"; }
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
# room SECONDS NAME: true when the budget still has SECONDS for phase NAME, else notes it as left out.
room() {
  if [ "$(left)" -lt $(( $1 * SCALE )) ]; then
    log "left out: $2 (needs ${1} s, $(left) s of the budget left)"
    note "- left out for time: $2 (needs ${1} s, $(left) s left)"
    return 1
  fi
}
# phase SECONDS cmd...: cmd under a limit of SECONDS, or less when the budget has less left.
phase() {
  local s=$(( $1 * SCALE )); shift
  local l; l=$(left)
  [ "$s" -gt "$l" ] && s=$l
  [ "$s" -lt 1 ] && return 124
  timeout --kill-after=10 "$s" "$@"
}
note "# gpu-check $(date -u +%FT%TZ)\n"
note "budget ${BUDGET} s; steps per rung ${STEPS}${DRY:+; DRY RUN (no GPU: what the machine allows)}\n"

# ---- 1. preflight: fast and clear on a machine that cannot do this
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null || fail "no $PY on PATH"
probe_py='
import os, sys, torch
print("torch", torch.__version__)
print("torch_cuda", torch.version.cuda or "")
print("available", torch.cuda.is_available())
if torch.cuda.is_available():
    print("gpu", torch.cuda.get_device_name(0))
print("prefix", torch.utils.cmake_prefix_path)
print("site", os.path.dirname(os.path.dirname(torch.__file__)))
'
probe=$(phase 30 "$PY" -c "$probe_py" 2>&1) || fail "python3 cannot import torch: ${probe##*$'\n'}"
echo "$probe" | tee "$RES/env.txt"
get() { echo "$probe" | sed -n "s/^$1 //p"; }
TORCH_PREFIX=$(get prefix)
TORCH_CUDA=$(get torch_cuda)
[ -n "$TORCH_CUDA" ] || fail "this PyTorch ($(get torch)) has no CUDA (torch.version.cuda is None): install a CUDA build"
if [ "$(get available)" != True ]; then
  [ -n "$DRY" ] || fail "no CUDA device: torch.cuda.is_available() is False (a CPU machine, or no driver)"
  log "dry run: no CUDA device here; going on with what the machine allows"
fi
for tool in cmake ninja g++ dpkg; do command -v $tool >/dev/null || fail "no $tool on PATH"; done
NVCC=""
for c in "${CUDACXX:-}" "${CUDA_HOME:+$CUDA_HOME/bin/nvcc}" /usr/local/cuda/bin/nvcc "$(command -v nvcc || true)"; do
  [ -n "$c" ] && [ -x "$c" ] && { NVCC=$c; break; }
done
[ -n "$NVCC" ] || fail "no nvcc (looked at \$CUDACXX, \$CUDA_HOME/bin, /usr/local/cuda/bin, PATH): the CUDA LibTorch's CMake config needs the CUDA $TORCH_CUDA toolkit"
NVCC_VERSION=$("$NVCC" --version 2>/dev/null | sed -n 's/.*release \([0-9]*\.[0-9]*\).*/\1/p')
[ "${NVCC_VERSION%%.*}" = "${TORCH_CUDA%%.*}" ] \
  || fail "$NVCC is CUDA ${NVCC_VERSION:-?} but this PyTorch is built with CUDA $TORCH_CUDA: point CUDA_HOME at a CUDA ${TORCH_CUDA%%.*}.x toolkit"
CUDA_ROOT=$(cd "$(dirname "$NVCC")/.." && pwd)
ls "$CUDA_ROOT"/include/cuda_runtime_api.h "$CUDA_ROOT"/targets/*/include/cuda_runtime_api.h >/dev/null 2>&1 \
  || [ -f /usr/include/cuda_runtime_api.h ] || fail "the toolkit at $CUDA_ROOT has no cuda_runtime_api.h"
NCCL_H=$(ls "$(get site)"/nvidia/nccl/include/nccl.h "$CUDA_ROOT"/include/nccl.h /usr/include/nccl.h 2>/dev/null | head -1)
echo "nvcc $NVCC ($NVCC_VERSION); nccl.h ${NCCL_H:-not found}" | tee -a "$RES/env.txt"
[ -n "$NCCL_H" ] || log "no nccl.h: wb_parallel builds without NCCL and test_communicator_gpu will skip"
nvidia-smi -L >>"$RES/env.txt" 2>&1 || true
[ -d "$SRC/.gpu-carry" ] || fail "no .gpu-carry/ here: run packaging/gpu-carry.sh where the Debian mirror is, and carry .gpu-carry"
GPU=$(get gpu)
note "- torch $(get torch), CUDA $TORCH_CUDA, nvcc $NVCC_VERSION${GPU:+, $GPU}${NCCL_H:+, nccl.h found}"

# ---- 2. the carried packages, unpacked beside the system (never over it)
CARRY=/tmp/wb-gpu-carry
L=$CARRY/usr/lib/x86_64-linux-gnu
unpack() {
  rm -rf $CARRY && mkdir -p $CARRY/stubs
  for d in "$SRC"/.gpu-carry/*.deb; do dpkg -x "$d" $CARRY || return 1; done
  touch $CARRY/.ok
}
if [ ! -f $CARRY/.ok ]; then phase 30 bash -c "$(declare -f unpack); CARRY=$CARRY SRC=$SRC unpack" || fail "unpacking .gpu-carry failed"; fi
# Stand-ins only for what this machine lacks (a stand-in in front of a real library would shadow it).
for s in "$SRC"/.gpu-carry/stubs/*.so*; do
  n=$(basename "$s")
  ldconfig -p | grep -q "^\s*$n " || cp "$s" $CARRY/stubs/
done
export LD_LIBRARY_PATH=$L:$L/blas:$L/lapack:$CARRY/stubs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ln -sf libblas.so.3 $L/blas/libblas.so 2>/dev/null || true
mkdir -p $CARRY/cmake/opencv
cat >$CARRY/cmake/opencv/OpenCVConfig.cmake <<EOF
# core, imgproc and imgcodecs from the carried Debian packages (their own config lists every module)
set(OpenCV_VERSION 4.6.0)
set(OpenCV_INCLUDE_DIRS $CARRY/usr/include/opencv4)
set(OpenCV_LIBS)
foreach(m core imgproc imgcodecs)
  add_library(opencv_\${m} SHARED IMPORTED)
  set_target_properties(opencv_\${m} PROPERTIES IMPORTED_LOCATION $L/libopencv_\${m}.so.406
                        INTERFACE_INCLUDE_DIRECTORIES $CARRY/usr/include/opencv4)
  list(APPEND OpenCV_LIBS opencv_\${m})
endforeach()
set(OpenCV_FOUND TRUE)
EOF
for h in nlohmann/json.hpp CLI/CLI.hpp opencv4/opencv2/core.hpp; do
  [ -f "$CARRY/usr/include/$h" ] || fail "the carried packages lack $h: run packaging/gpu-carry.sh again"
done
missing=$(ldd $L/libopencv_imgcodecs.so.406 $L/libQt6Core.so.6 2>/dev/null | grep "not found" | sort -u | tr -s ' \t' ' ')
[ -n "$missing" ] && fail "libraries neither here nor carried: $missing (add their packages to packaging/gpu-carry.sh)"
log "carried libraries unpacked into $CARRY"

# ---- 3. build core + CLI + the gpu tests against this machine's LibTorch
B=$SRC/build-gpu
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}  # Hopper; spares LibTorch's CMake a device probe
cmake_args=(-S "$SRC" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWB_USE_CCACHE=OFF
  "-DCMAKE_PREFIX_PATH=$TORCH_PREFIX;$L/cmake;$CARRY/usr/share/cmake;$CARRY/usr/lib/cmake"
  -DCMAKE_CUDA_COMPILER="$NVCC" -DCUDAToolkit_ROOT="$CUDA_ROOT"
  -DOpenCV_DIR=$CARRY/cmake/opencv -Dnlohmann_json_DIR=$CARRY/usr/share/cmake/nlohmann_json
  -DCLI11_DIR=$CARRY/usr/share/cmake/CLI11
  -DQT_HOST_PATH=$CARRY/usr
  "-DCMAKE_EXE_LINKER_FLAGS=-Wl,--allow-shlib-undefined -Wl,-rpath-link,$L:$CARRY/stubs")
gpu_tests=$(cd "$SRC" && ls tests/core/*/test_*_gpu.cpp 2>/dev/null | xargs -n1 basename | sed 's/\.cpp$//' | tr '\n' ' ')
if phase 60 cmake -B "$B" "${cmake_args[@]}" -DWB_BUILD_GUI=OFF >"$RES/build.log" 2>&1 &&
   grep -q "tests=ON" "$RES/build.log"; then
  targets="workbench-cli $gpu_tests"
else
  log "Qt Core + Test did not configure (see build.log): core + CLI alone, the gpu tests are not built"
  note "- the carried Qt did not configure: core + CLI alone (-DWB_CORE_ONLY=ON), no gpu tests"
  rm -rf "$B"; phase 60 cmake -B "$B" "${cmake_args[@]}" -DWB_CORE_ONLY=ON >>"$RES/build.log" 2>&1 \
    || fail "cmake could not configure even core + CLI: $(grep -m3 -A6 'CMake Error' "$RES/build.log")"
  targets=workbench-cli gpu_tests=""
fi
grep -E "CUDA LibTorch|wb_parallel: NCCL|LibTorch=" "$RES/build.log" | sed 's/^-- //' | tee -a "$RES/env.txt"
grep -q "CUDA=ON" "$RES/build.log" || fail "configured without CUDA (WB_WITH_CUDA off): is torch.utils.cmake_prefix_path a CUDA LibTorch?"
if [ -n "$DRY" ] && [ -z "${WB_GPU_DRY_BUILD:-}" ]; then
  note "- configured ($(( $(date +%s) - T0 )) s from the start): would build $targets"
  note "\ndry run: stopped after configure (WB_GPU_DRY_BUILD=1 builds and runs the gpu tests too)"
  finish 0
fi
log "building $targets"
phase 240 cmake --build "$B" -j"$(nproc)" --target $targets >>"$RES/build.log" 2>&1
rc=$?
[ $rc -eq 124 ] && fail "the build ran past its limit ($(( 240 * SCALE )) s or what the budget had left): $(grep -c '^\[' "$RES/build.log") steps done (build.log)"
[ $rc -ne 0 ] && fail "build failed: $(grep -m5 -B2 -A6 'error' "$RES/build.log" | head -30)"
CLI=$B/app/cli/workbench-cli
log "built in $(( $(date +%s) - T0 )) s; $($CLI --version 2>&1 | head -1)"
note "- built: $targets ($(( $(date +%s) - T0 )) s from the start)"
# This machine's peak, before any run, into a scratch store: every run below reports % of it.
export WB_PROBES_DIR=/tmp/wb-gpu-probes
phase 60 $CLI probe peak --seconds 0.5 >"$RES/peak.txt" 2>&1 || log "probe peak failed: $(tail -3 "$RES/peak.txt")"

# ---- 4. the gpu-labelled tests
if [ -n "$gpu_tests" ] && room 20 "gpu tests (ctest -L gpu)"; then
  note "\n## gpu-labelled tests"
  (cd "$B" && phase 60 ctest -L gpu --output-on-failure --timeout 50) >"$RES/gpu-tests.log" 2>&1 && r=passed || r=FAILED
  note "ctest -L gpu: $r — $(grep -E 'tests passed|tests failed' "$RES/gpu-tests.log" | tail -1)"
  grep -E "^(PASS|FAIL!|SKIP) |wb-test:" "$RES/gpu-tests.log" | sed 's/^/    /' >>"$RES/results.md" || true
fi
[ -n "$DRY" ] && { note "\ndry run: no GPU, so no data, ladder or comparison (they train on the GPU)"; finish 0; }

# ---- 5. data: the carried Fashion-MNIST slice (gpu-carry.sh) as 32x32 PNGs
DATA=/tmp/wb-gpu-fmnist32
if [ ! -f $DATA/.ok ] && room 20 "data (dataset export)"; then
  rm -rf $DATA
  phase 30 $CLI dataset export --dataset "idx:$SRC/.gpu-carry/fashion-mnist" --to folder:$DATA --format png --size 32 \
    >/tmp/wb-gpu-export.txt 2>&1 && touch $DATA/.ok || log "dataset export failed: $(tail -3 /tmp/wb-gpu-export.txt)"
fi
[ -f $DATA/.ok ] || { note "- no data (see gpu-check.log): no ladder or comparison"; finish 1; }
log "data: $($CLI dataset inspect folder:$DATA 2>&1 | grep -E 'train:|test:' | tr -s ' ' | tr '\n' ';')"

# ---- 6. the ladder on resnet18: the steps only a GPU has, and the levers it measures
W=(--set model.name=resnet18 --set data.dataset=folder:$DATA --set data.image_size=32 --set train.batch_size=128
   --set train.max_steps=$STEPS --set data.limit_val=2000 --set train.log_every=50)
LADDER_STEPS=pin_memory,precision,cudnn_benchmark,tf32,channels_last,fused_optimizer
if room 45 "ladder ($LADDER_STEPS)"; then
  rm -rf /tmp/wb-gpu-ladder
  phase 90 $CLI ladder --out /tmp/wb-gpu-ladder "${W[@]}" --steps $LADDER_STEPS \
    >/tmp/wb-gpu-ladder.txt 2>&1 || log "the ladder did not finish (what it measured is kept)"
  cp /tmp/wb-gpu-ladder/ladder.md /tmp/wb-gpu-ladder/ladder.json "$RES/" 2>/dev/null || true
  note "\n## ladder: resnet18, 32x32 PNGs, $STEPS steps per rung"
  cat /tmp/wb-gpu-ladder/ladder.md >>"$RES/results.md" 2>/dev/null || tail -20 /tmp/wb-gpu-ladder.txt >>"$RES/results.md"
fi

# ---- 7. workbench vs plain PyTorch vs Lightning, same workload (workers 4, pinned, fp16 autocast)
wb='{}' py='{}' lt='{}'
if room 25 "workbench run (side by side)"; then
  rm -rf /tmp/wb-gpu-run
  s=$(date +%s%N)
  phase 40 $CLI run --run-dir /tmp/wb-gpu-run "${W[@]}" --set speedups.workers=4 --set speedups.pin_memory=true \
    --set speedups.precision=16-mixed >/tmp/wb-gpu-run.txt 2>&1 || log "the workbench run failed: $(tail -3 /tmp/wb-gpu-run.txt)"
  wb_wall=$(( ($(date +%s%N) - s) / 1000000 ))e-3
  wb=$("$PY" -c "import json; s=json.load(open('/tmp/wb-gpu-run/summary.json')); print(json.dumps({'train_samples_per_s':s['train_samples_per_s'],'val_acc':s.get('final_val_acc'),'process_s':$wb_wall}))" 2>/dev/null || echo '{}')
fi
if "$PY" -c "import torchvision" 2>/dev/null; then
  if room 25 "plain PyTorch (side by side)"; then
    py=$(phase 40 "$PY" "$SRC/tests/bench/gpu_plain_torch.py" --data $DATA --steps "$STEPS" 2>/tmp/wb-gpu-plain.txt | tail -1)
  fi
  if ! "$PY" -c "import lightning.pytorch" 2>/dev/null && ! "$PY" -c "import pytorch_lightning" 2>/dev/null; then
    note "- left out: Lightning (neither lightning nor pytorch_lightning imports)"
  elif room 30 "PyTorch Lightning (side by side)"; then
    lt=$(phase 40 "$PY" "$SRC/tests/bench/gpu_lightning.py" --data $DATA --steps "$STEPS" 2>/tmp/wb-gpu-lightning.txt | tail -1)
  fi
else
  note "- left out: plain PyTorch and Lightning (torchvision does not import)"
fi
"$PY" - "$wb" "${py:-}" "${lt:-}" >>"$RES/results.md" <<'PY'
import json, sys
def parse(a):
    try:
        return json.loads(a or "{}")
    except ValueError:
        return {}
rows = [parse(a) for a in sys.argv[1:4]]
names = ["workbench", "plain PyTorch", "PyTorch Lightning"]
print("\n## same workload: resnet18, batch 128, 4 loader workers, pinned memory, fp16 autocast + scaler")
print("train samples/s: training steps only (the scripts leave out their first 20 steps; the workbench its warm-up)")
print("process s: the whole process, start to exit (evaluation of 2,000 images included)\n")
print("| who | train samples/s | vs workbench | process s | val acc |\n|---|---|---|---|---|")
base = rows[0].get("train_samples_per_s")
for n, r in zip(names, rows):
    sps = r.get("train_samples_per_s")
    if sps is None:
        print(f"| {n} | not run or failed (see gpu-check.log) | | | |")
        continue
    ratio = f"{sps / base:.2f}" if base else "n/a"
    print(f"| {n} | {sps:.0f} | {ratio} | {r.get('process_s', float('nan')):.1f} | {r.get('val_acc') or float('nan'):.3f} |")
PY
tail -5 /tmp/wb-gpu-plain.txt /tmp/wb-gpu-lightning.txt 2>/dev/null | sed 's/^/    /' >>"$RES/gpu-check.log" || true

# ---- 8. how far from the limit (tests/bench/bench_flops' table, for this GPU)
{ echo; echo "## peak of this machine (workbench-cli probe peak)"; echo '```'; cat "$RES/peak.txt"; echo '```'; } >>"$RES/results.md"
for m in lenet mnist-cnn resnet18; do
  rm -rf /tmp/wb-gpu-flops-$m
  phase 60 $CLI run --run-dir /tmp/wb-gpu-flops-$m --set model.name=$m --set data.dataset=folder:$DATA \
    --set data.image_size=32 --set train.batch_size=128 --set train.max_steps=200 --set data.limit_val=512 \
    --set speedups.workers=4 --set speedups.pin_memory=true >/dev/null 2>&1 || log "the $m flops run failed"
done
"$PY" - >>"$RES/results.md" <<'PY'
import json
print("\n## how far from the limit: 32x32 PNGs, batch 128, 200 steps, workers 4, pinned, fp32 (TF32 peak)")
print("1 multiply-add = 2 FLOPs; training step = 3 x forward; compute-only: the same step on a batch in memory\n")
print("| net | GFLOP/step | step ms | compute-only ms | GFLOP/s | % of measured peak | % of datasheet | data path |")
print("|---|---|---|---|---|---|---|---|")
notes = set()
for m in ["lenet", "mnist-cnn", "resnet18"]:
    try:
        f = json.load(open(f"/tmp/wb-gpu-flops-{m}/summary.json"))["flops"]
    except Exception:
        print(f"| {m} | failed (see gpu-check.log) | | | | | | |")
        continue
    pct = lambda k: f"{f[k]:.2f} %" if k in f else "–"
    share = f"{100 * f['data_path_share']:.1f} %" if "data_path_share" in f else "–"
    print(f"| {m} | {f['per_step'] / 1e9:.3f} | {f.get('step_ms', float('nan')):.2f} | "
          f"{f.get('compute_only_step_ms', float('nan')):.2f} | {f['achieved_gflop_per_s']:.0f} | "
          f"{pct('pct_of_peak')} | {pct('pct_of_datasheet')} | {share} |")
    for k in ("peak", "datasheet"):
        if k in f: notes.add(f"{k}: {f[k]['what']} = {f[k]['gflop_per_s']:.0f} GFLOP/s")
    for k in ("no_peak", "no_datasheet"):
        if k in f: notes.add(f[k])
for n in sorted(notes): print(f"\n- {n}")
PY
finish 0
