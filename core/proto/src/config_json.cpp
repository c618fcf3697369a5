#include "wb/proto/config_json.h"

#include "wb/common/config_schema.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <type_traits>

namespace wb::proto {
using nlohmann::json;

namespace {

json::json_pointer pointer(const std::string& dotted) {
  std::string p = "/" + dotted;
  for (auto& ch : p)
    if (ch == '.') ch = '/';
  return json::json_pointer(p);
}

std::string typeWord(const std::string&) { return "a string"; }
std::string typeWord(bool) { return "true or false"; }
std::string typeWord(double) { return "a number"; }
template <class T>
std::string typeWord(T) {
  return "an integer in " + std::to_string(std::numeric_limits<T>::min()) + ".." +
         std::to_string(std::numeric_limits<T>::max());
}

// What an integer field takes: the schema's range ("an integer in 1..1000000"), or from the schema's
// least to the most its type holds when the schema sets no most ("an integer in 0..2147483647").
template <class T>
std::string typeWordOf(const char* path, const T& member) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    const FieldSpec* spec = findFieldSpec(path);
    if (!spec || !spec->number) return typeWord(member);
    const std::string note = *spec->note ? std::string(" ") + spec->note : "";
    if (spec->range.bounded()) return "an integer " + spec->range.text() + note;
    const double least = std::isfinite(spec->range.min) ? spec->range.min + (spec->range.min_included ? 0 : 1) : double(std::numeric_limits<T>::min());
    return "an integer in " + std::to_string(static_cast<long long>(least)) + ".." + std::to_string(std::numeric_limits<T>::max()) + note;
  }
  return typeWord(member);
}

// False when j is not an integer or does not fit T (no silent wrap-around: 4294967297 is not 1).
template <class T>
bool readInteger(const json& j, T& out) {
  using L = std::numeric_limits<T>;
  if (j.is_number_unsigned()) {
    const auto u = j.get<uint64_t>();
    if (u > static_cast<uint64_t>(L::max())) return false;
    out = static_cast<T>(u);
  } else if (j.is_number_integer()) {
    const auto i = j.get<int64_t>();
    if constexpr (std::is_unsigned_v<T>) {
      if (i < 0) return false;
    } else {
      if (i < static_cast<int64_t>(L::min()) || i > static_cast<int64_t>(L::max())) return false;
    }
    out = static_cast<T>(i);
  } else if (j.is_number_float()) {
    // max() + 1.0 is a power of two, exact in a double: the first value past the range.
    const double d = j.get<double>();
    if (!(d >= static_cast<double>(L::min()) && d < static_cast<double>(L::max()) + 1.0) || d != std::floor(d))
      return false;
    out = static_cast<T>(d);
  } else {
    return false;
  }
  return true;
}

template <class T>
bool readValue(const json& j, T& out) {
  if constexpr (std::is_same_v<T, std::string>) {
    if (!j.is_string()) return false;
    out = j.get<std::string>();
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!j.is_boolean()) return false;
    out = j.get<bool>();
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!j.is_number()) return false;
    out = j.get<double>();
  } else {
    return readInteger(j, out);
  }
  return true;
}

void collectLeaves(const json& j, const std::string& prefix, std::vector<std::string>& out) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    std::string path = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it->is_object() && !it->empty()) collectLeaves(*it, path, out);
    else out.push_back(path);
  }
}

}  // namespace

json valueAt(const json& doc, const std::string& dotted) {
  try {
    return doc.value(pointer(dotted), json());
  } catch (const json::exception&) {  // a path no field can have ("a~b")
    return json();
  }
}

std::string commandOf(const json& doc) {
  return doc.is_object() && doc.contains(kCommandKey) && doc[kCommandKey].is_string() ? doc[kCommandKey].get<std::string>() : "";
}

namespace {

std::set<std::string> knownPaths() {
  std::set<std::string> known;
  Config c;
  visitFields(c, [&](const char* path, auto&) { known.insert(path); });
  return known;
}

std::vector<FieldError> parseInto(const json& doc, Config& c) {
  std::vector<FieldError> errors;
  if (!doc.is_object()) {
    errors.push_back({"(document)", doc.dump(), "must be a JSON object"});
    return errors;
  }
  const auto known = knownPaths();
  std::vector<std::string> leaves;
  collectLeaves(doc, "", leaves);
  for (const auto& leaf : leaves) {
    if (leaf == kCommandKey && doc[kCommandKey].is_string()) continue;  // the experiment's own command
    if (!known.count(leaf)) {
      // A known section given as a non-object, or a typo'd key.
      errors.push_back({leaf, doc.at(pointer(leaf)).dump(), "unknown field (check the spelling; see docs/runs.md \"Config\")"});
    }
  }
  visitFields(c, [&](const char* path, auto& member) {
    auto ptr = pointer(path);
    if (!doc.contains(ptr)) return;
    const json& j = doc.at(ptr);
    if (!readValue(j, member)) errors.push_back({path, j.dump(), "must be " + typeWordOf(path, member)});
  });
  return errors;
}

// Parse errors, then the semantic errors of the fields that parsed (a field that did not keeps
// its default, so it adds nothing twice): one kind never hides another.
std::vector<FieldError> allErrors(const json& doc, Config& c) {
  auto errors = parseInto(doc, c);
  if (!doc.is_object()) return errors;
  std::set<std::string> reported;
  for (const auto& e : errors) reported.insert(e.path);
  for (auto& e : validate(c))
    if (!reported.count(e.path)) errors.push_back(std::move(e));
  return errors;
}

// 1-based line and column of byte offset `at` in text.
std::string lineColumn(const std::string& text, size_t at) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < at && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return std::to_string(line) + ":" + std::to_string(column);
}

