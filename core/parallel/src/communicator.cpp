#include "wb/parallel/communicator.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <thread>

#include "comm_internal.h"

#if WB_PARALLEL_HAVE_NCCL
#ifndef USE_C10D_NCCL
#define USE_C10D_NCCL 1
#endif
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace wb::parallel {
namespace {

Error distError(std::string message) { return makeError(Errc::Distributed, std::move(message)); }

std::string seconds(std::chrono::milliseconds ms) {
  std::ostringstream os;
  os << static_cast<double>(ms.count()) / 1000.0 << " s";
  return os.str();
}

bool contains(const std::string& s, const char* needle) { return s.find(needle) != std::string::npos; }

std::string rankName(const DistEnv& env) { return "rank " + std::to_string(env.rank); }
std::string endpoint(const DistEnv& env) {
  return env.store_file.empty() ? env.master_addr + ":" + std::to_string(env.master_port) : env.store_file;
}

std::vector<uint8_t> bytesOf(const std::string& s) { return {s.begin(), s.end()}; }
std::string stringOf(const std::vector<uint8_t>& v) { return {v.begin(), v.end()}; }

bool isLoopback(const std::string& addr) {
  return addr == "localhost" || addr == "::1" || addr.rfind("127.", 0) == 0;
}

// One machine (WB_STORE_FILE): a FileStore, as LibTorch's own c10d tests use; nothing listens.
Result<c10::intrusive_ptr<c10d::Store>> openFileStore(const DistEnv& env, std::chrono::milliseconds timeout) {
  try {
    auto store = c10::make_intrusive<c10d::FileStore>(env.store_file, env.world_size);
    store->setTimeout(timeout);
    return c10::intrusive_ptr<c10d::Store>(store);
  } catch (const std::exception& e) {
    return distError(rankName(env) + ": rendezvous file " + env.store_file + " failed: " + shortWhat(e) +
                     " (WB_STORE_FILE must be a writable path every rank shares)");
  }
}

// Rank 0 hosts the store (unless torchrun's agent does), every rank connects to it as a client.
Result<c10::intrusive_ptr<c10d::Store>> connectStore(const DistEnv& env, std::chrono::milliseconds timeout) {
  if (!env.store_file.empty()) return openFileStore(env, timeout);
  c10d::TCPStoreOptions o;
  o.port = static_cast<std::uint16_t>(env.master_port);
  o.isServer = env.rank == 0 && !env.agent_store;
  o.waitWorkers = false;  // 1.13 gives up silently on missing workers; our handshake names them
  o.timeout = timeout;
  try {
    return c10::intrusive_ptr<c10d::Store>(compat::makeTCPStore(env.master_addr, o));
  } catch (const std::exception& e) {
    const std::string why = shortWhat(e);
    if (env.rank == 0 && (contains(why, "already in use") || contains(why, "errno: 98")))
      return distError("rank 0 cannot host the rendezvous: MASTER_PORT=" + std::to_string(env.master_port) +
                       " is already in use on this machine (another run or program holds it). Pick a free "
                       "port and start every rank with it (workbench-cli run picks one itself); under a launcher "
                       "that hosts the store itself, export TORCHELASTIC_USE_AGENT_STORE=True.");
    if (contains(why, "timed out") || contains(why, "connect"))
      return distError(rankName(env) + " could not reach rank 0's rendezvous at " + endpoint(env) + " within " +
                       seconds(timeout) +
                       ": rank 0 has not started or has exited, or the ranks disagree on MASTER_ADDR/MASTER_PORT. "
                       "Start rank 0 and give every rank the same MASTER_ADDR and MASTER_PORT. (" + why + ")");
    return distError(rankName(env) + ": rendezvous at " + endpoint(env) + " failed: " + why);
  }
}

// Every rank claims its RANK and publishes its WORLD_SIZE; rank 0 checks them all and publishes a
// verdict. So a duplicate rank, a world-size mismatch or a rank that never comes fails with a
// message naming it, within the rendezvous timeout, on every rank that is up.
// The time left of a rendezvous's timeout (at least 1 ms: a store wait of 0 waits forever).
struct Deadline {
  std::chrono::milliseconds timeout;
  std::chrono::steady_clock::time_point at = std::chrono::steady_clock::now() + timeout;
  std::chrono::milliseconds remaining() const {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(at - std::chrono::steady_clock::now());
    return std::max(left, std::chrono::milliseconds(1));
  }
};

// A rank other than 0: reads rank 0's world size before publishing its own, so a mismatch is
// named here even though rank 0 (seeing ours) will fail and take the store down; then waits for
// rank 0's verdict.
Status joinRankZero(c10d::Store& store, const DistEnv& env, const Deadline& d) {
  const std::string r = std::to_string(env.rank), W = std::to_string(env.world_size);
  try {
    store.wait({"world_size/0"}, d.remaining());
  } catch (const std::exception&) {
    return distError(rankName(env) + " reached a rendezvous at " + endpoint(env) + " but rank 0 of this run never registered within " +
                     seconds(d.timeout) + ": another program may own that port, or WB_RUN_ID differs between ranks.");
  }
  const std::string w0 = stringOf(store.get("world_size/0"));
  store.set("world_size/" + r, bytesOf(W));
  if (w0 != W) {
    store.add("verdict_read", 1);
    return distError("WORLD_SIZE mismatch: " + rankName(env) + " has WORLD_SIZE=" + W + " but rank 0 has WORLD_SIZE=" + w0 +
                     ". Start every rank with the same WORLD_SIZE.");
  }
  try {
    store.wait({"verdict"}, d.remaining());
  } catch (const std::exception&) {
    return distError(rankName(env) + ": rank 0 did not confirm that all " + W + " ranks joined within " + seconds(d.timeout) +
                     "; a rank is missing (rank 0's log names it).");
  }
  const std::string verdict = stringOf(store.get("verdict"));
  store.add("verdict_read", 1);
  if (verdict != "ok") return distError(rankName(env) + ": rendezvous refused by rank 0: " + verdict);
  return {};
}

// Rank 0 publishes a refusal and gives the ranks that joined a moment to read it before this
// process (which hosts the store) exits.
Status refuseRendezvous(c10d::Store& store, const DistEnv& env, const std::string& message) {
  try {
    store.set("verdict", bytesOf(message));
    int64_t joined = 0;
    for (int k = 1; k < env.world_size; ++k) joined += store.check({"world_size/" + std::to_string(k)}) ? 1 : 0;
    const auto linger = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (store.add("verdict_read", 0) < joined && std::chrono::steady_clock::now() < linger)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } catch (const std::exception&) {
  }
  return distError(message);
}

// Rank 0: waits for every other rank's world size, refusing a missing rank or a mismatch by name.
Status hostRendezvous(c10d::Store& store, const DistEnv& env, const Deadline& d) {
  const std::string W = std::to_string(env.world_size);
  store.set("world_size/0", bytesOf(W));
  for (int j = 1; j < env.world_size; ++j) {
    const std::string key = "world_size/" + std::to_string(j);
    try {
      store.wait({key}, d.remaining());
    } catch (const std::exception&) {
      std::string missing;
      for (int k = j; k < env.world_size; ++k) {
        if (store.check({"world_size/" + std::to_string(k)})) continue;
        missing += (missing.empty() ? "" : ", ") + std::to_string(k);
      }
      return refuseRendezvous(store, env,
                              "rank(s) " + missing + " did not join the rendezvous at " + endpoint(env) + " within " +
                                  seconds(d.timeout) + " (WORLD_SIZE=" + W +
                                  "): they did not start, crashed, or were given another MASTER_ADDR/MASTER_PORT. Check their logs.");
    }
    const std::string wj = stringOf(store.get(key));
    if (wj != W)
      return refuseRendezvous(store, env,
                              "WORLD_SIZE mismatch: rank 0 has WORLD_SIZE=" + W + " but rank " + std::to_string(j) +
                                  " has WORLD_SIZE=" + wj + ". Start every rank with the same WORLD_SIZE.");
  }
  store.set("verdict", bytesOf("ok"));
  return {};
}

Status handshake(c10d::Store& store, const DistEnv& env, std::chrono::milliseconds timeout) {
  const std::string r = std::to_string(env.rank);
  const Deadline deadline{timeout};
  try {
    if (store.add("claim/" + r, 1) > 1)
      return distError("two processes were started with rank " + r + " (RANK=" + r +
                       "): give every process its own RANK in 0.." + std::to_string(env.world_size - 1));
    return env.rank != 0 ? joinRankZero(store, env, deadline) : hostRendezvous(store, env, deadline);
  } catch (const std::exception& e) {
    return distError(rankName(env) + ": lost the rendezvous at " + endpoint(env) +
                     " (rank 0 exited or the store failed): " + shortWhat(e));
  }
}

Result<c10::intrusive_ptr<compat::CollectiveBackend>> makeGloo(const c10::intrusive_ptr<c10d::Store>& store,
                                                                const DistEnv& env, const CommOptions& options) {
  try {
    auto o = c10d::ProcessGroupGloo::Options::create(options.timeout);
    if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname)
      o->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
    else if (isLoopback(env.master_addr))
      o->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    else
      o->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    return c10::intrusive_ptr<compat::CollectiveBackend>(
        c10::make_intrusive<c10d::ProcessGroupGloo>(store, env.rank, env.world_size, o));
  } catch (const std::exception& e) {
    return distError(rankName(env) + ": setting up the Gloo process group failed: " + shortWhat(e) +
                     ". If the ranks are on several hosts, set GLOO_SOCKET_IFNAME to the interface that "
                     "reaches the others.");
  }
}

Result<c10::intrusive_ptr<compat::CollectiveBackend>> makeNccl(const c10::intrusive_ptr<c10d::Store>& store,
                                                                const DistEnv& env, const CommOptions& options) {
#if WB_PARALLEL_HAVE_NCCL
  try {
    const int devices = static_cast<int>(c10::cuda::device_count());
    if (env.local_rank >= devices)
      return distError(rankName(env) + ": LOCAL_RANK=" + std::to_string(env.local_rank) + " but only " +
                       std::to_string(devices) +
                       " CUDA device(s) are visible: NCCL needs one GPU per rank, so start at most that many "
                       "ranks per node (--nproc-per-node) or use gloo.");
    c10::cuda::set_device(static_cast<c10::DeviceIndex>(env.local_rank));
    auto o = c10d::ProcessGroupNCCL::Options::create();
    o->timeout = options.timeout;
    return c10::intrusive_ptr<compat::CollectiveBackend>(
        c10::make_intrusive<c10d::ProcessGroupNCCL>(store, env.rank, env.world_size, o));
  } catch (const std::exception& e) {
    return distError(rankName(env) + ": setting up the NCCL process group failed: " + shortWhat(e));
  }
#else
  (void)store;
  (void)options;
  return distError(rankName(env) +
                   ": backend nccl is not available in this build (LibTorch without CUDA/NCCL). Use gloo, or "
                   "build the workbench against a CUDA LibTorch.");
#endif
}

}  // namespace

