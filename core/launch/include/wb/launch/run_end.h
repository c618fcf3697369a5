#pragma once
// The end of a run, written once and in one way by whoever owns the run folder: the launcher
// (for its ranks) and a rank 0 started alone under torchrun or srun (for itself).
//
// endRun, in order:
//   1. settles events.jsonl (wb::proto::settleEventsFile): records the file still refuses are
//      lost, and a run that lost any ends failed (its results cannot be read back from its folder);
//   2. completes the summary: status, error, failed_rank, the events file's figures, and the
//      run's identity (run_id, name, run_dir);
//   3. writes `error` when the run failed, summary.json atomically (before `end`: whoever sees
//      `end` can read it at once), then the run's single `end` carrying the same summary.
// The caller has already put into the summary what only it measured (the trainer's part, the
// clocks from the command's start, the CPU its ranks got, a failed rank's log tail).
// Thread affinity: the caller's; the sink is written from this thread.
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "wb/common/result.h"
#include "wb/proto/events.h"
#include "wb/proto/rundir.h"
#include "wb/proto/run_summary.h"

namespace wb::launch {

// How the run ended before its events file is settled.
struct RunEnding {
  std::string status;         // the training's end: ok | failed | cancelled | early-stopped | diverged
  std::string error;          // failed: why, in words
  std::string error_code;     // failed: the closing error event's code
  int failed_rank = -1;       // failed: the rank that failed; -1: none (or the owner itself)
  proto::RunSummary summary;  // rank 0's part with what the owner measured (see above)
};

// Where the closing records go.
struct RunEndEvents {
  int rank = -1;                                    // the owner's rank in its events (-1: the launcher)
  std::function<double()> clock;                    // the events' t
  std::function<void(const nlohmann::json&)> send;  // to the sink, and whoever follows the run
  std::string lost_code = "events_lost";            // the error code when lost records failed the run
};

struct EndedRun {
  std::string status;          // the run's status, after the events file is settled
  std::string error;           // failed: why
  int failed_rank = -1;        // failed: the rank that failed; -1: none
  proto::RunSummary summary;   // as summary.json and `end` hold it
  Status written;              // summary.json's write (an Io error naming the file)
};

EndedRun endRun(const proto::RunDir& run, const std::string& name, proto::EventSink& sink, RunEnding ending,
                const RunEndEvents& events);

}  // namespace wb::launch
