#!/usr/bin/env bash
# The one prepared check for a lent GPU machine (PyTorch 2.x with its bundled LibTorch and CUDA, no Qt,
# no OpenCV or nlohmann headers, no registry), within 12 minutes:
#   1. preflight: python3's torch sees CUDA (else it stops at once, naming what is missing)
#   2. unpacks .gpu-carry/ (made HERE first by packaging/gpu-carry.sh) with dpkg -x into a scratch root
#   3. builds workbench-cli against the machine's own LibTorch (torch.utils.cmake_prefix_path), plus
#      the gpu-labelled tests when the carried Qt Core + Test configure (else -DWB_CORE_ONLY=ON alone)
#   4. runs the gpu-labelled tests (pinned copies, fp16 scaler with a real overflow, NCCL, memory stats)
#   5. writes CIFAR-10-sized data (32x32 PNGs, 50,000 train / 10,000 test) with `dataset export`
#   6. the ladder on resnet18 there, --steps a few hundred steps per rung
#   7. the same workload as a workbench run, plain PyTorch (tests/bench/gpu_plain_torch.py) and
#      PyTorch Lightning (tests/bench/gpu_lightning.py), one after the other, as a table of ratios
#   8. how far from the limit: the peak measured after the build (`probe peak`, so every run above
#      reports % of it and of the GPU's datasheet peak), then lenet, mnist-cnn and resnet18 on the
#      PNGs: FLOPs per step, achieved GFLOP/s, % of measured and datasheet peak, compute-only step
# Writes one results folder: $OUT when set (the device tool's), else gpu-check-out/<time>/:
#   results.md (the tables), gpu-check.log, gpu-tests.log, ladder.md, ladder.json, env.txt
#
#   bash packaging/gpu-carry.sh            # here, once (needs the Debian mirror)
#   bash packaging/gpu-check.sh [--steps N] # there, in the source root; carry .gpu-carry
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
STEPS=300
[ "${1:-}" = "--steps" ] && STEPS=$2
RES=${OUT:-$SRC/gpu-check-out/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$RES"
exec > >(tee "$RES/gpu-check.log") 2>&1
T0=$(date +%s)
BUDGET=${WB_GPU_BUDGET_S:-720}
log() { echo "gpu-check [$(( $(date +%s) - T0 ))s]: $*"; }
fail() { log "FAILED: $*"; echo -e "\n**gpu-check failed:** $*" >>"$RES/results.md"; exit 1; }
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
phase() { # seconds cmd...: runs cmd with what is left of the budget, at most `seconds`
  local s=$1; shift
  local l; l=$(left)
  [ "$l" -lt 20 ] && fail "out of time (12 min budget) before: $*"
  [ "$s" -gt "$l" ] && s=$l
  timeout --kill-after=10 "$s" "$@"
}
echo "# gpu-check $(date -u +%FT%TZ)" >"$RES/results.md"

# ---- 1. preflight: fast and clear without CUDA
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null || fail "no $PY on PATH"
probe_py='
import torch, sys
print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())
if not torch.cuda.is_available():
    sys.exit("no CUDA device: torch.cuda.is_available() is False (a CPU machine, or no driver)")
print("gpu", torch.cuda.get_device_name(0))
print("prefix", torch.utils.cmake_prefix_path)
'
probe=$(timeout 60 "$PY" -c "$probe_py" 2>&1) || fail "python3 cannot train on a GPU here: ${probe##*$'\n'}"
echo "$probe" | tee "$RES/env.txt"
TORCH_PREFIX=$(echo "$probe" | sed -n 's/^prefix //p')
for tool in cmake ninja g++ dpkg; do command -v $tool >/dev/null || fail "no $tool on PATH"; done
nvidia-smi -L >>"$RES/env.txt" 2>&1 || true
[ -d "$SRC/.gpu-carry" ] || fail "no .gpu-carry/ here: run packaging/gpu-carry.sh where the Debian mirror is, and carry .gpu-carry"

