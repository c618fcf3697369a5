// ladder.json: the ladder written and read back (older files keep loading; unknown keys are left).
#include <filesystem>

#include "wb/ladder/ladder.h"
#include "wb/proto/config_json.h"
#include "wb/proto/rundir.h"
#include "wb/report/estimate_json.h"

namespace wb::ladder {
using namespace report;  // records, metrics, tables and charts
using nlohmann::json;

namespace {
json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
}  // namespace

json ladderJson(const Ladder& ladder) {
  json rows = json::array();
  for (const auto& row : ladder.rows) {
    rows.push_back({{"key", row.step.key},
                    {"added", row.step.added},
                    {"isolated", row.step.isolated},
                    {"skipped", row.step.skipped},
                    {"note", row.step.note},
                    {"problems", row.problems},
                    {"repeats", row.repeats},
                    {"reached_target", row.reached},
                    {"wall_s", {{"median", opt(row.wall_s)}, {"min", opt(row.wall_min)}, {"max", opt(row.wall_max)}}},
                    {"time_to_target_s", {{"median", opt(row.target_s)}, {"min", opt(row.target_min)}, {"max", opt(row.target_max)}}},
                    {"headline", "cumulative_to_target"},
                    {"speedup", {{"cumulative", opt(row.cumulative)}, {"marginal", opt(row.marginal)},
                                 {"cumulative_to_target", opt(row.cumulative_target)},
                                 {"marginal_to_target", opt(row.marginal_target)}}},
                    {"contended_repeats", row.contended},
                    {"pairs", row.estimates.to_target.pairs > 0 ? row.estimates.to_target.pairs : row.estimates.wall.pairs},
                    {"settled", row.settled},
                    {"not_run", row.not_run},
                    {"decision", row.decision},
                    {"estimate", {{"to_target", estimateJson(row.estimates.to_target)},
                                  {"throughput", estimateJson(row.estimates.throughput)},
                                  {"wall", estimateJson(row.estimates.wall)},
                                  {"marginal_to_target", estimateJson(row.estimates.marginal_to_target)}}},
                    {"contention", row.contention},
                    {"best_val_acc", opt(row.val_acc)},
                    {"train_samples_per_s", opt(row.train_sps)},
                    {"peak_mem_bytes", opt(row.peak_mem)},
                    {"gflop_per_s", opt(row.gflop_per_s)},
                    {"pct_of_peak", opt(row.pct_of_peak)},
                    {"peak_mem_kind", row.mem_kind},
                    {"config", proto::configToJson(row.step.config)},
                    {"run_dirs", row.run_dirs}});
  }
  return {{"target_acc", opt(ladder.target_acc)}, {"target_user_set", ladder.target_user_set},
          {"target_from_references", ladder.target_from_references},
          {"status", ladder.status},          {"status_note", ladder.status_note},
          {"cancelled_at", ladder.cancelled_at}, {"noise_band", ladder.noise_band},
          {"min_effect", ladder.verdicts.min_effect}, {"max_pairs", ladder.verdicts.max_pairs},
          {"fixed_pairs", ladder.verdicts.fixed_pairs}, {"target_note", ladder.target_note},
          {"greedy", ladder.greedy},
          {"steps", rows}};
}

namespace {

int intOr(const json& j, int fallback) { return j.is_number() ? j.get<int>() : fallback; }

std::optional<double> optNum(const json& j) {
  if (!j.is_number()) return std::nullopt;
  return j.get<double>();
}

}  // namespace

Result<Ladder> ladderFromJson(const json& docIn) {
  const json& doc = docIn.contains("ladder") ? docIn["ladder"] : docIn;
  if (!doc.is_object() || !doc.contains("steps") || !doc["steps"].is_array())
    return makeError(Errc::InvalidConfig, "not a ladder: no \"steps\" list (expected a ladder.json written by workbench-cli ladder)");
  Ladder ladder;
  ladder.target_acc = optNum(doc.value("target_acc", json()));
  ladder.target_user_set = doc.value("target_user_set", false);
  ladder.target_from_references = doc.value("target_from_references", false);
  ladder.status = doc.value("status", "ok");  // older ladders wrote none
  ladder.status_note = doc.value("status_note", "");
  ladder.cancelled_at = doc.value("cancelled_at", "");
  ladder.noise_band = doc.value("noise_band", 0.0);
  ladder.target_note = doc.value("target_note", "");
  ladder.greedy = doc.value("greedy", false);
  ladder.verdicts.floor_band = ladder.noise_band;
  ladder.verdicts.min_effect = doc.value("min_effect", report::kDefaultMinEffect);
  ladder.verdicts.max_pairs = doc.value("max_pairs", ladder.verdicts.max_pairs);
  ladder.verdicts.fixed_pairs = doc.value("fixed_pairs", 0);
  for (const json& s : doc["steps"]) {
    if (!s.is_object()) continue;
    LadderRow row;
    row.step.key = s.value("key", "");
    row.step.added = s.value("added", "");
    row.step.isolated = s.value("isolated", false);
    row.step.skipped = s.value("skipped", false);
    row.step.note = s.value("note", "");
    if (s.contains("config")) {
      if (auto c = proto::configFromJson(s["config"]); c.ok()) row.step.config = *c;
    }
    row.problems = s.value("problems", "");
    row.repeats = s.value("repeats", 0);
    row.reached = s.value("reached_target", 0);
    const json wall = s.value("wall_s", json::object()), target = s.value("time_to_target_s", json::object()),
               speed = s.value("speedup", json::object());
    row.wall_s = optNum(wall.value("median", json())), row.wall_min = optNum(wall.value("min", json())),
    row.wall_max = optNum(wall.value("max", json()));
    row.target_s = optNum(target.value("median", json())), row.target_min = optNum(target.value("min", json())),
    row.target_max = optNum(target.value("max", json()));
    row.cumulative = optNum(speed.value("cumulative", json()));
    row.marginal = optNum(speed.value("marginal", json()));
    row.cumulative_target = optNum(speed.value("cumulative_to_target", json()));
    row.marginal_target = optNum(speed.value("marginal_to_target", json()));
    row.contended = intOr(s.value("contended_repeats", json()), 0);
    const json contention = s.value("contention", json());
    row.contention = contention.is_string() ? contention.get<std::string>() : "";
    row.train_sps = optNum(s.value("train_samples_per_s", json()));
    row.val_acc = optNum(s.value("best_val_acc", json()));
    row.peak_mem = optNum(s.value("peak_mem_bytes", json()));
    row.gflop_per_s = optNum(s.value("gflop_per_s", json()));
    row.pct_of_peak = optNum(s.value("pct_of_peak", json()));
    row.mem_kind = s.value("peak_mem_kind", "");
    row.settled = s.value("settled", "");
    row.not_run = s.value("not_run", false);
    row.decision = s.value("decision", "");
    const json est = s.value("estimate", json::object());
    row.estimates.to_target = estimateFromJson(est.value("to_target", json()));
    row.estimates.throughput = estimateFromJson(est.value("throughput", json()));
    row.estimates.wall = estimateFromJson(est.value("wall", json()));
    row.estimates.marginal_to_target = estimateFromJson(est.value("marginal_to_target", json()));
    for (const auto& d : s.value("run_dirs", json::array()))
      if (d.is_string()) row.run_dirs.push_back(d.get<std::string>());
    ladder.rows.push_back(std::move(row));
  }
  return ladder;
}

Result<Ladder> loadLadder(const std::string& dirOrFile) {
  std::filesystem::path p(dirOrFile);
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec)) p /= "ladder.json";
  auto doc = proto::readJsonFile(p);
  if (!doc.ok()) return makeError(Errc::Io, doc.error().message + " (pick a folder written by workbench-cli ladder --out)");
  auto ladder = ladderFromJson(*doc);
  if (!ladder.ok()) return makeError(Errc::InvalidConfig, p.string() + ": " + ladder.error().message);
  return ladder;
}

}  // namespace wb::ladder
