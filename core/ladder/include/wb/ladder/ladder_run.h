#pragma once
// Running the speedup ladder: the plan (wb/ladder/ladder.h, planForMachine) goes to the paired
// runner (wb/experiment/paired_runner.h), adaptively until each verdict is clear or a cap is
// reached (or exactly `fixed_pairs` pairs: --repeats).
//   greedy (the default): the steps in turn, each as pairs against the configuration kept so far
//     (reference then step, then step then reference, ...) in <out>/steps/<slug>/; a step is kept
//     only when clearly faster; one within noise, slower, failed or short of the target is
//     dropped ("dropped: …" in its row);
//     then the kept configuration against the baseline (the "kept" row), written as
//     <out>/kept.json for `workbench-cli run --config`. <out>/plan.json names the plan.
//   cumulative: every runnable step is a variant run as pairs against the baseline into
//     <out>/runs/ (pairs.json).
// After each pair the tables, the chart (SVG, and PNG rendered from that SVG by librsvg's
// rsvg-convert) and ladder.json are rewritten, so a ladder stopped part-way keeps what it
// measured; a pair cut by SIGINT/SIGTERM gives no speedup, ladder.json says "cancelled at step
// <key>" and the steps not run say "not run (cancelled)". Run again into the same --out, the
// ladder continues: the finished pairs are reused (pairs.json), a different plan is refused.
//
// The ladder's events (JSON Lines, one object per line, proto::kEventVersion like a run's events;
// every event has v, type, rank = -1, t (seconds since the ladder started), wall):
//   ladder      out_dir, repeats (0: adaptive), steps[{index, key, added, skipped, note, isolated}]
//   rung_start  index, steps (how many), key, added, round (the pair), run_dir
//   rung_end    index, key, round, run_dir, status (ok|failed|cancelled|early-stopped|diverged,
//               or "not-started" with error), wall_s, best_val_acc, contended, [error]
//   pair_end    index, key, pair, variant_first, counted, settled, estimate{to_target, throughput, wall}
//   warning     message (an output that could not be written, e.g. the PNG)
//   end         status (ok | failed | cancelled), out_dir, ladder (ladder.json's ladder)
// Readers ignore unknown fields and types.
//
// Thread affinity: runLadder blocks its caller; on_event and the log are called on that thread.
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/result.h"
#include "wb/experiment/composed_try.h"
#include "wb/experiment/paired_runner.h"
#include "wb/ladder/ladder.h"

namespace wb::ladder {

struct LadderOptions {
  std::vector<LadderStep> plan;             // from planForMachine, skips already decided
  std::filesystem::path out;                // new, empty, or a ladder's folder to continue
  experiment::Policy policy;                // pairs: fixed (--repeats) or adaptive, caps, noise band
  // The runner's: workbench-cli, the stop flag, the ladder's events (above), progress lines and
  // the command line (named when a plan differs); on_pair is the ladder's own.
  experiment::Hooks hooks;
  bool greedy = true;                       // false: --cumulative
  experiment::UserCommand user_command;     // set: every run is the user's command; a step that
                                            // changes what it cannot be told is skipped, not guessed
  // Greedy: a step whose change switches in one process is measured by parts (a try by parts,
  // wb/experiment/composed_try.h, in its step folder) instead of pairs; the others by pairs.
  bool by_parts = false;
  experiment::ComposedOptions composed;
  // What this machine offers the speedups, as the plan read it (ladderHere): greedy asks a step's
  // descriptor again whether it can help the configuration kept.
  Here here;
};

struct LadderOutcome {
  Ladder ladder;
  bool failed = false;      // a step that should have run has no run that ended ok
  bool cancelled = false;   // stopped before every step ran
  bool resumed = false;     // finished pairs of an earlier, cut ladder were reused
  // The documented exit code: 0 ok, 1 a step failed, 130 cancelled.
  int exitCode() const { return cancelled ? 130 : failed ? 1 : 0; }
};

// --command: a step whose change the command cannot be told of is skipped, its note saying
// which setting lacks a placeholder. A greedy step changes only its own speedup (on what was
// kept); a cumulative one, everything since the baseline. runLadder applies it; `--dry-run`
// shows it.
void skipUnmeasurable(std::vector<LadderStep>& plan, const experiment::UserCommand& command, bool greedy);

// Runs (or continues) the plan. An Error when an output cannot be written (Io, naming the file)
// or --out holds another plan's ladder (InvalidConfig, saying what differs and what to do); a
// step that fails is a row with its problem and outcome.failed.
Result<LadderOutcome> runLadder(const LadderOptions& options);

// ladder.{md,csv,tex,json,html,svg} in out, then ladder.png from ladder.svg. The PNG's failure
// (no rsvg-convert) is returned in *png_problem and does not fail the call.
Status writeLadderOutputs(const std::filesystem::path& out, const ladder::Ladder& ladder,
                          const std::vector<ladder::LadderStepRuns>& steps, std::string* png_problem = nullptr);

}  // namespace wb::ladder
