#include "experiment.h"

#include <signal.h>

#include <fstream>
#include <optional>

#include <nlohmann/json.hpp>

#include "wb/launch/launcher.h"
#include "wb/proto/config_json.h"

namespace wb::cli {

Result<Config> resolveConfig(const Args& args, const std::string& base) {
  nlohmann::json doc = nlohmann::json::object();
  std::optional<std::string> path = args.get("config");
  if (!path && !base.empty()) path = base;
  if (path) {
    std::ifstream in(*path);
    if (!in) return makeError(Errc::InvalidConfig, *path + ": cannot open the config file (check the path)");
    doc = nlohmann::json::parse(in, nullptr, false);
    if (doc.is_discarded()) return makeError(Errc::InvalidConfig, *path + ": not valid JSON");
  }
  for (const auto& s : args.all("set"))
    if (auto st = proto::applyOverride(doc, s); !st.ok()) return st.error();
  auto config = proto::configFromJson(doc);
  if (!config.ok()) {
    std::string where = path ? *path + ":\n" : "";
    return makeError(Errc::InvalidConfig, where + config.error().message);
  }
  return config;
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
