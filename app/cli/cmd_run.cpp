#include <cstdio>
#include "commands.h"
namespace wb::cli {
int cmdRun(const Argv&) { std::fprintf(stderr, "run: not implemented yet\n"); return 1; }
int cmdWorker(const Argv&) { std::fprintf(stderr, "worker: not implemented yet\n"); return 1; }
int cmdCapabilities(const Argv&) { std::fprintf(stderr, "capabilities: not implemented yet\n"); return 1; }
}  // namespace wb::cli
