// Placeholder until the owning issue lands.
#include <cstdio>
#include "commands.h"
namespace wb::cli {
int cmdDataset(const Argv&) {
  std::fprintf(stderr, "workbench-cli dataset: not implemented yet\n");
  return 1;
}
}  // namespace wb::cli
