#pragma once
// A stable hash for the names of stored records (a probe's key, an experiment's reference folder,
// a dataset's fingerprint): the same text gives the same name across runs, builds and machines,
// which std::hash does not promise. std-only.
#include <string>

namespace wb {

// FNV-1a, 64 bits, as 16 lowercase hex digits.
std::string fnv1aHex(const std::string& text);

}  // namespace wb
