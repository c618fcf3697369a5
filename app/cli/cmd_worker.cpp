// workbench-cli worker: one rank of a run, under `run`, torchrun or srun.
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <torch/torch.h>

#include "commands.h"
#include "command_setup.h"
#include "options.h"
#include "wb/common/clock.h"
#include "wb/common/format.h"
#include "wb/common/paths.h"
#include "wb/common/sysinfo.h"
#include "wb/common/timeouts.h"
#include "wb/parallel/slurm.h"
#include "wb/launch/own_run.h"
#include "wb/launch/run_end.h"
#include "wb/proto/config_json.h"
#include "wb/proto/event_types.h"
#include "wb/proto/events.h"
#include "wb/proto/rundir.h"
#include "wb/proto/run_status.h"
#include "wb/probe/peak_probe.h"
#include "wb/records/peak_store.h"
#include "wb/train/trainer.h"
#include "worker_dist.h"

namespace wb::cli {
namespace fs = std::filesystem;

namespace {

const char* kWorkerAbout = R"(one rank of a run (what `run` spawns; also under torchrun --no-python or srun)

One rank of a run. `workbench-cli run` spawns these; on a cluster run them under
  torchrun --no-python --nproc-per-node N workbench-cli worker --config exp.json --run-dir /shared/runs/x
  srun --ntasks N workbench-cli worker --config exp.json --run-dir /shared/runs/x
The rank reads only RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT (or SLURM_PROCID,
SLURM_NTASKS, SLURM_LOCALID and MASTER_ADDR/MASTER_PORT under srun); `run` gives its ranks
WB_STORE_FILE=<run folder>/.rendezvous instead of MASTER_ADDR/MASTER_PORT (a c10d FileStore:
nothing listens beyond loopback). Without --events-stdout, rank 0
writes the run directory itself (config.json, events.jsonl, summary.json, checkpoints/).)";

struct WorkerOptions {
  ExperimentOptions experiment;
  std::string run_dir, resume;
  bool events_stdout = false;
  int collective_timeout = kDefaultCollectiveTimeoutS;
};

// One rank's stream: where its events go and the clock they carry.
struct RankEvents {
  proto::EventSink sink;
  Stopwatch clock;
  int rank = 0;

  void write(const nlohmann::json& ev) { sink.write(ev); }
  template <class E>
  void write(const E& e) { sink.write(proto::toEvent(e, rank, clock.seconds())); }

