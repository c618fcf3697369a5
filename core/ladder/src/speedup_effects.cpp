#include "wb/proto/try_record.h"
#include "wb/ladder/speedup_effects.h"

#include "wb/compare/answer.h"
#include "wb/proto/rundir.h"
#include "wb/proto/events.h"
#include "wb/stats/estimate_json.h"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <set>

#include "wb/common/speedups.h"
#include "wb/proto/record_files.h"

namespace wb::ladder {
using namespace report;
using namespace stats;   // estimates, verdicts and the rounds rule
using namespace render;  // tables and charts

namespace {

std::string accDetail(const LadderRow& row) {
  return row.val_acc ? " (acc " + fmtFixed(*row.val_acc * 100.0, 1) + " %)" : "";
}

SpeedupEffect effectOf(const LadderRow& row, const std::string& date) {
  SpeedupEffect e{"", std::nullopt, "ladder", date};
  const LadderHeadline h = ladderHeadline(row);
  // Its own figure when its reference is what it changed from: the baseline (alone), or the
  // configuration a greedy ladder kept before it (then it says whether it was kept).
  const bool greedy = !row.decision.empty(), own = row.step.isolated || greedy;
  const std::string how = row.step.isolated ? " alone" : greedy ? " over what the ladder kept before it" : " as a ladder step";
  if (row.step.skipped) e.text = "skipped: " + row.step.note;
  else if (h.text == kContendedText) e.text = "contended (other work used the CPU): no figure";
  else if (row.repeats == 0) e.text = "no result";
  else if (!row.target_s) e.text = "did not reach the target" + accDetail(row);
  else {
    const std::optional<double> x = own ? row.cumulative_target : row.marginal_target;
    const SpeedupEstimate& est = own ? row.estimates.to_target : row.estimates.marginal_to_target;
    // Only a clear "faster" is a speedup; within noise or one run each says so beside the figure.
    const std::string figure = std::isfinite(est.point) ? compare::figureWithReading(est) : x ? fmtSpeedup(*x) + " (no interval)" : "";
    if (x) e.text = figure + " to target" + how + accDetail(row);
    else e.text = "reached the target" + accDetail(row);
    if (x && est.verdict == Verdict::Faster) e.speedup = x;
  }
  if (greedy) e.text += "; " + row.decision.substr(0, row.decision.find(':'));
  return e;
}

std::string utcOf(std::filesystem::file_time_type t) {
  const auto sys = std::chrono::system_clock::now() + (t - std::filesystem::file_time_type::clock::now());
  const std::time_t tt = std::chrono::system_clock::to_time_t(sys);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

}  // namespace

std::map<std::string, SpeedupEffect> ladderEffects(const Ladder& ladder, const std::string& date) {
  std::map<std::string, SpeedupEffect> out;
  for (const auto& row : ladder.rows) {
    if (row.step.key == "baseline") continue;
    auto it = out.find(row.step.key);
    // The speedup alone against the baseline says more about it than its place in the ladder.
    if (it == out.end() || row.step.isolated) out[row.step.key] = effectOf(row, date);
  }
  return out;
}

SpeedupEffect probeEffect(const probe::ProbeResult& p) {
  SpeedupEffect e{"", std::nullopt, "probe", probe::probeDate(p)};
  const probe::ProbeRow* pick = p.row(p.recommended);
  const probe::ProbeRow* ref = p.reference();
  e.text = "probe recommends " + std::to_string(p.recommended) + " worker(s)";
  if (pick && ref && pick != ref && ref->samples_per_s > 0) {
    // Only a clear "faster" over the rounds' noise is a speedup; a probe stored without rounds has no interval.
    const SpeedupEstimate est = p.speedupOver(*ref, *pick);
    const std::string figure = est.hasInterval() ? formatEstimate(est)
                                                 : fmtSpeedup(pick->samples_per_s / ref->samples_per_s) + " (no interval)";
    e.text += " (" + figure + " samples/s vs " + std::to_string(ref->workers) + ")";
    if (est.verdict == Verdict::Faster) e.speedup = est.point;
  }
  if (p.dataNotBottleneck()) e.text += "; the data path is not the bottleneck here";
  if (p.contended()) e.text += " (measured under contention: probe again on a quiet machine)", e.speedup.reset();
  return e;
}

namespace {

// A record left out of the advice (it cannot be read), said once a process on stderr.
void sayOnce(const std::string& line) {
  static std::mutex mu;
  static std::set<std::string> said;
  std::lock_guard<std::mutex> lock(mu);
  if (said.insert(line).second) std::fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace

std::optional<FoundLadder> latestLadder(const std::vector<std::filesystem::path>& roots) {
  namespace fs = std::filesystem;
  std::optional<std::pair<fs::file_time_type, fs::path>> best;
  auto consider = [&](const fs::path& dir) {
    std::error_code ec;
    const fs::path file = dir / proto::kLadderFile;
    if (!fs::is_regular_file(file, ec)) return;
    const auto t = fs::last_write_time(file, ec);
    if (!ec && (!best || t > best->first)) best = {t, dir};
  };
  for (const auto& root : roots) {
    std::error_code ec;
    if (root.empty() || !fs::is_directory(root, ec)) continue;
    consider(root);
    for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec))
      if (it->is_directory(ec)) consider(it->path());
  }
  if (!best) return std::nullopt;
  auto ladder = loadLadder(best->second.string());
  if (!ladder.ok()) {
    sayOnce("the newest ladder is left out of the advice: " + ladder.error().message);
    return std::nullopt;
  }
  return FoundLadder{best->second.string(), utcOf(best->first), std::move(ladder.value())};
}

namespace {

// The newest try.json per speedup key under the roots (each root and its direct sub-folders).
std::map<std::string, std::pair<std::filesystem::file_time_type, nlohmann::json>> newestTries(
    const std::vector<std::filesystem::path>& roots) {
  namespace fs = std::filesystem;
  std::map<std::string, std::pair<fs::file_time_type, nlohmann::json>> best;
  auto consider = [&](const fs::path& dir) {
    std::error_code ec;
    const fs::path file = dir / proto::kTryFile;
    if (!fs::is_regular_file(file, ec)) return;
    const auto t = fs::last_write_time(file, ec);
    const proto::StoredRecord doc = proto::readRecordFile(file);
    if (doc.unreadable()) sayOnce(file.string() + " is left out of the advice: it is unreadable: " + doc.why);
    if (ec || !doc.read()) return;
    const std::string key = proto::stringOr(doc.doc, "speedup", "");
    if (key.empty()) return;  // (a try with no counted pair is the newest word too: it says why)
    if (auto it = best.find(key); it == best.end() || t > it->second.first) best[key] = {t, doc.doc};
  };
  for (const auto& root : roots) {
    std::error_code ec;
    if (root.empty() || !fs::is_directory(root, ec)) continue;
    consider(root);
    for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec))
      if (it->is_directory(ec)) consider(it->path());
  }
  return best;
}

}  // namespace

