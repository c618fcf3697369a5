#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include "wb/common/result.h"

namespace wb {

// $WB_FASHION_MNIST_DIR, else Debian's dataset-fashion-mnist copy.
std::filesystem::path defaultFashionMnistDir();

// $WB_RUNS_ROOT, else $XDG_DATA_HOME/speedup-workbench/runs, else ~/.local/share/speedup-workbench/runs.
std::filesystem::path defaultRunsRoot();
// Where the decoded-sample cache keeps its files when data.cache_dir is empty:
// $WB_CACHE_DIR, else $XDG_CACHE_HOME/speedup-workbench/decoded, else ~/.cache/speedup-workbench/decoded.
std::filesystem::path defaultCacheDir();
// Where a gzipped IDX dataset file is kept unpacked (read once with zlib, then as plain bytes):
// $WB_CACHE_DIR/unpacked, else $XDG_CACHE_HOME/speedup-workbench/unpacked, else
// ~/.cache/speedup-workbench/unpacked.
std::filesystem::path unpackedDatasetDir();

// "20261129-182301-<slug>-<4 hex>": sortable, unique, filesystem-safe.
std::string makeRunId(const std::string& name);

// Lower-case, [a-z0-9-] only, at most 40 chars.
std::string slugify(const std::string& name);

// Offset of the first byte of s that is not well-formed UTF-8 (overlong forms, surrogates and
// code points past U+10FFFF count as malformed), or nullopt when s is valid UTF-8.
std::optional<size_t> invalidUtf8At(const std::string& s);

// InvalidConfig when path is not valid UTF-8, naming `what` (the option, e.g. "--run-dir", or
// "run folder") and the offending byte: runs record their folders in JSON, which holds UTF-8
// only, so such a name would be written as U+FFFD and name a folder that does not exist.
// One rule for the CLI and the window.
Status requireUtf8Path(const std::string& what, const std::string& path);

}  // namespace wb