std::string shortWhat(const std::exception& e) {
  std::string s;
  if (auto* ce = dynamic_cast<const c10::Error*>(&e)) s = ce->what_without_backtrace();
  else s = e.what();
  // c10 messages can carry "Exception raised from ..." context lines: keep the first paragraph.
  if (auto cut = s.find("\nException raised from"); cut != std::string::npos) s.resize(cut);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

Error collectiveError(const Communicator::Impl& impl, const std::string& op, const std::exception& e) {
  return distError(rankName(impl.env) + ": " + op + " failed: " + shortWhat(e) +
                   ". A peer rank probably exited or stopped answering (see its log); collectives give up after " +
                   seconds(impl.options.timeout) + " (CommOptions::timeout).");
}

Status waitWork(const Communicator::Impl& impl, const std::string& op, const c10::intrusive_ptr<c10d::Work>& work) {
  try {
    // NCCL: wait() without a timeout only makes the current stream wait for NCCL's, and returns
    // at once; with one it blocks until the collective has completed, and throws once it runs
    // past the timeout, so a dead or stalled peer is reported here. Gloo's wait() blocks, and its
    // own timeout (the same CommOptions::timeout) ends it.
    if (impl.options.backend == Backend::Nccl) work->wait(impl.options.timeout);
    else work->wait();
    return {};
  } catch (const std::exception& e) {
    return collectiveError(impl, op, e);
  }
}

Result<Backend> parseBackend(const std::string& name) {
  if (name == "gloo") return Backend::Gloo;
  if (name == "nccl") return Backend::Nccl;
  return distError("backend '" + name + "' is unknown: use gloo (CPU) or nccl (CUDA)");
}

const char* backendName(Backend backend) { return backend == Backend::Nccl ? "nccl" : "gloo"; }

bool ncclCompiled() { return WB_PARALLEL_HAVE_NCCL != 0; }

std::string ncclVersion() {
#if WB_PARALLEL_HAVE_NCCL
  try {
    return c10d::getNcclVersion();
  } catch (const std::exception&) {
    return "";
  }
#else
  return "";
#endif
}

Communicator::Communicator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Communicator::~Communicator() {
  if (impl_) impl_->pg.reset();  // the group talks through the store: drop it first
}

std::unique_ptr<Communicator> Communicator::local() {
  auto impl = std::make_unique<Impl>();
  impl->env.source = "none";
  return std::unique_ptr<Communicator>(new Communicator(std::move(impl)));
}

Result<std::unique_ptr<Communicator>> Communicator::create(const DistEnv& env, const CommOptions& options) {
  if (!env.launched()) return local();
  if (options.backend == Backend::Nccl && !ncclCompiled()) {
    auto r = makeNccl({}, env, options);  // yields the "not in this build" error
    return r.error();
  }
  const auto rdv = options.rendezvous_timeout.count() > 0 ? options.rendezvous_timeout : options.timeout;
  auto store = connectStore(env, rdv);
  if (!store) return store.error();
  auto ns = c10::make_intrusive<c10d::PrefixStore>("wb/" + env.run_id, *store);
  if (auto st = handshake(*ns, env, rdv); !st) return st.error();

  auto impl = std::make_unique<Impl>();
  impl->env = env;
  impl->options = options;
  impl->store = *store;
  auto pgStore = c10::make_intrusive<c10d::PrefixStore>("wb/" + env.run_id + "/pg", *store);
  auto pg = options.backend == Backend::Nccl ? makeNccl(pgStore, env, options) : makeGloo(pgStore, env, options);
  if (!pg) return pg.error();
  impl->pg = *pg;
  if (options.backend == Backend::Nccl)
    impl->device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank));
  return std::unique_ptr<Communicator>(new Communicator(std::move(impl)));
}