# ---- 2. the carried packages, unpacked beside the system (never over it)
CARRY=/tmp/wb-gpu-carry
L=$CARRY/usr/lib/x86_64-linux-gnu
if [ ! -f $CARRY/.ok ]; then
  rm -rf $CARRY && mkdir -p $CARRY/stubs
  for d in "$SRC"/.gpu-carry/*.deb; do dpkg -x "$d" $CARRY; done
  touch $CARRY/.ok
fi
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
missing=$(ldd $L/libopencv_imgcodecs.so.406 $L/libQt6Core.so.6 2>/dev/null | grep "not found" | sort -u | tr -s ' \t' ' ')
[ -n "$missing" ] && fail "libraries neither here nor carried: $missing (add their packages to packaging/gpu-carry.sh)"
log "carried libraries unpacked into $CARRY"

# ---- 3. build against this machine's LibTorch
B=$SRC/build-gpu
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}  # Hopper; spares LibTorch's CMake a device probe
cmake_args=(-S "$SRC" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWB_USE_CCACHE=OFF
  "-DCMAKE_PREFIX_PATH=$TORCH_PREFIX;$L/cmake;$CARRY/usr/share/cmake;$CARRY/usr/lib/cmake"
  -DOpenCV_DIR=$CARRY/cmake/opencv -Dnlohmann_json_DIR=$CARRY/usr/share/cmake/nlohmann_json
  -DCLI11_DIR=$CARRY/usr/share/cmake/CLI11
  -DQT_HOST_PATH=$CARRY/usr
  "-DCMAKE_EXE_LINKER_FLAGS=-Wl,--allow-shlib-undefined -Wl,-rpath-link,$L:$CARRY/stubs")
gpu_tests=$(cd "$SRC" && ls tests/core/*/test_*_gpu.cpp 2>/dev/null | xargs -n1 basename | sed 's/\.cpp$//' | tr '\n' ' ')
if phase 120 cmake -B "$B" "${cmake_args[@]}" -DWB_BUILD_GUI=OFF >"$RES/gpu-tests.log" 2>&1 &&
   grep -q "tests=ON" "$RES/gpu-tests.log"; then
  targets="workbench-cli $gpu_tests"
else
  log "Qt Core + Test did not configure (see gpu-tests.log): core + CLI alone, the gpu tests are not built"
  rm -rf "$B"; phase 120 cmake -B "$B" "${cmake_args[@]}" -DWB_CORE_ONLY=ON >>"$RES/gpu-tests.log" 2>&1 \
    || fail "cmake could not configure even core + CLI: $(grep -m3 -A3 'CMake Error' "$RES/gpu-tests.log")"
  targets=workbench-cli gpu_tests=""
fi
log "building $targets ($(grep -m1 'LibTorch=' "$RES/gpu-tests.log" | sed 's/.*LibTorch=/LibTorch /'))"
phase 330 cmake --build "$B" -j"$(nproc)" --target $targets >>"$RES/gpu-tests.log" 2>&1 \
  || fail "build failed: $(grep -m5 -B2 -A6 'error' "$RES/gpu-tests.log" | head -30)"
CLI=$B/app/cli/workbench-cli
log "built; $($CLI --version 2>&1 | head -1)"
# This machine's peak, before any run, into a scratch store: every run below reports % of it.
export WB_PROBES_DIR=/tmp/wb-gpu-probes
phase 60 $CLI probe peak --seconds 0.5 >"$RES/peak.txt" 2>&1 || log "probe peak failed: $(tail -3 "$RES/peak.txt")"

# ---- 4. the gpu-labelled tests
{
  echo; echo "## gpu-labelled tests"
  if [ -n "$gpu_tests" ]; then
    (cd "$B" && phase 150 ctest -L gpu --output-on-failure --timeout 120) >>"$RES/gpu-tests.log" 2>&1 && r=passed || r=FAILED
    echo "ctest -L gpu: $r — $(grep -E 'tests passed|tests failed' "$RES/gpu-tests.log" | tail -1)"
    grep -E "^(PASS|FAIL!|SKIP) " "$RES/gpu-tests.log" | sed 's/^/    /' || true
  else
    echo "not built: the carried Qt did not configure (gpu-tests.log)"
  fi
} >>"$RES/results.md"

