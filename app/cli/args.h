#pragma once
// Tiny argument reader for workbench-cli subcommands: --flag, --key value, --key=value,
// repeated keys, positionals. Unknown flags are an error naming the flag.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "wb/common/result.h"

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
  // The integer value of --name (the last one given), or fallback when absent. InvalidConfig
  // naming the option, the value and [min, max] when the value is not a whole decimal integer
  // in that range (e.g. --collective-timeout abc, 1e3, 99999999999).
  Result<int64_t> getInt(const std::string& name, int64_t fallback, int64_t min, int64_t max) const;
  const std::vector<std::string>& positionals() const { return positionals_; }

 private:
  std::multimap<std::string, std::string> values_;
  std::set<std::string> present_;
  std::vector<std::string> positionals_;
  std::string error_;
};

}  // namespace wb::cli
