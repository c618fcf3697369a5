#include "experiment.h"

#include <signal.h>

#include <fstream>
#include <iterator>
#include <optional>

#include <nlohmann/json.hpp>

#include "wb/launch/launcher.h"
#include "wb/proto/config_json.h"

namespace wb::cli {

std::string commandLine() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), {}), line;
  for (char c : all) line += c == '\0' ? ' ' : c;
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

Result<Config> resolveConfig(const ExperimentOptions& options, const std::string& base) {
  nlohmann::json doc = nlohmann::json::object();
  std::optional<std::string> path;
  if (!options.config.empty()) path = options.config;
  else if (!base.empty()) path = base;
  if (path) {
    auto read = proto::readConfigDocument(*path);
    if (!read.ok()) return read.error();
    doc = std::move(*read);
  }
  std::string problems;
  auto note = [&](const std::string& line) { problems += (problems.empty() ? "" : "\n") + line; };
  for (const auto& s : options.sets)
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
