#pragma once
// The words a try by parts adds after the composed estimate's (stats::timeToTargetWords): what
// the replay of early stopping found, and why the variant's runs stopped before their last.
// Internal to wb_experiment.
#include <string>

#include <nlohmann/json.hpp>

namespace wb::experiment::detail {

// try.json's early_stopping record in words: "; it would stop 3 of the 5 reference runs, ...".
std::string replayWords(const nlohmann::json& replay);
// try.json's variant_looks in words, when they stopped because it cannot be faster: "; its runs
// to the target stopped after 1 of 5: it could no longer be shown faster", or when none started
// because the throughput was contended; else "".
std::string looksWords(const nlohmann::json& looks);

}  // namespace wb::experiment::detail
