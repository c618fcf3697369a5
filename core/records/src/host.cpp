#include "wb/records/host.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <set>

#include "wb/common/hash.h"
#include "wb/common/paths.h"
#include "wb/common/sysinfo.h"
#include "wb/proto/events.h"
#include "wb/proto/rundir.h"

namespace wb::records {
using nlohmann::json;

MachineId thisMachine() { return {hostName(), cpuModel(), logicalCores()}; }

std::optional<MachineId> runMachine(const RunRecord& run) {
  const json& envHost = run.env.is_object() ? proto::objectOr(run.env, "host") : run.env;
  for (const proto::HostInfo& h : {run.start.host, proto::readHostInfo(envHost)}) {
    MachineId m{h.name, h.cpu, h.cores};
    if (!m.host.empty() && m.cores > 0) return m;
  }
  return std::nullopt;
}

std::filesystem::path probesDir() {
  if (const char* env = std::getenv("WB_PROBES_DIR"); env && *env) return env;
  return defaultRunsRoot().parent_path() / "probes";
}

json machineIdentity(const MachineId& m) { return {{"host", m.host}, {"cpu", m.cpu}, {"cores", m.cores}}; }

std::string storeKey(const json& identity) {
  return fnv1aHex(identity.dump());  // object keys sorted: canonical
}

Status writeStored(const std::filesystem::path& dir, const std::string& file, const json& doc) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return makeError(Errc::Io, dir.string() + ": cannot create the folder (" + ec.message() + ")");
  return proto::writeJsonAtomic(dir / file, doc);
}

proto::StoredRecord readStored(const std::filesystem::path& path) { return proto::readRecordFile(path); }

std::optional<json> readCache(const std::filesystem::path& path) {
  proto::StoredRecord r = readStored(path);
  if (r.read()) return std::move(r.doc);
  if (r.unreadable()) {
    static std::mutex mu;
    static std::set<std::string> said;
    std::lock_guard<std::mutex> lock(mu);
    if (said.insert(path.string()).second)
      std::fprintf(stderr, "%s is unreadable: %s; it is measured again\n", path.c_str(), r.why.c_str());
  }
  return std::nullopt;
}

std::string shortUtcDate(const std::string& iso) {
  int y, mo, d, h, mi;
  if (std::sscanf(iso.c_str(), "%d-%d-%dT%d:%d", &y, &mo, &d, &h, &mi) != 5) return iso;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d UTC", y, mo, d, h, mi);
  return buf;
}

}  // namespace wb::records
