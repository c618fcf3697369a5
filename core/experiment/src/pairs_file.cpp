// out/pairs.json: the plan and the finished pairs, what makes an experiment's folder resumable.
#include "pairs_file.h"

#include "wb/common/fs.h"
#include "wb/proto/config_json.h"
#include "wb/proto/events.h"
#include "wb/proto/fields.h"
#include "wb/proto/rundir.h"
#include "wb/proto/record_files.h"

namespace wb::experiment {
namespace fs = std::filesystem;
using nlohmann::json;

fs::path pairsFile(const fs::path& out) { return out / proto::kPairsFile; }

bool holdsPairs(const fs::path& out) {
  std::error_code ec;
  return fs::is_regular_file(pairsFile(out), ec);
}

namespace {

json armJson(const Arm& a) {
  json doc = {{"key", a.key}, {"label", a.label}, {"config", proto::configToJson(a.config)}};
  if (a.command) doc["run_command"] = a.command->text;  // "": the workbench's own run
  return doc;
}

std::string runsOf(const json& armOrPlan) {
  const std::string c = proto::stringOr(armOrPlan, "run_command", "");
  return c.empty() ? std::string("the workbench's own") : "`" + c + "`";
}

json planJson(const Plan& plan) {
  json variants = json::array();
  for (const auto& v : plan.variants) variants.push_back(armJson(v));
  json doc = {{"reference", armJson(plan.reference)}, {"variants", variants}};
  if (plan.user_command.set()) doc["run_command"] = plan.user_command.text;
  return doc;
}

// "speedups.workers" from a JSON patch path "/speedups/workers".
std::string fieldOf(const std::string& pointer) {
  std::string s = pointer.empty() ? pointer : pointer.substr(1);
  for (auto& c : s)
    if (c == '/') c = '.';
  return s;
}

// "" when the arms run the same; else what differs, in words.
std::string armDifference(const json& stored, const json& now) {
  const std::string key = proto::stringOr(now, "key", "");
  if (proto::stringOr(stored, "key", "") != key) return "step '" + key + "' is '" + proto::stringOr(stored, "key", "") + "' there";
  if (stored.contains("run_command") != now.contains("run_command") || runsOf(stored) != runsOf(now))
    return "step '" + key + "' ran " + (stored.contains("run_command") ? runsOf(stored) + " runs" : std::string("the plan's runs")) + " there";
  json a = proto::objectOr(stored, "config"), b = proto::objectOr(now, "config");
  a.erase("name"), b.erase("name");  // the name says nothing about what runs
  const json patch = json::diff(a, b);
  if (patch.empty()) return {};
  return "step '" + key + "' differs in " + fieldOf(proto::stringOr(patch[0], "path", ""));
}

std::string planDifference(const json& stored, const json& now) {
  if (runsOf(stored) != runsOf(now)) return "its runs are " + runsOf(stored);
  if (auto d = armDifference(proto::objectOr(stored, "reference"), now["reference"]); !d.empty()) return d;
  const json sv = stored.contains("variants") && stored["variants"].is_array() ? stored["variants"] : json::array();
  const json& nv = now["variants"];
  for (size_t i = 0; i < std::max(sv.size(), nv.size()); ++i) {
    if (i >= sv.size()) return "step '" + proto::stringOr(nv[i], "key", "") + "' is not in the plan there";
    if (i >= nv.size()) return "step '" + proto::stringOr(sv[i], "key", "") + "' is there but not in this plan";
    if (auto d = armDifference(sv[i], nv[i]); !d.empty()) return d;
  }
  return {};
}

}  // namespace

WB_FIELDS(PairRecord) {
  f("key", e.key), f("pair", e.number), f("variant_first", e.variant_first);
  f("reference_dir", e.reference_dir), f("variant_dir", e.variant_dir), f("seed", e.seed);
}

WB_FIELDS(PairsState) {
  f("version", proto::derived(1)), f("command", e.command), f("plan", proto::derived(planJson(e.plan)));
  f("pairs", e.pairs), f("status", e.status), f("cancelled_at", e.cancelled_at), f("lone_reference", e.lone_reference);
}

Status savePairs(const fs::path& out, const PairsState& st) {
  json doc = json::object();
  proto::fieldsToJson(st, doc);
  return writeFileAtomic(pairsFile(out), doc.dump(2) + "\n");
}

Result<std::vector<PairRecord>> loadPairs(const fs::path& out, const Plan& plan, std::string* lone) {
  const proto::StoredRecord doc = proto::readRecordFile(pairsFile(out));
  if (!doc.read())
    return proto::unreadableError(pairsFile(out), doc.missing() ? "it is gone" : doc.why,
                                  "its runs in " + out.string() + " are kept: restore it from a copy, or give a new --out");
  const json now = planJson(plan);
  if (const std::string d = planDifference(proto::objectOr(doc.doc, "plan"), now); !d.empty()) {
    const std::string cmd = proto::stringOr(doc.doc, "command", "");
    return makeError(Errc::InvalidConfig,
                     out.string() + " holds the pairs of another plan (" + d + "): continue it with the options it was started with" +
                         (cmd.empty() ? std::string() : " (" + cmd + ")") + ", or choose a new --out");
  }
  PairsState stored = proto::readAs<PairsState>(doc.doc);  // the plan is compared above, as written
  if (lone) *lone = stored.lone_reference;
  return stored.pairs;
}

}  // namespace wb::experiment
