#pragma once
// A run's name by what it changed: with several runs of one experiment in a list, the config's
// own name ("fashion-mnist-lenet") tells none apart; what differs from the baseline does.
//
//   differenceName(run, baseline)  "+ bf16", "workers 2", "folder fmnist-png", "lr 0.05",
//                                  "+ bf16, workers 2, +1 more" (at most kNameParts changes)
//
// Values only: config JSON in, words out (the list, the legends, the charts and the exports
// of the window all use it, so a run has one name everywhere).
#include <string>

#include <nlohmann/json.hpp>

namespace wb::report {

inline constexpr int kNameParts = 3;  // changes named before "+N more"

// What `run`'s config changed against `reference`'s, in a few words, joined with ", ".
// "name" is not a difference; "" when nothing else differs (or either is not an object).
std::string differenceName(const nlohmann::json& run, const nlohmann::json& reference);

// One changed field in words: ("speedups.precision", "bf16-mixed") → "+ bf16",
// ("speedups.workers", 2) → "workers 2", ("data.dataset", "folder:/d/png") → "folder png".
std::string changeName(const std::string& path, const nlohmann::json& value);

}  // namespace wb::report
