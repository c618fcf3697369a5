#pragma once
// Running the speedup ladder: every planned step (wb/report/ladder.h plans them) is launched
// through wb::launch::launchRun into <out>/runs/<step>/, loaded back, and the tables, the chart
// (SVG, and PNG rendered from that SVG by librsvg's rsvg-convert) and ladder.json are rewritten
// after each run, so a ladder stopped part-way keeps what it measured.
//
// Repeats run in interleaved rounds (round r runs every step once), so a noisy minute touches one
// repeat of several steps rather than every repeat of one; a run measured under contention is
// run once more at the end of its round (up to rerun_contended times).
//
// The ladder's events (JSON Lines, one object per line, proto::kEventVersion like a run's events;
// every event has v, type, rank = -1, t (seconds since the ladder started), wall):
//   ladder      out_dir, repeats, steps[{index, key, added, skipped, note, isolated}]
//   rung_start  index, steps (how many), key, added, round, run_dir
//   rung_end    index, key, round, run_dir, status (ok|failed|cancelled|early-stopped|diverged,
//               or "not-started" with error), wall_s, best_val_acc, contended, [error]
//   warning     message (an output that could not be written, e.g. the PNG)
//   end         status (ok | failed | cancelled), out_dir, ladder (report::ladderJson)
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
#include "wb/report/ladder.h"

namespace wb::ladder {

struct LadderOptions {
  std::vector<report::LadderStep> plan;     // from report::planLadder, skips already decided
  std::filesystem::path out;                // exists (with runs/), new or empty
  int repeats = 1;                          // 1..100
  int rerun_contended = 1;                  // 0..10
  std::optional<double> target_acc;         // nullopt: the baseline's lowest best val acc
  std::string cli_path;                     // workbench-cli for the rungs' ranks
  const std::atomic<bool>* stop = nullptr;  // set => no new rung starts; the running one is
                                            // stopped through launch::requestStop by the caller
  std::function<void(const nlohmann::json&)> on_event;  // the ladder's events (above)
  std::FILE* log = stderr;                  // human progress lines; nullptr for none
};

struct LadderOutcome {
  report::Ladder ladder;
  bool failed = false;      // a step that should have run has no run that ended ok
  bool cancelled = false;   // stopped before every step ran
  // The documented exit code: 0 ok, 1 a step failed, 130 cancelled.
  int exitCode() const { return cancelled ? 130 : failed ? 1 : 0; }
};

// Runs the plan. An Error only when an output cannot be written (it names the file); a step that
// fails is a row with its problem and outcome.failed.
Result<LadderOutcome> runLadder(const LadderOptions& options);

// ladder.{md,csv,tex,json,html,svg} in out, then ladder.png from ladder.svg. The PNG's failure
// (no rsvg-convert) is returned in *png_problem and does not fail the call.
Status writeLadderOutputs(const std::filesystem::path& out, const report::Ladder& ladder,
                          const std::vector<report::LadderStepRuns>& steps, std::string* png_problem = nullptr);

// Renders an SVG file to a PNG file at `zoom` × its pixel size with rsvg-convert (librsvg2-bin),
// written atomically. Error (Io) names the file, or says how to install rsvg-convert.
Status svgToPng(const std::filesystem::path& svg, const std::filesystem::path& png, double zoom = 2.0);

}  // namespace wb::ladder
