#pragma once
// How far from the limit, as the tables show it: achieved GFLOP/s, % of the measured peak, % of
// the datasheet peak (GPU), the compute-only step and the data path's share, from a run's
// summary "flops" (wb/proto/flops_record.h). Used by the comparison, the ladder and every export; one
// home for the columns, cells and notes, so they read the same everywhere. Values only.
#include <optional>
#include <string>
#include <vector>

#include "wb/proto/flops_record.h"
#include "wb/records/run_record.h"
#include "wb/render/table.h"

namespace wb::compare {

// The run's summary "flops"; nullopt for a run without one (older, or still running).
std::optional<proto::FlopsFigures> runFlops(const records::RunRecord& run);

// "1.92", "95.4", "12.3k" GFLOP/s.
std::string fmtGflops(double gflopPerS);

// Columns: gflop_per_s, pct_of_peak, pct_of_datasheet, compute_only_step_ms, data_path_share.
std::vector<render::Column> mfuColumns();
// The cells of those columns ("–" where a figure is absent; "no peak" without a calibration).
std::vector<render::Cell> mfuCells(const std::optional<proto::FlopsFigures>& flops);
// The notes under a table with those columns: the convention, each peak used (or why none),
// operations the count left out, what the compute-only step is.
std::vector<std::string> mfuNotes(const std::vector<std::optional<proto::FlopsFigures>>& flops);

}  // namespace wb::compare