// nlohmann's message without its "[json.exception.parse_error.101] parse error at line 1,
// column 2: " prefix (the position is given in file:line:column form).
std::string parseReason(const std::string& what) {
  const auto colon = what.find(": ");
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

}  // namespace

namespace {
template <class T>
const char* typeName() {
  if constexpr (std::is_same_v<T, bool>) return "boolean";
  else if constexpr (std::is_integral_v<T>) return "integer";
  else if constexpr (std::is_floating_point_v<T>) return "number";
  else return "string";
}
json bound(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
}  // namespace

json schemaJson() {
  json fields = json::array();
  const Config defaults;
  visitFields(defaults, [&](const char* path, const auto& member) {
    using T = std::decay_t<decltype(member)>;
    const FieldSpec* spec = findFieldSpec(path);
    json f = {{"path", path}, {"type", typeName<T>()}, {"default", member},
              {"label", spec ? spec->label : path}, {"help", spec ? spec->help : ""}};
    if (spec && spec->number)
      f.update({{"min", bound(spec->range.min)}, {"max", bound(spec->range.max)},
                {"min_included", spec->range.min_included}, {"max_included", spec->range.max_included}});
    if (spec && spec->choices) {
      json values = json::array();
      for (const Choice& c : spec->choices()) values.push_back({{"value", c.value}, {"label", c.label}, {"help", c.help}});
      f["choices"] = values;
    }
    fields.push_back(std::move(f));
  });
  return fields;
}

json configToJson(const Config& config) {
  json doc = json::object();
  visitFields(config, [&](const char* path, const auto& member) { doc[pointer(path)] = member; });
  return doc;
}

std::vector<FieldError> configErrors(const json& doc) {
  Config c;
  return allErrors(doc, c);
}

Result<Config> configFromJson(const json& doc) {
  Config c;
  auto errors = allErrors(doc, c);
  if (!errors.empty()) return makeError(Errc::InvalidConfig, formatFieldErrors(errors));
  return c;
}

namespace {
template <class T>
bool holds(const json& j) {
  if constexpr (std::is_same_v<T, bool>) return j.is_boolean();
  else if constexpr (std::is_integral_v<T>) return j.is_number_integer();
  else if constexpr (std::is_floating_point_v<T>) return j.is_number();
  else if constexpr (std::is_same_v<T, std::string>) return j.is_string();
  else return false;
}
}  // namespace

Config configAsWritten(const json& doc) {
  Config c;
  visitFields(c, [&doc](const std::string& dotted, auto& member) {
    using T = std::decay_t<decltype(member)>;
    if (const json j = valueAt(doc, dotted); holds<T>(j)) member = j.get<T>();
  });
  return c;
}

Result<json> readConfigDocument(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return makeError(Errc::InvalidConfig, path + ": cannot open the config file (check the path)");
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return json::parse(text.str());
  } catch (const json::parse_error& e) {
    // e.byte is 1-based: the byte at which parsing failed.
    return makeError(Errc::InvalidConfig, path + ":" + lineColumn(text.str(), e.byte > 0 ? e.byte - 1 : 0) +
                                              ": not valid JSON: " + parseReason(e.what()));
  } catch (const json::exception& e) {  // e.g. a number that overflows a double
    return makeError(Errc::InvalidConfig, path + ": not valid JSON: " + parseReason(e.what()));
  }
}

Result<Config> loadConfigFile(const std::string& path) {
  auto doc = readConfigDocument(path);
  if (!doc.ok()) return doc.error();
  auto r = configFromJson(*doc);
  if (!r.ok()) return makeError(Errc::InvalidConfig, path + ":\n" + r.error().message);
  return r;
}

Status applyOverride(json& doc, const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    return makeError(Errc::InvalidConfig, "--set " + assignment + ": expected key.path=value, e.g. optim.lr=0.05");
  const std::string key = assignment.substr(0, eq);
  const std::string raw = assignment.substr(eq + 1);
  if (!knownPaths().count(key))
    return makeError(Errc::InvalidConfig, "--set " + key + ": unknown field (see docs/runs.md \"Config\" for the names)");
  json value;
  try {
    value = json::parse(raw);
    if (value.is_object() || value.is_array()) value = raw;
  } catch (const json::exception&) {  // not JSON, or a number out of a double's range
    value = raw;
  }
  // Keep strings that look like numbers as strings where the field is a string.
  Config defaults;
  json def = configToJson(defaults);
  if (def.at(pointer(key)).is_string() && !value.is_string()) value = raw;
  doc[pointer(key)] = value;
  return {};
}

}  // namespace wb::proto
