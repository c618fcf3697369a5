// The search space: what this machine can run, from the ladder's plan (one home for the speedups'
// availability and their values here), as a grid of whole configs.
#include <algorithm>
#include <functional>
#include <set>

#include "wb/common/speedups.h"
#include "wb/ladder/speedup_effects.h"
#include "wb/proto/config_json.h"
#include "wb/tune/batch_finder.h"
#include "wb/tune/tune.h"
#include "wb/proto/record_files.h"

namespace wb::tune {
using nlohmann::json;

namespace {

// One value of one dimension: its words and what it does to a config.
struct Option {
  std::string words;   // "" for the value the config as given has (left out of labels)
  std::string value;   // JSON text for tune.json
  std::function<void(Config&)> apply;
};

struct Dim {
  proto::TuneDimension record;
  std::vector<Option> options;
};

const ladder::LadderStep* stepOf(const TuneOptions& o, const std::string& key) {
  for (const auto& s : o.plan)
    if (s.key == key && !s.isolated) return &s;
  return nullptr;
}

// A speedup's values: off (the ladder's baseline), the ladder's, and the config's own, each once.
Dim speedupDim(const TuneOptions& o, const std::string& key) {
  Dim d;
  d.record.key = std::string("speedups.") + key;
  const ladder::LadderStep* step = stepOf(o, key);
  if (!step || step->skipped) {
    d.record.searched = false;
    d.record.note = step ? step->note : "not in this machine's plan";
    return d;
  }
  const Config off = ladder::ladderBaseline(o.base);
  std::set<std::string> seen;
  for (const Config* from : {&o.base, &off, &step->config}) {
    const std::string words = ladder::speedupSetting(*from, key);
    if (!seen.insert(words).second) continue;
    const Config source = *from;
    const json v = proto::configToJson(source)["speedups"][key];
    d.options.push_back({from == &o.base ? "" : words, v.dump(),
                         [source, key](Config& c) { c = ladder::withSpeedupOf(c, source, key); }});
    d.record.values.push_back(v.dump());
  }
  d.record.note = step->note.empty() ? "off, the ladder's value and the config's own" : step->note;
  return d;
}

// The devices' dimension with the speedups that ride on it (sharding needs devices > 1): one more
// option each, its step's config with the devices it needs.
Dim withRiders(const TuneOptions& o, const std::string& key) {
  Dim d = speedupDim(o, key);
  for (const Speedup& rider : speedupTable()) {
    if (rider.search != Search::WithDevices) continue;
    d.record.key += std::string(", speedups.") + rider.key;
    const ladder::LadderStep* step = stepOf(o, rider.key);
    if (d.options.empty() || !step || step->skipped) {
      if (step && step->skipped) d.record.note += std::string("; ") + rider.key + ": " + step->note;
      continue;
    }
    const Config source = step->config;
    const std::string words = rider.setting(source);
    const json v = proto::configToJson(source)["speedups"][rider.key];
    d.options.push_back({words, v.dump(), [source, key, riderKey = std::string(rider.key)](Config& c) {
                           c = ladder::withSpeedupOf(c, source, key);
                           c = ladder::withSpeedupOf(c, source, riderKey);
                         }});
    d.record.values.push_back(words);
  }
  return d;
}

// Per-rank batch sizes; a size other than the base's trains at the lr scaled by the rule, after a
// warm-up (optim.lr_base_batch keeps the base it was tuned for).
Dim batchDim(const TuneOptions& o) {
  Dim d;
  d.record.key = "train.batch_size";
  const int base = o.base.train.batch_size;
  for (int b : o.batches) {
    d.record.values.push_back(std::to_string(b));
    d.options.push_back({b == base ? "" : "batch " + std::to_string(b), std::to_string(b),
                         [b, rule = o.lr_rule](Config& c) { c = withBatch(c, b, rule); }});
  }
  d.record.note = o.batches.size() > 1 ? "the base's and the batch finder's (lr: " + o.lr_rule + " rule, warmed up)"
                                       : "the base's only";
  return d;
}

// The levers past the recipe's seven, one at a time on top of the rest: each whose ladder step runs
// here (the descriptor's value; skipped where it cannot help), so the grid grows by one option per
// lever rather than doubling; searched when --only names "levers".
Dim leversDim(const TuneOptions& o) {
  Dim d;
  d.record.key = "levers";
  d.options.push_back({"", json("as given").dump(), [](Config&) {}});
  d.record.values.push_back("as given");
  for (const Speedup& lever : speedupTable()) {
    if (lever.search != Search::OneAtATime || !lever.on) continue;
    const ladder::LadderStep* step = stepOf(o, lever.key);
    if (!step || step->skipped) continue;
    const std::string words = lever.setting(step->config);
    if (words == lever.setting(o.base)) continue;  // the config has it already
    d.options.push_back({words, json(words).dump(), [source = step->config, key = std::string(lever.key)](Config& c) {
                           c = ladder::withSpeedupOf(c, source, key);
                         }});
    d.record.values.push_back(words);
  }
  // Asked for by name only: one more option per lever multiplies every other dimension's trials.
  const bool asked = std::find(o.only.begin(), o.only.end(), "levers") != o.only.end();
  d.record.searched = asked && d.options.size() > 1;
  d.record.note = d.options.size() <= 1 ? "none of the levers can help here (the ladder's plan skips them all)"
                  : asked              ? "one lever at a time on top of the rest (those the ladder's plan runs here)"
                                       : "not searched unless asked (--only ...,levers): " +
                                             std::to_string(d.options.size() - 1) + " lever(s) could, one at a time";
  if (!d.record.searched) d.options.clear();
  return d;
}

std::string labelOf(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words)
    if (!w.empty()) s += (s.empty() ? "" : ", ") + w;
  return s.empty() ? "as given" : s;
}

// Every combination of the dimensions' options, the base's values first.
std::vector<proto::TuneCandidate> grid(const Config& base, const std::vector<Dim>& dims, const std::string& prefix) {
  std::vector<proto::TuneCandidate> out;
  std::vector<size_t> at(dims.size(), 0);
  for (;;) {
    Config c = base;
    std::vector<std::string> words;
    json settings = json::object();
    for (size_t i = 0; i < dims.size(); ++i) {
      const Option& opt = dims[i].options[at[i]];
      opt.apply(c);
      words.push_back(opt.words);
      settings[dims[i].record.key] = json::parse(opt.value, nullptr, false);
    }
    char id[16];
    std::snprintf(id, sizeof id, "%s%02zu", prefix.c_str(), out.size() + 1);
    if (validate(c).empty()) out.push_back({id, labelOf(words), settings, proto::configToJson(c)});
    size_t i = 0;
    while (i < dims.size() && ++at[i] == dims[i].options.size()) at[i++] = 0;
    if (i == dims.size()) break;
  }
  return out;
}

Dim evalBatchDim(const Config& base) {
  Dim d;
  d.record.key = "train.eval_batch_size";
  for (int b : {base.train.eval_batch_size, base.train.eval_batch_size * 2}) {
    d.record.values.push_back(std::to_string(b));
    d.options.push_back({b == base.train.eval_batch_size ? "" : "eval batch " + std::to_string(b), std::to_string(b),
                         [b](Config& c) { c.train.eval_batch_size = b; }});
  }
  d.record.note = "the base's and twice it";
  return d;
}

}  // namespace

