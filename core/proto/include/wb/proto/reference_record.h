#pragma once
// reference.json: an experiment's stored reference runs (wb/experiment/reference_runs.h), one
// record per <store>/<key> folder: which experiment and dataset they measure, their evaluation
// interval and each run's seed, folder and status. One field list (reference_record.cpp) for its
// writer and its reader; reading is tolerant (a missing key keeps its default).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace wb::proto {

// One reference run: its seed, its folder (relative to the record's), its status ("" until it
// ran, "running", then the run's own: ok, early-stopped, failed, ...).
struct ReferenceRunRecord {
  int64_t seed = 0;
  std::string dir;
  std::string status;
};

struct ReferenceRecord {
  std::string key;               // the experiment's key (referenceKey)
  std::string dataset_id;        // the dataset's fingerprint when the runs ran
  nlohmann::json config;         // the experiment's identity: its config less what only changes the speed
  int64_t eval_every_steps = 0;  // the runs' evaluation interval
  std::string updated_at;        // UTC, ISO 8601
  std::vector<ReferenceRunRecord> runs;  // in seed order
};

nlohmann::json referenceRecordJson(const ReferenceRecord& record);
// Never throws; a missing key keeps its default; runs that are not objects are left out (see
// referenceRunsProblem).
ReferenceRecord referenceRecordFromJson(const nlohmann::json& doc);
// Why the record's runs cannot be read as runs, in words ("its runs are not a list", "its runs hold
// a JSON number, not a run"); "" when they can (or it lists none).
std::string referenceRunsProblem(const nlohmann::json& doc);

}  // namespace wb::proto
