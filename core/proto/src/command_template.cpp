#include "wb/proto/command_template.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "wb/common/speedups.h"
#include "wb/proto/config_json.h"

namespace wb::proto {
using nlohmann::json;

namespace {

constexpr const char* kRunDirPlaceholder = "run_dir";

// A placeholder's config path: a speedup's key stands for its field, else the name is one.
std::string placeholderPath(const std::string& name) {
  if (const Speedup* s = findSpeedup(name)) return s->config_path;
  return name;
}

std::string knownPlaceholders() {
  std::string s = "{run_dir}";
  for (const Speedup& sp : speedupTable()) s += std::string(", {") + sp.key + "}";
  return s + " or any config path such as {train.batch_size}; {{ and }} are literal braces";
}

// The template in pieces: literal text, and placeholders (their names).
struct Piece {
  std::string text;
  bool placeholder = false;
};

Result<std::vector<Piece>> parseTemplate(const std::string& tmpl) {
  std::vector<Piece> out(1);
  const json defaults = configToJson(Config{});
  for (size_t i = 0; i < tmpl.size(); ++i) {
    const char c = tmpl[i];
    const bool doubled = i + 1 < tmpl.size() && tmpl[i + 1] == c;
    if (c != '{' || doubled) {
      out.back().text += c;  // text, or a doubled brace taken as one
      if ((c == '{' || c == '}') && doubled) ++i;
      continue;
    }
    const size_t close = tmpl.find('}', i);
    if (close == std::string::npos)
      return makeError(Errc::InvalidConfig, "--command: the '{' at character " + std::to_string(i + 1) +
                                                " is never closed (placeholders read {name}; {{ is a literal brace)");
    const std::string name = tmpl.substr(i + 1, close - i - 1);
    if (name != kRunDirPlaceholder && valueAt(defaults, placeholderPath(name)).is_null())
      return makeError(Errc::InvalidConfig, "--command: {" + name + "} is not a placeholder; use " + knownPlaceholders());
    out.push_back({name, true});
    out.emplace_back();
    i = close;
  }
  return out;
}

std::string shellQuoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string valueText(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// Every leaf path of a config document, dotted.
void leafPaths(const json& doc, const std::string& prefix, std::vector<std::string>* out) {
  if (!doc.is_object()) {
    out->push_back(prefix);
    return;
  }
  for (auto it = doc.begin(); it != doc.end(); ++it) leafPaths(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
}

}  // namespace

std::string speedupPlaceholders() {
  std::string s;
  for (const Speedup& sp : speedupTable()) s += (s.empty() ? "{" : " {") + std::string(sp.key) + "}";
  return s;
}

Result<std::vector<std::string>> commandFields(const std::string& tmpl) {
  auto pieces = parseTemplate(tmpl);
  if (!pieces.ok()) return pieces.error();
  std::vector<std::string> paths;
  for (const Piece& p : *pieces) {
    if (!p.placeholder || p.text == kRunDirPlaceholder) continue;
    const std::string path = placeholderPath(p.text);
    if (std::find(paths.begin(), paths.end(), path) == paths.end()) paths.push_back(path);
  }
  return paths;
}

Result<std::string> expandCommand(const std::string& tmpl, const Config& config, const std::string& runDir) {
  auto pieces = parseTemplate(tmpl);
  if (!pieces.ok()) return pieces.error();
  const json doc = configToJson(config);
  std::string out;
  for (const Piece& p : *pieces)
    out += !p.placeholder ? p.text : shellQuoted(p.text == kRunDirPlaceholder ? runDir : valueText(valueAt(doc, placeholderPath(p.text))));
  return out;
}

namespace {
// Whether one of the fields a template reads is `path` or a section holding it.
bool reads(const std::vector<std::string>& fields, const std::string& path) {
  return std::any_of(fields.begin(), fields.end(),
                     [&](const std::string& r) { return path == r || path.compare(0, r.size() + 1, r + ".") == 0; });
}
}  // namespace

bool commandReads(const std::string& tmpl, const std::string& path) {
  auto fields = commandFields(tmpl);
  return fields.ok() && reads(*fields, path);
}

std::vector<std::string> unreadChanges(const std::string& tmpl, const Config& a, const Config& b) {
  const json da = configToJson(a), db = configToJson(b);
  const auto parsed = commandFields(tmpl);
  const std::vector<std::string> fields = parsed.ok() ? *parsed : std::vector<std::string>{};
  std::vector<std::string> paths;
  leafPaths(da, "", &paths);
  std::vector<std::string> unread;
  for (const std::string& path : paths)
    if (path != "name" && valueAt(da, path) != valueAt(db, path) && !reads(fields, path)) unread.push_back(path);
  return unread;
}

std::string notMeasurableWith(const std::string& tmpl, const Config& from, const Config& to) {
  const auto unread = unreadChanges(tmpl, from, to);
  if (unread.empty()) return {};
  std::string list;
  for (const auto& path : unread) list += (list.empty() ? "" : ", ") + path;
  return "not measurable with --command: it changes " + list + ", which the command has no placeholder for (add {" +
         unread.front() + "}, or the speedup's key, where the script takes that setting)";
}

}  // namespace wb::proto
