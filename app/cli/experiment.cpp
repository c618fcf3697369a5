#include "experiment.h"

#include <signal.h>

#include <optional>

#include <nlohmann/json.hpp>

#include "wb/common/paths.h"
#include "wb/launch/launcher.h"
#include "wb/proto/config_json.h"

namespace wb::cli {

Status checkPathOptions(const Args& args) {
  for (const char* option : {"config", "run-dir", "runs-root", "resume"})
    for (const auto& path : args.all(option))
      if (auto st = requireUtf8Path(std::string("--") + option, path); !st.ok()) return st;
  return {};
}

Result<Config> resolveConfig(const Args& args, const std::string& base) {
  if (auto st = checkPathOptions(args); !st.ok()) return st.error();
  nlohmann::json doc = nlohmann::json::object();
  std::optional<std::string> path = args.get("config");
  if (!path && !base.empty()) path = base;
  if (path) {
    auto read = proto::readConfigDocument(*path);
    if (!read.ok()) return read.error();
    doc = std::move(*read);
  }
  std::string problems;
  auto note = [&](const std::string& line) { problems += (problems.empty() ? "" : "\n") + line; };
  for (const auto& s : args.all("set"))
    if (auto st = proto::applyOverride(doc, s); !st.ok()) note(st.error().message);
  if (auto errors = proto::configErrors(doc); !errors.empty()) note(formatFieldErrors(errors));
  if (!problems.empty()) return makeError(Errc::InvalidConfig, (path ? *path + ":\n" : "") + problems);
  return proto::configFromJson(doc);
}

std::atomic<bool>& stopFlag() {
  static std::atomic<bool> flag{false};
  return flag;
}

namespace {
void onStopSignal(int) {
  stopFlag().store(true);
  launch::requestStop();
}
}  // namespace

void installStopSignals() {
  struct sigaction sa {};
  sa.sa_handler = onStopSignal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
}

}  // namespace wb::cli