  // A rank that cannot train: the error and a failed (or cancelled) end, and its exit code.
  int fail(const Error& e) {
    std::fprintf(stderr, "workbench-cli worker (rank %d): %s\n", rank, e.message.c_str());
    write(proto::ErrorEvent{e.message, errcName(e.code), std::nullopt});
    proto::EndEvent end;
    end.status = e.code == Errc::Cancelled ? proto::kStatusCancelled : proto::kStatusFailed;
    end.summary.error = e.message;
    end.summary.status = end.status;
    write(end);
    return exitCodeFor(e.code);
  }
};

// The peaks this run's FLOP/s are set against: this machine's stored calibration (and, on a
// GPU, its datasheet entry). Without a calibration the figures say how to make one.
proto::FlopsFigures runPeaks(const Config& c, int localRank, int worldSize) {
  proto::FlopsFigures f;
  const auto gpus = probe::machineGpus();
  const auto peak = records::loadPeak(records::thisMachine(), gpus);
  const bool cuda = torch::cuda::is_available() && !gpus.empty();
  const std::string gpu = cuda ? gpus[static_cast<size_t>(localRank) % gpus.size()] : "";
  records::setPeaks(f, peak ? &*peak : nullptr, cuda ? "cuda:0" : "cpu", gpu, c.speedups.precision, worldSize);
  return f;
}

// The trainer's run; LibTorch's and the library's exceptions become an error naming the rank.
Result<train::TrainOutcome> trainRank(const train::TrainerOptions& to, proto::EventSink& sink) {
  train::Trainer trainer(to, sink);
  try {
    return trainer.run();
  } catch (const c10::Error& e) {
    return makeError(Errc::Internal, std::string("LibTorch: ") + e.what_without_backtrace());
  } catch (const std::exception& e) {
    return makeError(Errc::Internal, prefixedByRank(to.rank, e.what()));
  }
}

// What a rank that trained but ended badly says on stderr; the exit code its status maps to.
int rankExitCode(int rank, const std::string& status, const std::string& message) {
  if (status == proto::kStatusFailed || status == proto::kStatusDiverged)
    std::fprintf(stderr, "rank %d: %s: %s\n", rank, status.c_str(), message.c_str());
  return proto::exitCodeForStatus(status);
}

// A rank under a launcher (or not rank 0): an error first when it trained but owes something (a
// checkpoint), then `end` with its summary; the launcher, or rank 0, ends the run.
int finishRank(RankEvents& events, const train::TrainOutcome& outcome) {
  if (outcome.status == proto::kStatusFailed)
    events.write(proto::ErrorEvent{outcome.message, errcName(Errc::Checkpoint), std::nullopt});
  proto::EndEvent end;
  end.status = outcome.status;
  end.summary = outcome.summary;
  end.summary.status = outcome.status;
  events.write(end);
  return rankExitCode(events.rank, outcome.status, outcome.message);
}

// A rank 0 started alone (torchrun / srun, no --events-stdout) ends the run it owns as the
// launcher does; a stop may be Slurm's (scancel, a time limit), which only slurmctld can name.
int endOwnRun(RankEvents& events, const launch::OwnRun& own, const Config& config, const train::TrainOutcome& outcome) {
  launch::RunEndEvents out;
  out.rank = events.rank;
  out.clock = [&events] { return events.clock.seconds(); };
  out.send = [&events](const nlohmann::json& ev) { events.write(ev); };
  out.lost_code = errcName(Errc::Io);
  const launch::EndedRun ended = launch::endOwnRun(
      own, config, events.sink, {outcome.status, outcome.message, outcome.summary, processAgeSeconds(), parallel::slurmEnding}, out);
  if (!ended.written.ok())
    std::fprintf(stderr, "rank %d: %s\n", events.rank, ended.written.error().message.c_str());
  return rankExitCode(events.rank, ended.status, ended.error);
}

int workerCommand(const WorkerOptions& o) {
  installStopSignals();
  RankEvents events;
  if (o.events_stdout) events.sink.setStream(stdout);
  auto env = readDistEnv();
  if (!env.ok()) return events.fail(env.error());
  events.rank = env->rank;
  auto config = resolveConfig(o.experiment);
  if (!config.ok()) return events.fail(config.error());

  std::optional<launch::OwnRun> own;  // rank 0 of a standalone run holds the folder until it returns
  if (!o.events_stdout) {
    auto opened = launch::openRankRun(*config, o.run_dir, !o.resume.empty(), env->rank, env->world_size, events.sink);
    if (!opened.ok()) return events.fail(opened.error());
    own = std::move(opened).value();
    if (own) std::fprintf(stderr, "rank 0 writes %s\n", own->run.root.string().c_str());
    else events.sink.setStream(stderr);
  }
  auto comm = connectDist(*env, *config, o.collective_timeout);
  if (!comm.ok()) return events.fail(comm.error());

  train::TrainerOptions to;
  to.config = *config;
  if (own) to.run_dir = own->run.root.string();
  else if (!o.run_dir.empty()) to.run_dir = fs::absolute(o.run_dir).string();
  to.resume_from = o.resume;
  to.rank = env->rank;
  to.world_size = env->world_size;
  to.local_rank = env->local_rank;
  to.local_world_size = env->local_world_size;
  to.comm = comm->get();
  to.stop_flag = &stopFlag();
  to.peaks = runPeaks(*config, env->local_rank, env->world_size);
  auto outcome = trainRank(to, events.sink);
  if (!outcome.ok()) return events.fail(outcome.error());
  const int code = own ? endOwnRun(events, *own, *config, *outcome) : finishRank(events, *outcome);
  // Everything is written (events flushed per record, checkpoints and summary renamed into
  // place). A lone rank leaves without tearing down the loaders, the model and LibTorch's
  // statics (~0.1 s its launcher and the window would wait for); ranks of a group keep the
  // orderly teardown of their process group.
  if (env->world_size == 1) {
    std::fflush(nullptr);
    std::_Exit(code);
  }
  return code;
}

}  // namespace

void addWorker(CLI::App& cli, Commands& out) {
  auto o = std::make_shared<WorkerOptions>();
  CLI::App* worker = cli.add_subcommand("worker", kWorkerAbout);
  addExperimentOptions(*worker, o->experiment, "the experiment (as for run)");
  worker->add_option("--run-dir", o->run_dir,
                     "the run folder (shared by all ranks; required without --events-stdout\n"
                     "when WORLD_SIZE > 1)")
      ->type_name("DIR")->check(utf8Path("--run-dir"));
  worker->add_option("--resume", o->resume, "checkpoint to continue from (a last.pt)")
      ->type_name("FILE")->check(utf8Path("--resume"));
  worker->add_flag("--events-stdout", o->events_stdout, "events as JSON Lines on stdout (the launcher reads them)");
  worker->add_option("--collective-timeout", o->collective_timeout,
                     "seconds before a collective with a dead peer fails (default " +
                         std::to_string(kDefaultCollectiveTimeoutS) + ")")
      ->type_name("S")->check(inRange(1, 86400));
  out.push_back({worker, [o] { return workerCommand(*o); }});
}

}  // namespace wb::cli
