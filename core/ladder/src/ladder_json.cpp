// ladder.json: the ladder written and read back through one field list (older files keep loading;
// keys it does not know are kept in `unknown` and written back; a value not measured is null).
#include <filesystem>

#include "wb/ladder/ladder.h"
#include "wb/proto/config_json.h"
#include "wb/proto/fields.h"
#include "wb/proto/rundir.h"
#include "wb/stats/estimate_json.h"
#include "wb/proto/record_files.h"

namespace wb::ladder {
using namespace report;
using namespace stats;   // estimates, verdicts and the rounds rule
using namespace render;  // tables and charts
using nlohmann::json;

WB_FIELDS(LadderEstimates) {
  f("to_target", proto::via(e.to_target, estimateJson, estimateFromJson));
  f("throughput", proto::via(e.throughput, estimateJson, estimateFromJson));
  f("wall", proto::via(e.wall, estimateJson, estimateFromJson));
  f("marginal_to_target", proto::via(e.marginal_to_target, estimateJson, estimateFromJson));
}

namespace {
template <class R>
auto spread(R& median, R& min, R& max) {
  return proto::group([m = &median, lo = &min, hi = &max](auto&& g) { g("median", proto::orNull(*m)), g("min", proto::orNull(*lo)), g("max", proto::orNull(*hi)); });
}
}  // namespace

WB_FIELDS(LadderRow) {
  f("key", e.step.key), f("added", e.step.added), f("isolated", e.step.isolated), f("skipped", e.step.skipped);
  f("note", e.step.note), f("problems", e.problems), f("repeats", e.repeats), f("reached_target", e.reached);
  f("wall_s", spread(e.wall_s, e.wall_min, e.wall_max));
  f("time_to_target_s", spread(e.target_s, e.target_min, e.target_max));
  f("headline", proto::derived(std::string("cumulative_to_target")));
  f("speedup", proto::group([&](auto&& g) {
    g("cumulative", proto::orNull(e.cumulative)), g("marginal", proto::orNull(e.marginal));
    g("cumulative_to_target", proto::orNull(e.cumulative_target)), g("marginal_to_target", proto::orNull(e.marginal_target));
  }));
  f("contended_repeats", e.contended);
  f("pairs", proto::derived(e.estimates.to_target.pairs > 0 ? e.estimates.to_target.pairs : e.estimates.wall.pairs));
  f("settled", e.settled), f("not_run", e.not_run), f("decision", e.decision);
  f("estimate", e.estimates), f("contention", e.contention);
  f("best_val_acc", proto::orNull(e.val_acc)), f("train_samples_per_s", proto::orNull(e.train_sps));
  f("peak_mem_bytes", proto::orNull(e.peak_mem)), f("gflop_per_s", proto::orNull(e.gflop_per_s));
  f("pct_of_peak", proto::orNull(e.pct_of_peak)), f("peak_mem_kind", e.mem_kind);
  f("config", e.step.config), f("run_dirs", e.run_dirs);
}

WB_FIELDS(Ladder) {
  f("answer", e.answer);
  f("target_acc", proto::orNull(e.target_acc)), f("target_user_set", e.target_user_set);
  f("target_from_references", e.target_from_references);
  f("status", e.status), f("status_note", e.status_note), f("cancelled_at", e.cancelled_at);
  f("noise_band", e.noise_band), f("min_effect", e.verdicts.min_effect), f("max_pairs", e.verdicts.max_pairs);
  f("fixed_pairs", e.verdicts.fixed_pairs), f("target_note", e.target_note), f("greedy", e.greedy);
  f("steps", e.rows);
}

json ladderJson(const Ladder& ladder) {
  json out = json::object();
  proto::fieldsToJson(ladder, out);
  return out;
}

Result<Ladder> ladderFromJson(const json& docIn) {
  const json& doc = docIn.contains("ladder") ? docIn["ladder"] : docIn;
  if (!doc.is_object() || !doc.contains("steps") || !doc["steps"].is_array())
    return makeError(Errc::InvalidConfig, "not a ladder: no \"steps\" list (expected a ladder.json written by workbench-cli ladder)");
  Ladder ladder;  // older ladders wrote no status: "ok"
  proto::fieldsFromJson(doc, ladder);
  ladder.verdicts.floor_band = ladder.noise_band;
  if (ladder.answer.empty()) ladder.answer = ladderAnswer(ladder);  // an older ladder.json
  return ladder;
}

std::string storedLadderAnswer(const json& doc) {
  if (!doc.is_object()) return "";
  Ladder ladder;
  proto::fieldsFromJson(doc, ladder);
  return ladder.answer;
}

Result<Ladder> loadLadder(const std::string& dirOrFile) {
  std::filesystem::path p(dirOrFile);
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec)) p /= proto::kLadderFile;
  const proto::StoredRecord doc = proto::readRecordFile(p);
  if (doc.missing()) return makeError(Errc::Io, "cannot read " + p.string() + " (pick a folder written by workbench-cli ladder --out)");
  if (doc.unreadable())
    return makeError(Errc::Io, p.string() + " is unreadable: " + doc.why +
                                   "; the same ladder command writes it again from the folder's pairs and runs");
  auto ladder = ladderFromJson(doc.doc);
  if (!ladder.ok()) return makeError(Errc::InvalidConfig, p.string() + ": " + ladder.error().message);
  return ladder;
}

}  // namespace wb::ladder
