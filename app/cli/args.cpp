#include "args.h"

#include <cerrno>
#include <cstdlib>

namespace wb::cli {

Args::Args(std::vector<std::string> argv, std::set<std::string> flags, std::set<std::string> options) {
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.rfind("--", 0) != 0 || a == "--") {
      positionals_.push_back(a);
      continue;
    }
    std::string name = a.substr(2);
    std::optional<std::string> inlineValue;
    if (auto eq = name.find('='); eq != std::string::npos) {
      inlineValue = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (flags.count(name)) {
      if (inlineValue) {
        error_ = "--" + name + " takes no value";
        return;
      }
      present_.insert(name);
    } else if (options.count(name)) {
      std::string value;
      if (inlineValue) value = *inlineValue;
      else if (i + 1 < argv.size()) value = argv[++i];
      else {
        error_ = "--" + name + " needs a value";
        return;
      }
      present_.insert(name);
      values_.emplace(name, value);
    } else {
      error_ = "unknown option --" + name + " (see --help)";
      return;
    }
  }
}

bool Args::has(const std::string& name) const { return present_.count(name) > 0; }

std::optional<std::string> Args::get(const std::string& name) const {
  auto range = values_.equal_range(name);
  if (range.first == range.second) return std::nullopt;
  return std::prev(range.second)->second;  // last one wins
}

std::string Args::get(const std::string& name, const std::string& fallback) const {
  auto v = get(name);
  return v ? *v : fallback;
}

Result<int64_t> Args::getInt(const std::string& name, int64_t fallback, int64_t min, int64_t max) const {
  const auto text = get(name);
  if (!text) return fallback;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text->c_str(), &end, 10);
  const bool whole = !text->empty() && end == text->c_str() + text->size() && errno != ERANGE &&
                     text->find_first_of(" \t\n") == std::string::npos;
  if (!whole || v < min || v > max)
    return makeError(Errc::InvalidConfig, "--" + name + " " + *text + ": must be a whole number in " +
                                              std::to_string(min) + ".." + std::to_string(max));
  return static_cast<int64_t>(v);
}

std::vector<std::string> Args::all(const std::string& name) const {
  std::vector<std::string> out;
  auto range = values_.equal_range(name);
  for (auto it = range.first; it != range.second; ++it) out.push_back(it->second);
  return out;
}

}  // namespace wb::cli