std::string candidateLabel(const proto::TuneRecord& r, const std::string& id) {
  std::string own, eval;
  for (const auto& c : r.candidates) {
    if (c.id == id) own = c.label;
    if (c.id == r.eval_choice) eval = c.label;
  }
  if (id.rfind("c", 0) != 0 || eval.empty() || eval == "as given") return own;
  return own == "as given" ? eval : own + ", " + eval;
}

const proto::TuneCandidate* findCandidate(const proto::TuneRecord& r, const std::string& id) {
  for (const auto& c : r.candidates)
    if (c.id == id) return &c;
  return nullptr;
}

Result<Config> candidateConfig(const proto::TuneRecord& r, const std::string& id) {
  const proto::TuneCandidate* c = findCandidate(r, id);
  if (!c) return makeError(Errc::InvalidConfig, std::string(proto::kTuneFile) + " has no candidate " + id);
  auto config = proto::configFromJson(c->config);
  if (!config.ok() || id.rfind("c", 0) != 0 || r.eval_choice.empty()) return config;
  if (const proto::TuneCandidate* e = findCandidate(r, r.eval_choice))
    if (auto from = proto::configFromJson(e->config); from.ok()) {
      for (const Speedup& s : speedupTable())
        if (s.search == Search::Evaluation) s.copy(*config, *from);
      config->train.eval_batch_size = from->train.eval_batch_size;
    }
  return config;
}

