#pragma once
// What identifies a machine for the results stored per host (the worker probe in core/probe, the
// attainable peak in peak.h, the noise band in noise.h), where the probes and peaks are stored, the
// key that names their files, and their time stamps. Values only, except probesDir (the environment).
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "wb/common/clock.h"
#include "wb/common/result.h"
#include "wb/proto/rundir.h"
#include "wb/records/run_record.h"

namespace wb::records {

// Host name, CPU model, logical cores.
struct MachineId {
  std::string host, cpu;
  int cores = 0;
};
MachineId thisMachine();
// The machine a run used (its start event's host, else env.json's); nullopt when neither says.
std::optional<MachineId> runMachine(const RunRecord& run);

// $WB_PROBES_DIR, else "probes" beside the runs root (wb::defaultRunsRoot()'s parent folder:
// ~/.local/share/speedup-workbench/probes): the worker probes and the peaks.
std::filesystem::path probesDir();

// 16 hex digits: FNV-1a 64 of the document's canonical dump (object keys sorted), the name of a
// stored result's file. A result of another machine or experiment never shares its file.
std::string storeKey(const nlohmann::json& identity);
// The identity fields of a machine as JSON ({host, cpu, cores}), what every stored key starts from.
nlohmann::json machineIdentity(const MachineId& machine);

// A stored result's file: written atomically into `dir` (made when missing; errors name the
// folder or the file), and read back: missing, read (an object), or unreadable with why
// (wb/proto/rundir.h): the caller decides what an unreadable record means.
Status writeStored(const std::filesystem::path& dir, const std::string& file, const nlohmann::json& doc);
proto::StoredRecord readStored(const std::filesystem::path& path);
// A result that is only a cache of a measurement (the noise band, the peak, the worker probe per
// host): nullopt when missing or unreadable, as it is measured again; an unreadable one is said
// once a process on stderr ("<path> is unreadable: <why>; it is measured again").
std::optional<nlohmann::json> readCache(const std::filesystem::path& path);

using wb::utcNowIso;  // wb/common/clock.h
// "2026-12-01 08:40 UTC" from an ISO 8601 time (the text as is when it does not parse).
std::string shortUtcDate(const std::string& iso);

}  // namespace wb::records
