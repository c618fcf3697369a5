#pragma once
// File helpers that never leave a half-written file under its final name.
#include <filesystem>
#include <string>

#include "wb/common/result.h"

namespace wb {

// Writes to "<path>.tmp-<pid>", fsyncs, renames over path, fsyncs the directory.
// On failure the previous file (if any) is untouched and the temp file removed.
Status writeFileAtomic(const std::filesystem::path& path, const std::string& contents);

Result<std::string> readFile(const std::filesystem::path& path);

// fsync a file or directory by path (best effort for directories).
Status fsyncPath(const std::filesystem::path& path);

}  // namespace wb
