#pragma once
// Where this process sits in a distributed run, read from the launcher's environment.
//
// Sources, first match wins (a Slurm batch script's own process, outside srun, is one process):
//   torchrun / workbench-cli run: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT
//   srun (Slurm):                 SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NTASKS_PER_NODE, plus MASTER_ADDR and
//                                 MASTER_PORT exported by the batch script
//   nothing set (or world size 1 without MASTER_PORT): one process, no process group.
// workbench-cli run on one machine: WB_STORE_FILE=<run folder>/.rendezvous instead of
// MASTER_ADDR/MASTER_PORT, so the ranks meet through a c10d FileStore and nothing listens beyond
// loopback (a TCPStore server listens on every interface).
// Optional: WB_RUN_ID (or torchrun's TORCHELASTIC_RUN_ID, plus TORCHELASTIC_RESTART_COUNT)
// namespaces the rendezvous keys, so a rank that reaches another run's (or an earlier attempt's)
// store fails instead of joining it. TORCHELASTIC_USE_AGENT_STORE=True (torchrun >= 2.x): the
// torchrun agent already hosts the TCPStore on MASTER_PORT, so rank 0 connects instead of hosting.
//
// Std-only header; no torch. Pure functions, any thread.
#include <functional>
#include <string>

#include "wb/common/result.h"

namespace wb::parallel {

struct DistEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;                    // selects the GPU with NCCL (one GPU per rank)
  int local_world_size = 1;              // ranks on this host (they share its cores)
  std::string master_addr = "127.0.0.1";
  int master_port = 0;                   // 0 = none (single process)
  std::string run_id = "default";        // rendezvous key namespace
  std::string source = "none";           // "torchrun" | "slurm" | "local" | "none" (messages, `start`)
  bool agent_store = false;              // the launcher hosts the store: every rank is a client
  std::string store_file;                // set: rendezvous through this FileStore, not a TCPStore

  // True when a launcher asked for a process group (every rank must then call
  // Communicator::create). False for a plain single process.
  bool launched() const { return master_port != 0 || !store_file.empty(); }
  bool isMain() const { return rank == 0; }

  // The environment of this process.
  static Result<DistEnv> fromEnvironment();
  // Same rules over any lookup (returns nullptr for unset variables); used by tests.
  static Result<DistEnv> fromLookup(const std::function<const char*(const char*)>& getenv);

  // A launched env for ranks on this machine (what the local launcher exports).
  static DistEnv local(int rank, int world_size, int master_port);

  // "rank 1/4 (local 1) via torchrun, rendezvous 127.0.0.1:29500"
  std::string describe() const;
};

// A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0, read it, close).
// Racy by nature: use it right away. Errors (Errc::Distributed) when no socket can be bound.
Result<int> findFreePort();

}  // namespace wb::parallel
