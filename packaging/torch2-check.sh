#!/usr/bin/env bash
# Builds the whole project (core, CLI, GUI, tests) against LibTorch 2.x and runs the test suite there,
# in a Debian 13 (trixie) root made with debootstrap: trixie carries libtorch-dev 2.6 and its torchrun.
# Not part of .ci/run (it takes long); run it after a change to LibTorch-facing code.
#
#   bash packaging/torch2-check.sh            # create or reuse the root, build, run ctest, print the result
#   bash packaging/torch2-check.sh --root-only  # only create/update the root
#   bash packaging/torch2-check.sh --build-only # create or reuse the root and build, no tests
#   bash packaging/torch2-check.sh --bench      # after the tests, the side-by-side bench vs PyTorch 2.x
#   bash packaging/torch2-check.sh --bench-only # build, then the side-by-side bench (no tests)
#   bash packaging/torch2-check.sh --shell      # an interactive shell in the root, the source at /src
#   bash packaging/torch2-check.sh --cuda [MODE] # the same in a second root with Debian's CUDA LibTorch
#   WB_LIGHTNING_SRC=DIR[:DIR...] bash packaging/torch2-check.sh --lightning [--bench]
#       the Lightning callback with a real Trainer.fit: builds the CLI and the recorder's tests, runs them
#       with Lightning on the root's PYTHONPATH; --bench then runs tests/bench/bench_lightning.sh (the
#       workbench vs the same lenet in Lightning, as one `try`; the callback's cost per step)
#   WB_TORCH2_ROOT=/path  (default /var/tmp/wb-trixie-root)   WB_TORCH2_CTEST="-R regex"  (ctest args)
#
# --lightning: Debian has no Lightning package; WB_LIGHTNING_SRC names folders holding its sources and
# those of the two packages it needs that Debian lacks (checkouts of Lightning-AI's pytorch-lightning,
# utilities and torchmetrics, or unpacked wheels): each is bind-mounted read-only in the root and its
# src/ (or itself) put on PYTHONPATH. Debian 13 packages the rest (PyYAML, fsspec, tqdm, ...).
#
# --cuda: a trixie root with contrib and non-free (default /var/tmp/wb-trixie-cuda-root), holding
# libtorch-cuda-dev (2.6, built against Debian's CUDA toolkit), nvidia-cuda-toolkit (nvcc) and NCCL where
# Debian's build has it. The whole project is built with WB_WITH_CUDA on, so every CUDA path of the core
# (pinned copies on a side stream, NCCL waits and events, CUDA memory statistics, the gpu tests) is
# compiled and linked; the tests then run on this machine without a GPU, where the CUDA build must behave
# as the CPU build does and every gpu test reads as skipped. ~6 GB of packages.
#
# Idempotent: the root is made once (marker .wb-root-ok) and its packages topped up when this list grows;
# the build folder (/build/<source folder's name> inside the root, with the root's own ccache) is reused. Every build in the root runs under nice -n 15 (--cuda: 19).
# Needs root (debootstrap, chroot, bind mounts) and the Debian mirror.
set -euo pipefail

MIRROR=${WB_TORCH2_MIRROR:-http://deb.debian.org/debian}
SRC=$(cd "$(dirname "$0")/.." && pwd)
MODE=check
VARIANT=cpu
LIGHTNING=
for arg in "$@"; do
  case "$arg" in
    --cuda) VARIANT=cuda ;;
    --root-only) MODE=root ;;
    --build-only) MODE=build ;;
    --bench) MODE=bench ;;
    --bench-only) MODE=benchonly ;;
    --shell) MODE=shell ;;
    --lightning) LIGHTNING=1 ;;
    *) echo "usage: $0 [--cuda] [--root-only|--build-only|--bench|--bench-only|--shell|--lightning [--bench]]" >&2; exit 2 ;;
  esac
done
NICE=15
if [ "$VARIANT" = cuda ]; then
  NICE=19  # its build is the longest: it yields to everything else on the machine
  ROOT=${WB_TORCH2_ROOT:-/var/tmp/wb-trixie-cuda-root}
  COMPONENTS=main,contrib,non-free,non-free-firmware
  TORCH_PKG=libtorch-cuda-dev
