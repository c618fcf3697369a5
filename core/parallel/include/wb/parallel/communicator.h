#pragma once
// A process group for one run: TCPStore rendezvous + ProcessGroupGloo (CPU) or ProcessGroupNCCL
// (one GPU per rank, chosen by LOCAL_RANK), plus the few collectives a training loop needs.
//
// Contract
// - Collective: every rank calls create() and then the same collectives in the same order.
// - Thread affinity: one thread (the training thread) calls the methods; DataParallel's
//   backward hooks launch bucket all-reduces from autograd threads, which is safe with it.
// - Errors: nothing hangs. Rendezvous problems (port in use, a rank that never arrives, a
//   WORLD_SIZE or RANK mismatch, rank 0 unreachable) fail within the rendezvous timeout; a
//   collective whose peer died or stopped answering fails within the collective timeout. All
//   come back as Errc::Distributed errors whose message names the rank, the variable or the
//   port and says what to do.
// - Ownership: the Communicator owns the store and the process group; destroy it after every
//   DataParallel that uses it.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "wb/common/result.h"
#include "wb/parallel/env.h"

namespace wb::parallel {

enum class Backend { Gloo, Nccl };

// "gloo" | "nccl" (case-sensitive); the error names the accepted values.
Result<Backend> parseBackend(const std::string& name);
const char* backendName(Backend backend);
// True when this build of wb_parallel has ProcessGroupNCCL compiled in (LibTorch with CUDA + NCCL).
bool ncclCompiled();
// The NCCL library this process runs with ("2.22.3", from NCCL itself); "" without NCCL.
std::string ncclVersion();

enum class ReduceOp { Sum, Mean, Max, Min };

struct CommOptions {
  Backend backend = Backend::Gloo;
  // Per collective: a peer that is dead or stuck fails the collective after this long.
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  // Store connect + every rank joining + process-group setup; 0 = same as `timeout`.
  std::chrono::milliseconds rendezvous_timeout{0};
};

class Communicator {
 public:
  // Sets up the group for `env`. When !env.launched() (a plain single process) returns a local
  // communicator (world size 1, no store, no group; collectives are identities). With NCCL,
  // selects cuda:LOCAL_RANK first. With env.store_file (workbench-cli run on one machine) the
  // ranks meet through a c10d FileStore and nothing listens beyond loopback; otherwise rank 0
  // hosts the TCPStore (listening on MASTER_PORT; LibTorch 1.13 listens on every interface,
  // clients connect to MASTER_ADDR). The Gloo device binds to 127.0.0.1 when MASTER_ADDR is a
  // loopback address (the default with a store file), to GLOO_SOCKET_IFNAME when set, else to
  // this host's name.
  static Result<std::unique_ptr<Communicator>> create(const DistEnv& env, const CommOptions& options = {});
  static std::unique_ptr<Communicator> local();

  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const;
  int worldSize() const;
  int localRank() const;
  Backend backend() const;
  bool hasGroup() const;            // false for local()
  torch::Device device() const;     // where collective buffers live: CPU (Gloo) or cuda:LOCAL_RANK
  // The backend has a native reduce-scatter (NCCL); Gloo's is emulated with all-reduce.
  bool nativeReduceScatter() const;
  std::chrono::milliseconds timeout() const;

  // In place: every tensor takes root's values. Tensors may differ in dtype; they are
  // coalesced per dtype into one message. Use it for parameters and buffers at start.
  Status broadcast(const std::vector<torch::Tensor>& tensors, int root = 0);
  // A few metric scalars (loss sum, correct count, found-inf flag...). Mean = Sum / world size.
  Result<std::vector<double>> allReduce(std::vector<double> values, ReduceOp op = ReduceOp::Sum);
  Status barrier();
  // Every rank's bytes, indexed by rank (sizes may differ).
  Result<std::vector<std::string>> allGatherBytes(const std::string& mine);

  struct Impl;
  Impl& impl() { return *impl_; }   // for wb_parallel internals (src/comm_internal.h)

 private:
  explicit Communicator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace wb::parallel