namespace {

// The dimensions in the grid's order, each with the name --only knows it by: the speedups with a
// dimension of their own (and those riding on them), the batch, the levers one at a time, then
// the evaluation sweep's.
struct NamedDims {
  std::vector<std::string> names;
  std::vector<Dim> train, eval;
};

NamedDims namedDims(const TuneOptions& o) {
  NamedDims n;
  for (const Speedup& s : speedupTable())
    if (s.search == Search::Dimension) {
      n.names.push_back(s.key);
      n.train.push_back(s.key == std::string(speedup::kDevices) ? withRiders(o, s.key) : speedupDim(o, s.key));
    }
  n.names.insert(n.names.end(), {"batch", "levers"});
  n.train.push_back(batchDim(o));
  n.train.push_back(leversDim(o));
  for (const Speedup& s : speedupTable())
    if (s.search == Search::Evaluation) n.eval.push_back(speedupDim(o, s.key));
  n.eval.push_back(evalBatchDim(o.base));
  n.names.insert(n.names.end(), n.eval.size(), "eval");
  return n;
}

// Each speedup a search leaves out, with why.
void addNeverSearched(Space& s) {
  for (const Speedup& sp : speedupTable())
    if (sp.search == Search::Never) s.dimensions.push_back({std::string("speedups.") + sp.key, {}, std::string("not searched: ") + sp.why, false});
}

}  // namespace

const std::vector<std::string>& dimensionNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const Speedup& s : speedupTable())
      if (s.search == Search::Dimension) n.push_back(s.key);
    n.insert(n.end(), {"batch", "levers", "eval"});
    return n;
  }();
  return names;
}

Space buildSpace(const TuneOptions& o) {
  Space s;
  NamedDims n = namedDims(o);
  std::vector<Dim*> all;
  for (auto& d : n.train) all.push_back(&d);
  for (auto& d : n.eval) all.push_back(&d);
  for (size_t i = 0; i < all.size(); ++i)  // --only: the others keep the config's value
    if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), n.names[i]) == o.only.end() && all[i]->options.size() > 0) {
      all[i]->options.clear();
      all[i]->record.searched = false;
      all[i]->record.note = "left out (--only)";
    }
  const auto keepSearched = [&s](std::vector<Dim>& dims) {
    std::vector<Dim> kept;
    for (auto& d : dims) {
      s.dimensions.push_back(d.record);
      if (d.options.size() > 0) kept.push_back(std::move(d));
    }
    dims = std::move(kept);
  };
  keepSearched(n.train);
  keepSearched(n.eval);
  addNeverSearched(s);
  if (!n.eval.empty()) s.eval = grid(o.base, n.eval, "e");
  s.train = grid(o.base, n.train, "c");
  return s;
}

Config withBatch(const Config& base, int b, const std::string& rule) {
  Config c = base;
  const int tunedFor = base.optim.lr_base_batch > 0 ? base.optim.lr_base_batch : base.train.batch_size;
  c.train.batch_size = b;
  if (b == tunedFor || rule.empty() || rule == "none") return c;
  c.optim.lr_base_batch = tunedFor;
  if (c.optim.lr_scaling == "none") c.optim.lr_scaling = rule;
  return c;
}

}  // namespace wb::tune