else
  ROOT=${WB_TORCH2_ROOT:-/var/tmp/wb-trixie-root}
  COMPONENTS=main
  TORCH_PKG=libtorch-dev
fi

# What the build, the tests and the side-by-side need in the root: packaging/setup.sh's list (OpenBLAS
# as on the host) plus Python's torch for torchrun and the PyTorch script.
PKGS=(
  build-essential cmake ninja-build ccache pkg-config git ca-certificates
  libtorch-dev libgloo-dev libopenblas0-openmp
  qt6-base-dev qt6-svg-dev libqcustomplot-dev
  libopencv-dev nlohmann-json3-dev libcli11-dev zlib1g-dev
  xvfb xauth xfonts-base
  dataset-fashion-mnist
  desktop-file-utils appstream dpkg-dev file help2man librsvg2-bin
  python3 python3-torch python3-numpy
  python3-yaml python3-fsspec python3-packaging python3-typing-extensions python3-tqdm
  procps psmisc
)
# The CUDA root: Debian's CUDA LibTorch and python torch (contrib) in place of the CPU ones, the toolkit
# whose nvcc a CUDA LibTorch's CMake config asks for (find_package(CUDAToolkit REQUIRED)), and NCCL.
# Gloo's CUDA build replaces the CPU one (they conflict). cuDNN comes only from NVIDIA's site
# (nvidia-cudnn downloads it once its licence is agreed to, which this root never does): a
# stand-in libcudnn.so.9 lets the binaries link and load; without a GPU no cuDNN call is ever made.
if [ "$VARIANT" = cuda ]; then
  PKGS=("${PKGS[@]/#libtorch-dev/libtorch-cuda-dev}")
  PKGS=("${PKGS[@]/#libgloo-dev/libgloo-cuda-dev}")
  PKGS=("${PKGS[@]/#python3-torch/python3-torch-cuda}")
  PKGS+=(nvidia-cuda-toolkit nvidia-cuda-dev libnccl-dev binutils)
fi

log() { echo "torch2-check: $*" >&2; }
need_root() {
  if [ "$(id -u)" -ne 0 ]; then log "needs root (debootstrap, chroot, mounts); run it with sudo"; exit 2; fi
}

make_root() {
  need_root
  if [ ! -f "$ROOT/.wb-debootstrap-ok" ]; then
    command -v debootstrap >/dev/null || { export DEBIAN_FRONTEND=noninteractive; apt-get install -y -qq debootstrap >/dev/null; }
    log "debootstrap trixie into $ROOT (minbase; a few minutes, ~600 packages with the build tools)"
    mkdir -p "$ROOT"
    nice -n 15 debootstrap --variant=minbase --components="$COMPONENTS" trixie "$ROOT" "$MIRROR" >"$ROOT.debootstrap.log" 2>&1 \
      || { log "debootstrap failed: see $ROOT.debootstrap.log"; exit 1; }
    touch "$ROOT/.wb-debootstrap-ok"
  fi
  # A chroot is an ordinary machine only when its host name resolves (torchrun, Gloo).
  printf '127.0.0.1 localhost\n127.0.1.1 %s\n::1 localhost ip6-localhost\n' "$(hostname)" >"$ROOT/etc/hosts"
  cp /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || true
  echo "deb $MIRROR trixie ${COMPONENTS//,/ }" >"$ROOT/etc/apt/sources.list"
  local want; want=$(printf '%s\n' "${PKGS[@]}" | sort | tr '\n' ' ')
  if [ "$(cat "$ROOT/.wb-root-ok" 2>/dev/null)" != "$want" ]; then
    log "installing the build's packages in the root"
    mount_all
    # nvidia-cudnn would download cuDNN from NVIDIA (unreachable) once its licence is agreed to,
    # which is its default: declined here, so it installs nothing (see make_cudnn_stand_in).
    [ "$VARIANT" = cuda ] && in_root "echo 'nvidia-cudnn nvidia-cudnn/question select I Decline' | debconf-set-selections"
    in_root "apt-get update -qq && DEBIAN_FRONTEND=noninteractive nice -n 15 apt-get install -y -qq --no-install-recommends ${PKGS[*]} >/dev/null" \
      || { log "apt-get install in the root failed"; exit 1; }
    echo "$want" >"$ROOT/.wb-root-ok"
  fi
  [ "$VARIANT" = cuda ] && make_cudnn_stand_in
  return 0
}