int Communicator::rank() const { return impl_->env.rank; }
int Communicator::worldSize() const { return impl_->env.world_size; }
int Communicator::localRank() const { return impl_->env.local_rank; }
Backend Communicator::backend() const { return impl_->options.backend; }
bool Communicator::hasGroup() const { return static_cast<bool>(impl_->pg); }
torch::Device Communicator::device() const { return impl_->device; }
bool Communicator::nativeReduceScatter() const { return hasGroup() && backend() == Backend::Nccl; }
std::chrono::milliseconds Communicator::timeout() const { return impl_->options.timeout; }

Status Communicator::broadcast(const std::vector<torch::Tensor>& tensors, int root) {
  if (!hasGroup() || tensors.empty()) return {};
  torch::NoGradGuard no_grad;
  // One message per dtype, in first-seen order (identical on every rank).
  std::vector<at::ScalarType> order;
  std::map<at::ScalarType, std::vector<torch::Tensor>> groups;
  for (const auto& t : tensors) {
    auto& g = groups[t.scalar_type()];
    if (g.empty()) order.push_back(t.scalar_type());
    g.push_back(t);
  }
  for (auto dtype : order) {
    auto& group = groups[dtype];
    std::vector<torch::Tensor> flat_parts;
    for (const auto& t : group) flat_parts.push_back(t.detach().reshape(-1).to(impl_->device));
    std::vector<torch::Tensor> buf{torch::cat(flat_parts)};
    c10d::BroadcastOptions o;
    o.rootRank = root;
    try {
      if (auto st = waitWork(*impl_, "broadcast from rank " + std::to_string(root), impl_->pg->broadcast(buf, o)); !st)
        return st;
    } catch (const std::exception& e) {
      return collectiveError(*impl_, "broadcast", e);
    }
    int64_t off = 0;
    for (auto& t : group) {
      t.detach().copy_(buf[0].narrow(0, off, t.numel()).view(t.sizes()));
      off += t.numel();
    }
  }
  return {};
}

