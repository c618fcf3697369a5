#include "wb/advice/workers_advice.h"

#include <algorithm>

#include "wb/proto/rundir.h"

namespace wb::advice {
using nlohmann::json;

int ruleOfThumbWorkers(int cores) { return std::max(1, std::min(cores > 0 ? cores : 1, kRuleOfThumbMaxWorkers)); }

std::string WorkersAdvice::source() const {
  if (!measured) return "the rule of thumb min(cores, " + std::to_string(kRuleOfThumbMaxWorkers) + ")";
  return "the worker probe of " + (date.empty() ? std::string("an earlier date") : date) +
         (contended ? ", measured under contention" : "");
}

WorkersAdvice ruleOfThumbAdvice(int cores) {
  WorkersAdvice a;
  a.workers = ruleOfThumbWorkers(cores);
  return a;
}

WorkersAdvice ruleOfThumbFor(const records::RunRecord& run) { return ruleOfThumbAdvice(run.cores()); }

void attachWorkersAdvice(json& caps, const WorkersAdvice& a) {
  if (!a.measured) return;
  if (!caps.is_object()) caps = json::object();
  if (!caps["speedups"].is_object()) caps["speedups"] = json::object();
  if (!caps["speedups"]["workers"].is_object()) caps["speedups"]["workers"] = json::object();
  caps["speedups"]["workers"]["probe"] = {{"recommended", a.workers}, {"date", a.date}, {"contended", a.contended},
                                          {"data_not_bottleneck", a.data_not_bottleneck}};
}

WorkersAdvice workersAdvice(const json& caps) {
  const auto object = [](const json& j, const char* key) -> const json* {
    auto it = j.is_object() ? j.find(key) : j.end();
    return j.is_object() && it != j.end() && it->is_object() ? &*it : nullptr;
  };
  WorkersAdvice a = ruleOfThumbAdvice(static_cast<int>(proto::intOr(caps, "cores", 1)));
  const json* sp = object(caps, "speedups");
  const json* w = sp ? object(*sp, "workers") : nullptr;
  const json* probe = w ? object(*w, "probe") : nullptr;
  if (!probe || !probe->contains("recommended") || !(*probe)["recommended"].is_number_integer()) return a;
  const int recommended = (*probe)["recommended"].get<int>();
  if (recommended < 0) return a;
  a.workers = recommended;
  a.measured = true;
  a.date = proto::stringOr(*probe, "date", "");
  a.contended = proto::boolOr(*probe, "contended", false);
  a.data_not_bottleneck = proto::boolOr(*probe, "data_not_bottleneck", false);
  return a;
}

}  // namespace wb::advice
