#include "wb/parallel/env.h"

#include <algorithm>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace wb::parallel {
namespace {

using Lookup = std::function<const char*(const char*)>;

Error envError(std::string message) { return makeError(Errc::Distributed, std::move(message)); }

std::optional<std::string> get(const Lookup& env, const char* name) {
  const char* v = env(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

// Parses a non-negative integer variable; the error names the variable and what it should hold.
Result<int> parseInt(const std::string& name, const std::string& text, const std::string& meaning) {
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0' || v < 0 || v > 1000000)
    return envError(name + "='" + text + "' is not a non-negative integer: set " + name + " to " +
                    meaning);
  return static_cast<int>(v);
}

struct Names {
  const char* rank;
  const char* world;
  const char* local;
  const char* localWorld;
  const char* source;
};

Result<DistEnv> readWith(const Lookup& env, const Names& n) {
  DistEnv d;
  d.source = n.source;
  auto rank_s = get(env, n.rank);
  auto world_s = get(env, n.world);
  if (!rank_s || !world_s) {
    const char* missing = rank_s ? n.world : n.rank;
    return envError(std::string(missing) + " is not set but " + (rank_s ? n.rank : n.world) +
                    " is: a " + n.source + " launch sets both; export " + missing +
                    " (world size / this process's rank) or unset both for a single process");
  }
  auto world = parseInt(n.world, *world_s, "the number of processes (>= 1)");
  if (!world) return world.error();
  if (*world < 1) return envError(std::string(n.world) + "=0: set it to the number of processes (>= 1)");
  auto rank = parseInt(n.rank, *rank_s, "this process's rank, 0.." + std::to_string(*world - 1));
  if (!rank) return rank.error();
  if (*rank >= *world)
    return envError(std::string(n.rank) + "=" + std::to_string(*rank) + " is out of range for " + n.world +
                    "=" + std::to_string(*world) + ": ranks run 0.." + std::to_string(*world - 1));
  d.rank = *rank;
  d.world_size = *world;
  d.local_rank = d.rank;  // single-node default; launchers set the local rank explicitly
  if (auto local_s = get(env, n.local)) {
    auto local = parseInt(n.local, *local_s, "this process's index on its node (GPU index)");
    if (!local) return local.error();
    d.local_rank = *local;
  }
  // Without it, every rank is taken to be on this host (what one machine's launch means).
  d.local_world_size = d.world_size;
  // Only a hint for sharing cores: its leading number (srun writes forms like "8(x2)" or "3,2").
  if (auto lw_s = get(env, n.localWorld)) {
    const std::string lead = lw_s->substr(0, lw_s->find_first_not_of("0123456789"));
    if (auto lw = parseInt(n.localWorld, lead, "processes on this node"); lw.ok() && *lw >= 1) d.local_world_size = *lw;
  }

  if (auto file = get(env, "WB_STORE_FILE"); file && !file->empty()) {  // one machine: no port, no address
    d.store_file = *file;
    if (auto id = get(env, "WB_RUN_ID")) d.run_id = *id;
    return d;
  }
  auto port_s = get(env, "MASTER_PORT");
  auto addr_s = get(env, "MASTER_ADDR");
  if (d.world_size == 1 && !port_s) return d;  // one process: no group needed
  if (!addr_s)
    return envError(std::string("MASTER_ADDR is not set (") + n.source + " world size " +
                    std::to_string(d.world_size) +
                    "): export MASTER_ADDR=<host of rank 0>, e.g. 127.0.0.1 on one machine or, under "
                    "Slurm, the first host of $SLURM_JOB_NODELIST");
  if (!port_s)
    return envError(std::string("MASTER_PORT is not set (") + n.source + " world size " +
                    std::to_string(d.world_size) +
                    "): export MASTER_PORT=<free TCP port on rank 0's host>, e.g. 29500");
  auto port = parseInt("MASTER_PORT", *port_s, "a TCP port 1..65535");
  if (!port) return port.error();
  if (*port < 1 || *port > 65535)
    return envError("MASTER_PORT=" + *port_s + " is out of range: set it to a TCP port 1..65535");
  d.master_addr = *addr_s;
  d.master_port = *port;
  if (auto id = get(env, "WB_RUN_ID")) d.run_id = *id;
  else if (auto tid = get(env, "TORCHELASTIC_RUN_ID")) d.run_id = *tid;
  // A torchrun restart reuses the run id and the agent's store: keep each attempt's keys apart.
  if (auto attempt = get(env, "TORCHELASTIC_RESTART_COUNT")) d.run_id += "/attempt" + *attempt;
  if (auto agent = get(env, "TORCHELASTIC_USE_AGENT_STORE")) d.agent_store = *agent == "True";
  return d;
}

}  // namespace

Result<DistEnv> DistEnv::fromLookup(const Lookup& env) {
  if (get(env, "RANK") || get(env, "WORLD_SIZE"))
    return readWith(env, {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "torchrun"});
  // A batch script's own process (SLURM_JOB_ID without SLURM_STEP_ID) is one process whatever the
  // allocation's task count: the ranks are srun's tasks. srun sets SLURM_STEP_TASKS_PER_NODE;
  // SLURM_NTASKS_PER_NODE only with --ntasks-per-node.
  const bool batchScript = get(env, "SLURM_JOB_ID") && !get(env, "SLURM_STEP_ID");
  if (!batchScript && (get(env, "SLURM_PROCID") || get(env, "SLURM_NTASKS")))
    return readWith(env, {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID",
                          get(env, "SLURM_NTASKS_PER_NODE") ? "SLURM_NTASKS_PER_NODE" : "SLURM_STEP_TASKS_PER_NODE",
                          "slurm"});
  return DistEnv{};
}

Result<DistEnv> DistEnv::fromEnvironment() {
  return fromLookup([](const char* name) { return std::getenv(name); });
}

DistEnv DistEnv::local(int rank, int world_size, int master_port) {
  DistEnv d;
  d.rank = rank;
  d.world_size = world_size;
  d.local_rank = rank;
  d.local_world_size = world_size;
  d.master_port = master_port;
  d.source = "local";
  return d;
}

std::string DistEnv::describe() const {
  std::string s = "rank " + std::to_string(rank) + "/" + std::to_string(world_size) + " (local " +
                  std::to_string(local_rank) + ") via " + source;
  if (!store_file.empty()) s += ", rendezvous file " + store_file;
  else if (launched()) s += ", rendezvous " + master_addr + ":" + std::to_string(master_port);
  return s;
}

Result<int> findFreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return envError(std::string("cannot open a TCP socket to find a free port: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  int err = errno;
  ::close(fd);
  if (port <= 0) return envError(std::string("cannot bind a TCP socket on 127.0.0.1: ") + std::strerror(err));
  return port;
}

}  // namespace wb::parallel
