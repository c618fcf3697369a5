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

// What a folder holds, for a refusal that names it: "it holds notes.txt, data/ and 3 more" (a
// file: "it is a file"). Entries sorted, folders with a trailing slash.
std::string describeFolder(const std::filesystem::path& dir);

// The identity of a folder's contents as far as their names, sizes and modification times go:
// 16 hex digits, the same while no file under it is added, removed, resized or rewritten (the
// first `maxFiles` files in name order; a file: its own). "" when it cannot be read. For records
// that rest on a dataset (reference runs) to notice that it changed.
std::string folderFingerprint(const std::filesystem::path& path, size_t maxFiles = 100000);

// fsync a file or directory by path (best effort for directories).
Status fsyncPath(const std::filesystem::path& path);

}  // namespace wb
