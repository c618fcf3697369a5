#pragma once
// Tiny argument reader for workbench-cli subcommands: --flag, --key value, --key=value,
// repeated keys, positionals. Unknown flags are an error naming the flag.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace wb::cli {

class Args {
 public:
  // `flags` take no value; `options` take one value (repeatable).
  Args(std::vector<std::string> argv, std::set<std::string> flags, std::set<std::string> options);
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  bool has(const std::string& name) const;
  std::optional<std::string> get(const std::string& name) const;
  std::string get(const std::string& name, const std::string& fallback) const;
  std::vector<std::string> all(const std::string& name) const;
  const std::vector<std::string>& positionals() const { return positionals_; }

 private:
  std::multimap<std::string, std::string> values_;
  std::set<std::string> present_;
  std::vector<std::string> positionals_;
  std::string error_;
};

}  // namespace wb::cli
