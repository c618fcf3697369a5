#pragma once
// The user's command template (try/ladder --command): {placeholders} that take one arm's
// settings. {run_dir}; a speedup's key (every key of speedupTable(), {workers} ... {tf32}: its
// config field, the table's config_path); or any config path ({train.batch_size}, {optim.lr}). Values are written as the
// config holds them (true/false, 4, bf16-mixed), shell-quoted. Running it is
// wb/launch/command_run.h.
#include <string>
#include <vector>

#include "wb/common/config.h"
#include "wb/common/result.h"

namespace wb::proto {

// Every speedup's placeholder, in the table's order: "{workers} ... {tf32}".
std::string speedupPlaceholders();

// The config paths the template's placeholders read ({run_dir} reads none), in order, each once;
// InvalidConfig naming an unknown placeholder and the ones there are, or an unclosed brace.
Result<std::vector<std::string>> commandFields(const std::string& tmpl);

// Whether the template reads the config path (a placeholder for it or for a section holding
// it); false for a template that does not parse.
bool commandReads(const std::string& tmpl, const std::string& path);

// The command of one run: every placeholder replaced by the config's value, shell-quoted.
Result<std::string> expandCommand(const std::string& tmpl, const Config& config, const std::string& runDir);

// The config paths on which `a` and `b` differ (their names aside) that the template does not
// read: what the command cannot be told to change.
std::vector<std::string> unreadChanges(const std::string& tmpl, const Config& a, const Config& b);

// Why going from `from` to `to` cannot be measured with the command ("" when it can): a change
// the command cannot be told of would be a guess.
std::string notMeasurableWith(const std::string& tmpl, const Config& from, const Config& to);

}  // namespace wb::proto