# ---- 5. CIFAR-10-sized data
DATA=/tmp/wb-gpu-c10
if [ ! -f $DATA/.ok ]; then
  rm -rf $DATA
  phase 120 $CLI dataset export --to folder:$DATA --format png --size 32 --limit 50000 >/dev/null 2>&1 \
    || fail "dataset export failed"
  touch $DATA/.ok
fi
log "data: $($CLI dataset inspect folder:$DATA 2>&1 | grep -E 'train:|test:' | tr -s ' ' | tr '\n' ';')"

# ---- 6. the ladder on resnet18
W=(--set model.name=resnet18 --set data.dataset=folder:$DATA --set data.image_size=32 --set train.batch_size=128
   --set train.max_steps=$STEPS --set data.limit_val=2000 --set train.log_every=50)
rm -rf /tmp/wb-gpu-ladder
phase 200 $CLI ladder --out /tmp/wb-gpu-ladder "${W[@]}" --steps workers,pin_memory,precision,inference_eval \
  >/tmp/wb-gpu-ladder.txt 2>&1 || log "the ladder did not finish (what it measured is kept)"
cp /tmp/wb-gpu-ladder/ladder.md /tmp/wb-gpu-ladder/ladder.json "$RES/" 2>/dev/null || true
{ echo; echo "## ladder: resnet18, 32x32 PNGs, $STEPS steps per rung"; cat /tmp/wb-gpu-ladder/ladder.md 2>/dev/null \
  || tail -20 /tmp/wb-gpu-ladder.txt; } >>"$RES/results.md"

# ---- 7. workbench vs plain PyTorch vs Lightning, same workload (workers 4, pinned, fp16 autocast)
rm -rf /tmp/wb-gpu-run
s=$(date +%s%N)
phase 120 $CLI run --run-dir /tmp/wb-gpu-run "${W[@]}" --set speedups.workers=4 --set speedups.pin_memory=true \
  --set speedups.precision=16-mixed >/tmp/wb-gpu-run.txt 2>&1 || log "the workbench run failed: $(tail -3 /tmp/wb-gpu-run.txt)"
wb_wall=$(( ($(date +%s%N) - s) / 1000000 ))e-3
wb=$("$PY" -c "import json; s=json.load(open('/tmp/wb-gpu-run/summary.json')); print(json.dumps({'who':'workbench','train_samples_per_s':s['train_samples_per_s'],'val_acc':s.get('final_val_acc'),'process_s':$wb_wall}))" 2>/dev/null || echo '{}')
py=$(phase 120 "$PY" "$SRC/tests/bench/gpu_plain_torch.py" --data $DATA --steps "$STEPS" 2>/tmp/wb-gpu-plain.txt | tail -1 || echo '{}')
lt=$(phase 150 "$PY" "$SRC/tests/bench/gpu_lightning.py" --data $DATA --steps "$STEPS" 2>/tmp/wb-gpu-lightning.txt | tail -1 || echo '{}')
"$PY" - "$wb" "$py" "$lt" >>"$RES/results.md" <<'PY'
import json, sys
rows = [json.loads(a or "{}") for a in sys.argv[1:4]]
names = ["workbench", "plain PyTorch", "PyTorch Lightning"]
print("\n## same workload: resnet18, batch 128, 4 loader workers, pinned memory, fp16 autocast + scaler")
print("train samples/s: training steps only (the scripts leave out their first 20 steps; the workbench its warm-up)")
print("process s: the whole process, start to exit (evaluation of 2,000 images included)\n")
print("| who | train samples/s | vs workbench | process s | val acc |\n|---|---|---|---|---|")
base = rows[0].get("train_samples_per_s")
for n, r in zip(names, rows):
    sps = r.get("train_samples_per_s")
    if sps is None:
        print(f"| {n} | failed (see gpu-check.log) | | | |")
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
log "done in $(( $(date +%s) - T0 )) s; results in $RES"
cat "$RES/results.md"
