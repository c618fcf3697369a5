#pragma once
// One measuring command of the workbench's own (`workbench-cli probe math --json`, `probe
// segments --json`) run as a process of its own for an experiment: its standard output is its
// result, one JSON document kept in a file of the experiment's folder, its standard error a log
// beside it. Why a process: the experiment runner stays LibTorch-free, a measurement cannot leave
// threads or allocator state behind in the runner, and a stop ends it like any run. Qt-free.
#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/result.h"

namespace wb::launch {

struct ToolRun {
  std::string program;                 // the workbench-cli binary
  std::vector<std::string> args;       // after it
  std::filesystem::path result_file;   // its stdout, written there whole (atomically) when it ends ok
  std::filesystem::path log_file;      // its stderr, appended to
  std::string what;                    // in errors: "the math check"
  const std::atomic<bool>* stop = nullptr;  // set: the process gets SIGTERM, then SIGKILL after 10 s
};

// Runs it to its end and returns the JSON it printed. Errors name `what`, the exit status and the
// log's last lines: Cancelled when stopped (or it exited 130), InvalidConfig when it exited 2 (a
// config this machine cannot run: its own message), else Failed; Io when it could not start.
Result<nlohmann::json> runTool(const ToolRun& run);

}  // namespace wb::launch
