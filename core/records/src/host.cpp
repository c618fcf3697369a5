#include "wb/records/host.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>

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

std::optional<json> readStored(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  auto doc = proto::readJsonFile(path);
  if (!doc.ok()) return std::nullopt;
  return std::move(doc.value());
}

std::string shortUtcDate(const std::string& iso) {
  int y, mo, d, h, mi;
  if (std::sscanf(iso.c_str(), "%d-%d-%dT%d:%d", &y, &mo, &d, &h, &mi) != 5) return iso;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d UTC", y, mo, d, h, mi);
  return buf;
}

}  // namespace wb::records