SpeedupEffect tryEffect(const nlohmann::json& doc, const std::string& date) {
  SpeedupEffect e{"", std::nullopt, "try", date};
  const proto::TryRecord t = proto::tryRecordFromJson(doc);
  const SpeedupEstimate x = estimateFromJson(t.estimate.value(t.reached ? "to_target" : "wall", nlohmann::json()));
  if (t.byParts() && t.status == proto::kStatusCancelled && t.words.empty()) {  // cut before its answer
    std::string kept;
    for (const auto& k : t.kept) kept += (kept.empty() ? "" : ", ") + k;
    e.text = t.setting + ": cancelled" + (kept.empty() ? std::string() : "; trying it again reuses " + kept);
    return e;
  }
  if (t.byParts()) {  // by parts: the composed words say the split
    e.text = t.setting + ": " + (!t.words.empty() ? t.words
                                                  : "no speedup taken (" + (t.error.empty() ? std::string("not finished") : t.error) + ")");
    if (t.reached && x.verdict == Verdict::Faster) e.speedup = x.point;
    return e;
  }
  if (t.pairs < 1) {
    e.text = t.setting + ": no speedup taken (" +
             (!t.runs.empty() ? "every pair was measured under contention: another process used the CPU" : "no pair finished") + ")";
    return e;
  }
  e.text = t.setting + ": " + compare::figureWithReading(x) + (t.reached ? " to target" : " on wall time") + ", " + std::to_string(t.pairs) +
           " pair(s)" + (t.status == "cancelled" ? ", then cancelled" : "");
  if (x.verdict == Verdict::Faster) e.speedup = x.point;
  return e;
}

std::map<std::string, SpeedupEffect> latestTries(const std::vector<std::filesystem::path>& roots) {
  std::map<std::string, SpeedupEffect> out;
  for (const auto& [key, found] : newestTries(roots)) out[key] = tryEffect(found.second, utcOf(found.first));
  return out;
}


std::string speedupSetting(const Config& c, const std::string& key) {
  const Speedup* s = findSpeedup(key);
  return s ? s->setting(c) : key;
}

Config withSpeedupOf(const Config& base, const Config& from, const std::string& key) {
  Config out = base;
  if (const Speedup* s = findSpeedup(key)) s->copy(out, from);
  if (out.speedups.devices > 1 && from.speedups.devices > 1) {
    out.optim.lr_scaling = from.optim.lr_scaling;
    out.optim.lr_scaling_warmup = from.optim.lr_scaling_warmup;
  }
  return out;
}

Result<Config> withOneSpeedup(const Config& baseline, const Config& panel, const std::string& key,
                              const nlohmann::json& caps) {
  const Speedup* speedup = findSpeedup(key);
  if (!speedup) return makeError(Errc::InvalidConfig, "speedup '" + key + "' is not one of the workbench's speedups");
  Config variant = baseline;
  speedup->copy(variant, panel);
  if (speedupSetting(variant, key) != speedupSetting(baseline, key)) return variant;
  // The set-up has it as the baseline does: try what the ladder would run for it alone.
  for (const auto& step : planLadder(baseline, caps, true)) {
    if (step.key != key) continue;
    if (step.skipped) return makeError(Errc::InvalidConfig, key + ": " + step.note);
    if (!step.isolated) continue;
    variant = baseline;
    speedup->copy(variant, step.config);
    if (speedupSetting(variant, key) == speedupSetting(baseline, key))
      return makeError(Errc::InvalidConfig, key + ": the baseline already runs it (" + speedupSetting(baseline, key) + ")");
    return variant;
  }
  return makeError(Errc::InvalidConfig, key + ": the ladder has no step for it on this machine");
}

}  // namespace wb::ladder
