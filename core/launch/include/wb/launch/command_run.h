#pragma once
// Runs of the user's own training script: a command template whose {placeholders} take one
// arm's settings, run as `/bin/sh -c COMMAND` with its run folder in {run_dir} and in
// $WB_RUN_DIR (the Python recorder and the Lightning callback write it), supervised like a rank
// (a stop asks it to end, a hang is stopped), then read back as any run folder.
//
// The command comes from the template of wb/proto/command_template.h. Qt-free.
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "wb/common/result.h"
#include "wb/launch/launcher.h"

namespace wb::launch {

inline constexpr const char* kRunDirEnv = "WB_RUN_DIR";

struct CommandOptions {
  std::string run_dir;            // created; the command's output goes to logs/command.log
  std::string arm;                // who runs it, in every error: "the variant", "workers, pair 2"
  double idle_timeout_s = 900;    // neither events.jsonl nor the output grew this long: it hangs
  int kill_grace_s = 10;          // SIGTERM -> SIGKILL, after a stop or a hang
  // Every event the command writes to events.jsonl, as it comes (polled), then the error and
  // end the launcher adds when the command left none; on the launcher's thread.
  std::function<void(const nlohmann::json&)> on_event;
};

// Runs `command` to its end (blocks; requestStop() asks it to end: SIGTERM, then SIGKILL). The
// command runs in a session of its own, and when it ends (ok, failed, stopped or hung) nothing it
// started is left running: what is still in its session, and what left it (setsid, a double
// fork: re-parented to this process meanwhile), gets SIGTERM, kill_grace_s, then SIGKILL; each
// that had left the session is also named in a `warning` (pid and command line), in the run's
// events.jsonl when it wrote one and to on_event. Ending those too is the default because left
// running they take the CPU from the next runs and spoil their timing. A command that leaves
// nothing is not waited for. A line of events.jsonl that cannot be read (decodeEvent: not JSON,
// a step without its loss, a figure that is not a number) is skipped, not streamed: on_event
// gets a warning naming the line for the first few, and how many in all at the end. The outcome's status is the run folder's (summary.json's, else "failed"): a command that exited
// non-zero, hung, or left its folder without an end is "failed" and its summary's error names
// the arm, the command and the tail of its output; a folder the command started a run in and
// left without an end gains one (events.jsonl: error and end; summary.json). An Error only when it could not start (the
// folder cannot be made, or holds a run already: nothing is replaced).
Result<RunOutcome> launchCommand(const std::string& command, const CommandOptions& options);

}  // namespace wb::launch
