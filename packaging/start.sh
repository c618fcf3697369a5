#!/usr/bin/env bash
# Sets up, builds, and runs the main job (README command 1):
#   with a display: the workbench window with the default experiment ready;
#   without one:    the headless speedup ladder on the default experiment (Fashion-MNIST, lenet),
#                   each step measured by parts (throughput, evaluation, samples to target against
#                   the experiment's reference runs), which prints the table with each speedup's
#                   interval and verdict and writes it under ./ladder-out/<time>/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash packaging/setup.sh
BUILD_DIR=${WB_BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)"
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ -x "$BUILD_DIR/app/gui/workbench" ]; then
  exec "$BUILD_DIR/app/gui/workbench" "$@"
fi
echo "No display: running the headless comparison (workbench-cli ladder, each step by parts)." >&2
# A new folder each time (the same --out would continue that ladder). The experiment's reference
# runs are kept in ~/.local/share/speedup-workbench/references ($WB_REFERENCES_DIR) and every later
# ladder, try and tune of it reuses them.
exec "$BUILD_DIR/app/cli/workbench-cli" ladder --out "ladder-out/$(date +%Y%m%d-%H%M%S)" "$@"
