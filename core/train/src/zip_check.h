#pragma once
// Private to wb_train: integrity check of a zip archive held in memory (a checkpoint, as
// torch::save writes it). LibTorch's reader does not check the CRC-32 of the entries it
// extracts, so a flipped byte inside tensor data would load silently.
#include <optional>
#include <string>

namespace wb::train::detail {

// nullopt when every stored entry's bytes match the CRC-32 in the central directory; otherwise
// what is wrong, e.g. "entry 'archive/data/3' fails its CRC-32 check". Handles zip64. Entries
// that are compressed (torch::save stores them uncompressed) are not checked.
std::optional<std::string> zipIntegrityProblem(const std::string& bytes);

}  // namespace wb::train::detail
