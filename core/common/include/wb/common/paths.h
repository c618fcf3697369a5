#pragma once
#include <filesystem>
#include <string>

namespace wb {

// $WB_FASHION_MNIST_DIR, else Debian's dataset-fashion-mnist copy.
std::filesystem::path defaultFashionMnistDir();

// $WB_RUNS_ROOT, else $XDG_DATA_HOME/speedup-workbench/runs, else ~/.local/share/speedup-workbench/runs.
std::filesystem::path defaultRunsRoot();

// "20261129-182301-<slug>-<4 hex>": sortable, unique, filesystem-safe.
std::string makeRunId(const std::string& name);

// Lower-case, [a-z0-9-] only, at most 40 chars.
std::string slugify(const std::string& name);

}  // namespace wb
