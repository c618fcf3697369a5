#pragma once
// A rank 0 started alone (under torchrun or srun, no launcher above it) owns its run folder as the
// launcher would: the folder chosen (`run_dir`, else a new one in the runs root), created, locked
// (until the OwnRun goes), refused when it already holds a run that this rank does not continue
// (--resume), config.json written, events.jsonl opened on `sink`. SIGXFSZ is ignored from then on,
// so a file size limit refuses writes (the sink holds back what events.jsonl refuses and the end
// says what was lost) instead of killing the rank.
#include <functional>
#include <optional>
#include <string>

#include "wb/common/config.h"
#include "wb/common/result.h"
#include "wb/proto/events.h"
#include "wb/proto/rundir.h"
#include "wb/launch/run_end.h"

namespace wb::launch {

struct OwnRun {
  proto::RunDir run;
  proto::RunLock lock;
};

Result<OwnRun> openOwnRun(const Config& config, const std::string& run_dir, bool resuming, proto::EventSink& sink);

// Which rank of a group started alone owns the folder: rank 0 opens it (openOwnRun); another rank
// owns none (nullopt; its events go where the caller sends them, stderr for the worker). An
// InvalidConfig error when a group of ranks has no --run-dir to agree on.
Result<std::optional<OwnRun>> openRankRun(const Config& config, const std::string& run_dir, bool resuming, int rank,
                                          int world_size, proto::EventSink& sink);

// How the training ended, as the owning rank saw it.
struct OwnRunEnding {
  std::string status, message;                    // the trainer's status and, failed, why
  proto::RunSummary summary;                      // the trainer's part
  double run_wall_s = 0;                          // from the rank's process start
  std::function<std::string()> stopped_by;        // why a cancelled run was stopped ("" when unknown),
                                                  // e.g. Slurm's word (wb/parallel/slurm.h slurmEnding)
};

// Ends the run its rank 0 owns as the launcher ends one (wb/launch/run_end.h): a cancelled run's
// error says who stopped it when stopped_by knows; an unfinished checkpoint is the failure's code.
EndedRun endOwnRun(const OwnRun& own, const Config& config, proto::EventSink& sink, OwnRunEnding ending,
                   const RunEndEvents& events);

}  // namespace wb::launch