# libcudnn.so.9 with every cudnn* symbol LibTorch takes from it (versioned as the real one), each a
# trap: reached only on a GPU, where the real cuDNN must be installed instead.
make_cudnn_stand_in() {
  local dir=/usr/local/lib/wb-cudnn-stand-in
  [ -f "$ROOT$dir/libcudnn.so.9" ] && return 0
  log "making a stand-in libcudnn.so.9 in $ROOT$dir (the real cuDNN is NVIDIA's download)"
  in_root "set -e; mkdir -p $dir; cd $dir
    nm -D --undefined-only /usr/lib/x86_64-linux-gnu/libtorch_cuda.so.2.* /usr/lib/x86_64-linux-gnu/libtorch_python.so.2.* 2>/dev/null \
      | awk '{print \$2}' | grep '@libcudnn.so.9' | sed 's/@.*//' | sort -u >symbols
    awk '{print \".globl \" \$1 \"\\n.type \" \$1 \",@function\\n\" \$1 \":\\n ud2\"}' symbols >stand-in.s
    echo 'libcudnn.so.9 { global: *; };' >version.map
    gcc -shared -nostdlib -x assembler stand-in.s -Wl,-z,noexecstack -Wl,--version-script=version.map -Wl,-soname,libcudnn.so.9 -o libcudnn.so.9
    echo $dir >/etc/ld.so.conf.d/wb-cudnn-stand-in.conf; ldconfig" \
    || { log "could not make the cuDNN stand-in"; exit 1; }
}

