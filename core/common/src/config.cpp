#include "wb/common/config.h"

#include "wb/common/config_schema.h"
#include "wb/common/speedups.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "wb/common/choices.h"
#include <sstream>

namespace wb {

Config speedupsOff(Config c) {
  for (const Speedup& s : speedupTable()) s.off(c);
  return c;
}
namespace {

template <class T>
std::string str(const T& v) {
  std::ostringstream os;
  os << v;
  return os.str();
}
std::string quoted(const std::string& v) { return "\"" + v + "\""; }

bool oneOf(const std::string& v, const std::vector<Choice>& allowed) { return findChoice(allowed, v) != nullptr; }

std::string list(const std::vector<Choice>& allowed) { return "one of " + choiceValues(allowed); }

bool startsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// "fashion-mnist" itself, or <kind>:<dir> with a directory.
bool datasetSpecOk(const std::string& spec) {
  const auto& kinds = datasetKinds();
  if (spec == kinds.front().value) return true;
  for (size_t i = 1; i < kinds.size(); ++i) {
    const std::string prefix = std::string(kinds[i].value) + ":";
    if (startsWith(spec, prefix.c_str()) && spec.size() > prefix.size()) return true;
  }
  return false;
}

// "fashion-mnist | idx:<dir> | cifar10:<dir> | folder:<dir>"
std::string datasetSpecs() {
  const auto& kinds = datasetKinds();
  std::string out = kinds.front().value;
  for (size_t i = 1; i < kinds.size(); ++i) out += std::string(" | ") + kinds[i].value + ":<dir>";
  return out;
}

std::string withNote(std::string words, const FieldSpec& spec) {
  return *spec.note ? words + " " + spec.note : words;
}

// Every number field within its schema range, every enum-like field one of its choices
// (wb/common/config_schema.h).
template <class Add>
void checkSchema(const Config& c, Add& add) {
  visitFields(c, [&](const char* path, const auto& member) {
    using T = std::decay_t<decltype(member)>;
    const FieldSpec* spec = findFieldSpec(path);
    if (!spec) return;
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      if (spec->number && !spec->range.contains(static_cast<double>(member)))
        add(path, str(member), withNote("must be " + spec->range.text(), *spec));
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (spec->choices && !oneOf(member, spec->choices())) add(path, quoted(member), withNote(list(spec->choices()), *spec));
    }
  });
}

// The errors in the field list's order (configSchema), whichever check found them.
void inFieldOrder(std::vector<FieldError>& errors) {
  const auto& schema = configSchema();
  auto place = [&](const FieldError& e) {
    for (size_t i = 0; i < schema.size(); ++i)
      if (e.path == schema[i].path) return i;
    return schema.size();
  };
  std::stable_sort(errors.begin(), errors.end(), [&](const FieldError& a, const FieldError& b) { return place(a) < place(b); });
}

}  // namespace

// The schema's label first (what the window shows beside the field), the key the config file and
// --set use after it: "Epochs (train.epochs): 0 — must be in 1..1000000".
std::string FieldError::str() const {
  const FieldSpec* spec = findFieldSpec(path);
  const std::string who = spec && *spec->label ? std::string(spec->label) + " (" + path + ")" : path;
  return who + ": " + value + " \u2014 " + allowed;
}

std::string formatFieldErrors(const std::vector<FieldError>& errors) {
  std::string out;
  for (const auto& e : errors) {
    if (!out.empty()) out += "\n";
    out += e.str();
  }
  return out;
}

std::vector<FieldError> validate(const Config& c) {
  std::vector<FieldError> e;
  auto add = [&](std::string path, std::string value, std::string allowed) {
    e.push_back({std::move(path), std::move(value), std::move(allowed)});
  };

  if (c.name.empty()) add("name", "\"\"", "must not be empty");
  checkSchema(c, add);

  const auto& d = c.data;
  if (!datasetSpecOk(d.dataset))
    add("data.dataset", quoted(d.dataset), "must be " + datasetSpecs() + " (e.g. MNIST as idx:<dir>)");

  const std::string& m = c.model.name;
  if (!(oneOf(m, modelChoices()) || (startsWith(m, "torchscript:") && m.size() > 12)))
    add("model.name", quoted(m), "must be " + list(modelChoices()) + ", torchscript:<file.pt>");
  const auto& o = c.optim;
  if (o.nesterov && !(o.momentum > 0.0))
    add("optim.nesterov", "true", "needs optim.momentum > 0");

  const auto& s = c.speedups;
  if (s.sharding != "off" && s.devices < 2)
    add("speedups.sharding", quoted(s.sharding), "needs speedups.devices >= 2 (sharding splits state across ranks)");
  if (s.fused_optimizer && o.name == "adadelta")
    add("speedups.fused_optimizer", "true", "adadelta has no multi-tensor step; use sgd, adam or adamw, or turn it off");
  inFieldOrder(e);
  return e;
}

}  // namespace wb