Result<std::vector<double>> Communicator::allReduce(std::vector<double> values, ReduceOp op) {
  if (!hasGroup() || values.empty()) return values;
  auto t = torch::tensor(values, torch::kDouble).to(impl_->device);
  std::vector<torch::Tensor> buf{t};
  c10d::AllreduceOptions o;
  o.reduceOp = op == ReduceOp::Max ? c10d::ReduceOp::MAX : op == ReduceOp::Min ? c10d::ReduceOp::MIN : c10d::ReduceOp::SUM;
  try {
    if (auto st = waitWork(*impl_, "all-reduce of metrics", impl_->pg->allreduce(buf, o)); !st) return st.error();
  } catch (const std::exception& e) {
    return collectiveError(*impl_, "all-reduce of metrics", e);
  }
  auto cpu = buf[0].cpu();
  const double* p = cpu.data_ptr<double>();
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = op == ReduceOp::Mean ? p[i] / worldSize() : p[i];
  return values;
}

Status Communicator::barrier() {
  if (!hasGroup()) return {};
  try {
    return waitWork(*impl_, "barrier", impl_->pg->barrier());
  } catch (const std::exception& e) {
    return collectiveError(*impl_, "barrier", e);
  }
}

Result<std::vector<std::string>> Communicator::allGatherBytes(const std::string& mine) {
  if (!hasGroup()) return std::vector<std::string>{mine};
  const int W = worldSize();
  auto opts = torch::TensorOptions().device(impl_->device);
  try {
    // Sizes first, then one all-gather of buffers padded to the largest.
    std::vector<torch::Tensor> size_in{torch::full({1}, static_cast<int64_t>(mine.size()), opts.dtype(torch::kLong))};
    std::vector<std::vector<torch::Tensor>> size_out(1);
    for (int r = 0; r < W; ++r) size_out[0].push_back(torch::empty({1}, opts.dtype(torch::kLong)));
    if (auto st = waitWork(*impl_, "all-gather of sizes", impl_->pg->allgather(size_out, size_in)); !st)
      return st.error();
    std::vector<int64_t> sizes;
    int64_t max_size = 1;
    for (auto& s : size_out[0]) {
      sizes.push_back(s.cpu().item<int64_t>());
      max_size = std::max(max_size, sizes.back());
    }
    auto host = torch::zeros({max_size}, torch::kUInt8);
    std::memcpy(host.data_ptr<uint8_t>(), mine.data(), mine.size());
    std::vector<torch::Tensor> in{host.to(impl_->device)};
    std::vector<std::vector<torch::Tensor>> out(1);
    for (int r = 0; r < W; ++r) out[0].push_back(torch::empty({max_size}, opts.dtype(torch::kUInt8)));
    if (auto st = waitWork(*impl_, "all-gather of bytes", impl_->pg->allgather(out, in)); !st) return st.error();
    std::vector<std::string> result;
    for (int r = 0; r < W; ++r) {
      auto c = out[0][r].cpu();
      result.emplace_back(reinterpret_cast<const char*>(c.data_ptr<uint8_t>()), static_cast<size_t>(sizes[r]));
    }
    return result;
  } catch (const std::exception& e) {
    return collectiveError(*impl_, "all-gather", e);
  }
}

}  // namespace wb::parallel
