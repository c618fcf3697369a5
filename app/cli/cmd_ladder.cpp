// Placeholder until the owning issue lands.
#include <cstdio>
#include "commands.h"
namespace wb::cli {
int cmdLadder(const Argv&) {
  std::fprintf(stderr, "workbench-cli ladder: not implemented yet\n");
  return 1;
}
}  // namespace wb::cli
