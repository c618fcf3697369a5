#pragma once
// This host's noise and a run's accuracy spread as repeats of one configuration show them: what
// `workbench-cli noise` measures and stores (wb/records/noise.h). Each repeat counts only when it
// finished and ran alone (its comparison metrics say it was not contended).
#include <optional>
#include <string>
#include <vector>

#include "wb/records/noise.h"
#include "wb/records/run_record.h"

namespace wb::compare {

// The spread repeats of one configuration show (each metric's bandOfRepeats over the finished,
// uncontended runs; the host from the first run). nullopt with fewer than 2 such runs.
std::optional<records::HostNoise> noiseFromRepeats(const std::vector<records::RunRecord>& repeats, const std::string& source);

// The repeats that cannot count, each with why ("aa-2 (another process used 0.9 of 2 cores)",
// "aa-3 (failed)"), joined by "; "; "" when every repeat counts.
std::string unusableRepeats(const std::vector<records::RunRecord>& repeats);

// The spread of the repeats' best accuracies (they ran with different seeds); nullopt with fewer
// than 2 that evaluated.
std::optional<records::AccuracySpread> accuracySpreadOfRepeats(const std::vector<records::RunRecord>& repeats,
                                                               const std::string& source);

}  // namespace wb::compare
