#pragma once
// The name of each record file an experiment keeps in its folder, named once (as RunDir names a
// run's config.json and summary.json). Writers, readers, the CLI and the window use these; tests
// that check the name on disk spell it. The array's jobs.json is kClusterJobsFile
// (cluster_jobs.h); a try's parts (math.json, segments.json, parts/) are named by the try itself.

namespace wb::proto {

inline constexpr const char* kTryFile = "try.json";          // a try's result (try_record.h)
inline constexpr const char* kLadderFile = "ladder.json";    // a ladder's result (wb/ladder/ladder.h)
inline constexpr const char* kTuneFile = "tune.json";        // a search's record (tune_record.h)
inline constexpr const char* kBatchFile = "batch.json";      // the batch finder's record (tune_record.h)
inline constexpr const char* kBatchFolder = "batch";         // where `tune` keeps its batch finder's folder
inline constexpr const char* kBestConfigFile = "best.json";  // the config a search picked
inline constexpr const char* kKeptConfigFile = "kept.json";  // the config a greedy ladder kept
inline constexpr const char* kPlanFile = "plan.json";        // a greedy ladder's plan, step by step
inline constexpr const char* kPairsFile = "pairs.json";      // the paired runner's pairs (cumulative ladder)
inline constexpr const char* kReferenceFile = "reference.json";  // an experiment's stored reference runs
// A try's two configs, as its runs take them (and as Use this setting loads the variant's).
inline constexpr const char* kBaselineConfigFile = "baseline.config.json";
inline constexpr const char* kVariantConfigFile = "variant.config.json";

}  // namespace wb::proto
