#pragma once
// A rank 0 started alone (under torchrun or srun, no launcher above it) owns its run folder as the
// launcher would: the folder chosen (`run_dir`, else a new one in the runs root), created, locked
// (until the OwnRun goes), refused when it already holds a run that this rank does not continue
// (--resume), config.json written, events.jsonl opened on `sink`. SIGXFSZ is ignored from then on,
// so a file size limit refuses writes (the sink holds back what events.jsonl refuses and the end
// says what was lost) instead of killing the rank.
#include <string>

#include "wb/common/config.h"
#include "wb/common/result.h"
#include "wb/proto/events.h"
#include "wb/proto/rundir.h"

namespace wb::launch {

struct OwnRun {
  proto::RunDir run;
  proto::RunLock lock;
};

Result<OwnRun> openOwnRun(const Config& config, const std::string& run_dir, bool resuming, proto::EventSink& sink);

}  // namespace wb::launch