MOUNTED=()
mount_one() { # src dst [opts]
  mkdir -p "$2"
  if ! mountpoint -q "$2"; then
    mount "${@:3}" "$1" "$2"
    # a recursive bind must not pass its unmount back to the host's /sys or /dev
    [ "${3:-}" = --rbind ] && mount --make-rslave "$2"
    MOUNTED+=("$2")
  fi
}
mount_all() {
  mount_one proc "$ROOT/proc" -t proc
  mount_one /sys "$ROOT/sys" --rbind
  mount_one /dev "$ROOT/dev" --rbind
  mount_one tmpfs "$ROOT/dev/shm" -t tmpfs
  mount_one "$SRC" "$ROOT/src" --bind
}
umount_all() {
  local i
  for ((i=${#MOUNTED[@]}-1; i>=0; i--)); do umount -l "${MOUNTED[$i]}" 2>/dev/null || true; done
  MOUNTED=()
}
trap umount_all EXIT

in_root() { chroot "$ROOT" /usr/bin/env -i HOME=/root PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin LANG=C.UTF-8 bash -c "$1"; }

make_root
[ "$MODE" = root ] && { log "root ready at $ROOT"; exit 0; }

# ---- the build and the tests, in the root (the source bind-mounted at /src, the build in the root)
BUILD=/build/$(basename "$SRC")
mount_all
[ "$MODE" = shell ] && { chroot "$ROOT" /usr/bin/env -i HOME=/root TERM="${TERM:-xterm}" PATH=/usr/bin:/bin:/usr/sbin:/sbin LANG=C.UTF-8 bash -c "cd /src; exec bash -i"; exit $?; }

# ---- --lightning: Lightning's sources mounted, the recorder's tests and the CLI built and run
LIGHTNING_PATH=""
lightning_paths() { # mounts WB_LIGHTNING_SRC's folders at /lightning/N; sets LIGHTNING_PATH (the root's PYTHONPATH)
  local i=0 dir path=""
  IFS=: read -ra dirs <<<"${WB_LIGHTNING_SRC:-}"
  [ ${#dirs[@]} -gt 0 ] || { log "--lightning needs WB_LIGHTNING_SRC=DIR[:DIR...]: Lightning's sources (see the header)"; exit 2; }
  for dir in "${dirs[@]}"; do
    [ -d "$dir" ] || { log "WB_LIGHTNING_SRC: $dir is not a folder"; exit 2; }
    mount_one "$dir" "$ROOT/lightning/$i" --bind -o ro
    if [ -d "$dir/src" ]; then path+="/lightning/$i/src:"; else path+="/lightning/$i:"; fi
    i=$((i + 1))
  done
  LIGHTNING_PATH="${path%:}"
}
lightning_check() {
  lightning_paths
  mkdir -p "$ROOT$BUILD"
  local env="export PYTHONPATH=$LIGHTNING_PATH CCACHE_DIR=/var/cache/ccache"
  if ! in_root "$env; python3 -c 'import lightning.pytorch as pl, torchmetrics; print(\"Lightning\", pl.__version__)'" >"$ROOT$BUILD.lightning.txt" 2>&1; then
    tail -3 "$ROOT$BUILD.lightning.txt" >&2
    log "RESULT: Lightning does not import from WB_LIGHTNING_SRC in the root (above: what is missing)"; exit 1
  fi
  log "$(tail -1 "$ROOT$BUILD.lightning.txt") with PyTorch $(in_root "python3 -c 'import torch; print(torch.__version__)'")"
  local targets="workbench-cli test_lightning_callback test_recorder_run test_command_try"
  if ! in_root "$env; cd /src && nice -n $NICE cmake -S . -B $BUILD -G Ninja -DCMAKE_BUILD_TYPE=Release >$BUILD.configure.log && nice -n $NICE cmake --build $BUILD -j$(nproc) --target $targets" >"$ROOT$BUILD.build.log" 2>&1; then
    grep -E "error|Error" "$ROOT$BUILD.build.log" | head -20 >&2; log "RESULT: build FAILED (log: $ROOT$BUILD.build.log)"; exit 1
  fi
  local rc=0 test_log="$ROOT$BUILD.lightning-ctest.log"
  in_root "$env; cd $BUILD && nice -n $NICE ctest --output-on-failure --timeout 900 -R 'test_(lightning_callback|recorder_run|command_try)\$'" >"$test_log" 2>&1 || rc=$?
  grep -E "tests passed|tests failed|\*\*\*Failed|Skipped|SKIP" "$test_log" | tail -20 >&2 || true
  # ctest keeps a passing test's output to itself: the real Trainer.fit must have run, not skipped.
  in_root "$env; $BUILD/tests/app/python/test_lightning_callback realTrainerFit" >>"$test_log" 2>&1 || rc=$?
  grep -q "PASS   : TestLightningCallback::realTrainerFit" "$test_log" \
    || { log "RESULT: the real Trainer.fit did not pass (skipped or failed; log: $test_log)"; exit 1; }
  log "RESULT (Lightning): $(grep -E 'tests passed' "$test_log" | tail -1) (log: $test_log)"
  [ "$rc" -ne 0 ] && exit 1
  if [ "$MODE" = bench ]; then
    local sizes="" v  # the bench's own variables, passed through
    for v in LIMIT_TRAIN LIMIT_VAL EPOCHS PAIRS THREADS TARGET SKIP_COSTS; do [ -n "${!v:-}" ] && sizes+=" $v=${!v}"; done
    in_root "$env; cd $BUILD && env$sizes nice -n 15 bash /src/tests/bench/bench_lightning.sh $BUILD/app/cli/workbench-cli"
  fi
  exit 0
}
[ -n "$LIGHTNING" ] && lightning_check

# Build and test as in .ci/run, with Debian 13's LibTorch; nice: the machine is shared.
log "building the whole project against $(in_root "dpkg-query -W -f='\${Version}' $TORCH_PKG") in $ROOT$BUILD"
build_log="$ROOT$BUILD.build.log"
mkdir -p "$ROOT$BUILD"
# The CLI and the LibTorch-facing tests first: a compile error there shows in minutes, not at the end.
first="workbench-cli test_backend_check test_torchrun test_worker_slurm"
if [ "$VARIANT" = cuda ]; then
  # Every CUDA path first (the gpu tests and the CUDA-facing units), then the rest.
  gpu_tests=$(cd "$SRC" && ls tests/core/*/test_*_gpu.cpp | xargs -n1 basename | sed 's/\.cpp$//' | tr '\n' ' ')
  first="workbench-cli $gpu_tests test_gpu_versions test_batch_copy test_device_timeline test_communicator test_data_parallel test_trainer"
fi
configure="cmake -S . -B $BUILD -G Ninja -DCMAKE_BUILD_TYPE=Release"
if ! in_root "export CCACHE_DIR=/var/cache/ccache; cd /src && nice -n $NICE $configure >$BUILD.configure.log && nice -n $NICE cmake --build $BUILD -j$(nproc) --target $first && nice -n $NICE cmake --build $BUILD -j$(nproc)" >"$build_log" 2>&1; then
  grep -E "error|Error" "$ROOT$BUILD.configure.log" "$build_log" | head -40 >&2
  log "RESULT: build FAILED against $TORCH_PKG $(in_root "dpkg-query -W -f='\${Version}' $TORCH_PKG") (logs: $ROOT$BUILD.configure.log, $build_log)"
  exit 1
fi
steps=$(grep -c '^\[' "$build_log" || true)
log "build ok ($steps build steps); $(grep -E 'CUDA LibTorch|wb_parallel: NCCL|LibTorch=' "$ROOT$BUILD.configure.log" | sed 's/^-- //' | tr '\n' ';')"
if [ "$VARIANT" = cuda ] && ! grep -q "CUDA=ON" "$ROOT$BUILD.configure.log"; then
  log "RESULT: configured without CUDA (WB_WITH_CUDA off) against $TORCH_PKG: the CUDA paths were not compiled"
  exit 1
fi
[ "$MODE" = build ] && exit 0
[ "$MODE" = benchonly ] && MODE=bench && WB_TORCH2_SKIP_TESTS=1

test_log="$ROOT$BUILD.ctest.log"
rc=0
# WB_TORCH2_CTEST: extra ctest arguments (e.g. "-R torchrun"); Xvfb-needing tests find xvfb-run there.
if [ -z "${WB_TORCH2_SKIP_TESTS:-}" ]; then
in_root "cd $BUILD && nice -n $NICE ctest --output-on-failure -j2 --timeout 900 ${WB_TORCH2_CTEST:-}" >"$test_log" 2>&1 || rc=$?
grep -E "tests passed|tests failed|\*\*\*Failed|Not Run|Timeout|Skipped" "$test_log" | tail -30 >&2 || true
summary=$(grep -E "tests passed" "$test_log" | tail -1)
if [ "$VARIANT" = cuda ] && ! in_root "nvidia-smi -L" >/dev/null 2>&1; then
  # No GPU here: every gpu-labelled test must read as Skipped (each skip names its reason).
  for t in $(cd "$SRC" && ls tests/core/*/test_*_gpu.cpp | xargs -n1 basename | sed 's/\.cpp$//'); do
    grep -qE "Test +#[0-9]+: $t \.+\*+Skipped" "$test_log" || { log "$t did not read as Skipped without a GPU"; rc=1; }
  done
fi
log "RESULT: LibTorch $(in_root "dpkg-query -W -f='\${Version}' $TORCH_PKG"): build ok ($steps steps); ctest: ${summary:-no summary} (log: $test_log)"
[ "$rc" -ne 0 ] && exit 1
fi

if [ "$MODE" = bench ]; then
  log "side by side: the workbench vs PyTorch $(in_root "python3 -c 'import torch; print(torch.__version__)'") on the same LibTorch"
  # One thread each: on a shared 2-core machine a fixed team of 2 waits for descheduled threads.
  in_root "cd $BUILD && nice -n 15 python3 /src/tests/bench/side_by_side.py --cli $BUILD/app/cli/workbench-cli --threads ${WB_BENCH_THREADS:-1} --limit-train 6400 --limit-val 1000 --repeats 3"
fi
exit 0
