#!/usr/bin/env bash
# Installs every Debian package the build, the tests and the default dataset need.
# Idempotent: does nothing (not even apt-get update) when everything is already there.
set -euo pipefail

PKGS=(
  build-essential cmake ninja-build ccache pkg-config git
  libtorch-dev libgloo-dev
  # Debian's LibTorch calls the generic libblas.so.3, which is Netlib's reference BLAS unless an
  # optimised one takes the alternative: OpenBLAS (OpenMP build, so it shares LibTorch's OpenMP
  # threads) makes mnist-cnn's forward 2.5x faster on the 2-core CI machine.
  libopenblas0-openmp
  qt6-base-dev qt6-svg-dev libqcustomplot-dev
  libopencv-dev nlohmann-json3-dev libcli11-dev zlib1g-dev
  xvfb xauth
  dataset-fashion-mnist
  # The Python recorder's tests run a plain PyTorch loop (tests/app/python); the recorder itself
  # needs only python3. Lightning is not packaged in Debian 12: its callback's test skips.
  python3 python3-torch
  # The recorder's wheel is built offline (pip wheel --no-build-isolation) and installed into a
  # fresh venv by its test.
  python3-setuptools python3-wheel python3-pip python3-venv
  # `export --format tensorboard` encodes TensorBoard's event files with libprotobuf (messages
  # compiled by protoc); its test reads them back with python3-protobuf.
  libprotobuf-dev protobuf-compiler python3-protobuf
  desktop-file-utils appstream dpkg-dev file
  help2man librsvg2-bin
  # A real single-node Slurm cluster for the srun / sbatch tests (packaging/slurm-local.sh starts
  # its own munged, slurmctld and slurmd; nothing is configured in /etc).
  slurm-wlm munge
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done" >&2
