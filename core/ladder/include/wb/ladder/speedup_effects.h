#pragma once
// What each speedup measured on this machine, for the window's speedup rows: from the newest
// ladder (its isolated row when it ran one, else the step's own speedup over the step before it),
// from the newest `try` of that speedup (Try vs baseline) and from the stored worker probe, each
// with its date, its interval and verdict; only a clear "faster" counts as a speedup. Values
// only, except latestLadder and latestTries (read the folders under the runs roots).
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "wb/ladder/ladder.h"
#include "wb/probe/record.h"

namespace wb::ladder {

struct SpeedupEffect {
  std::string text;        // "1.42× to target alone (acc 84.1 %)", "not reached (acc 62.8 %)", "skipped: …"
  std::optional<double> speedup;  // set only for a valid speedup at equal accuracy
  std::string source;      // "ladder" | "try" | "probe"
  std::string date;        // "2026-12-01 08:40 UTC"
};

// Per speedup key (speedupTable()'s): what the ladder measured. Keys the ladder did not run are absent.
std::map<std::string, SpeedupEffect> ladderEffects(const Ladder& ladder, const std::string& date);

// The probe's line for the workers row: the count it recommends, its samples/s against 0
// workers with the interval over the probe's rounds (a speedup only when clearly faster), and
// whether the data path is the bottleneck.
SpeedupEffect probeEffect(const probe::ProbeResult& probe);

// A try.json's line (wb/experiment/try.h): "precision bf16-mixed: 1.02× [0.91, 1.14] within
// noise to target, 3 pair(s)".
SpeedupEffect tryEffect(const nlohmann::json& tryDoc, const std::string& date);
// Per speedup key, the newest try.json naming it under the roots (each root and its direct
// sub-folders, where `workbench-cli try` writes by default).
std::map<std::string, SpeedupEffect> latestTries(const std::vector<std::filesystem::path>& roots);

struct FoundLadder {
  std::string dir;
  std::string date;        // ladder.json's modification time, UTC
  Ladder ladder;
};
// The newest readable ladder in the given roots: each root itself and its direct sub-folders
// holding a ladder.json (where `workbench-cli ladder` writes by default), newest by
// ladder.json's modification time. nullopt when there is none.
std::optional<FoundLadder> latestLadder(const std::vector<std::filesystem::path>& roots);

// "Try vs baseline": the baseline's config with one speedup changed, nothing else. The value is
// the set-up's (`panel`) when it differs from the baseline's, else what the ladder would run for
// that speedup alone (planLadder with isolated steps: the stored probe's worker count when
// `capabilities` carries it, 2 CPU processes or the GPUs, bf16/fp16, patience 2, zero1 with the
// devices it needs, inference-mode eval). InvalidConfig naming the speedup when the machine
// cannot do it (the ladder's reason) or the key is unknown.
Result<Config> withOneSpeedup(const Config& baseline, const Config& panel, const std::string& key,
                              const nlohmann::json& capabilities);
// The speedup's setting in words: "workers 2", "precision bf16-mixed", "patience 2", …
std::string speedupSetting(const Config& config, const std::string& key);
// `base` with speedup `key` as `from` has it (the greedy ladder: a step's speedup on the
// configuration kept so far); a result on more than one device takes `from`'s lr scaling rule.
Config withSpeedupOf(const Config& base, const Config& from, const std::string& key);

}  // namespace wb::ladder
