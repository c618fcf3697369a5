// The finals by parts: each finalist a try by parts against the config as given
// (wb/experiment/composed_try.h), in finals/<candidate>; judged by judgeFinalsByParts.
#include "tune_internal.h"

namespace wb::tune {

experiment::TryOptions finalistTryOptions(const TuneOptions& o, const std::string& id, const std::string& label,
                                          const Config& config) {
  experiment::TryOptions t;
  t.baseline = o.base;
  t.variant = config;
  t.setting = label;
  t.out = o.out / "finals" / id;
  t.policy = o.policy;  // the user's target, else the reference runs' own fair target (over their seeds)
  t.user_command = o.user_command;
  return t;
}

Result<FinalistTry> runFinalistTry(const TuneOptions& o, const experiment::TryOptions& t, const std::string& id) {
  const experiment::Hooks hooks = o.hooks;
  FinalistTry f;
  f.id = id;
  f.label = t.setting;
  f.dir = "finals/" + id;
  auto r = experiment::runComposedTry(t, o.composed, hooks);
  if (!r.ok() && (r.error().code == Errc::Cancelled || r.error().code == Errc::InvalidConfig)) return r.error();
  if (r.ok()) f.doc = r->doc;
  else f.error = r.error().message;
  return f;
}

}  // namespace wb::tune
