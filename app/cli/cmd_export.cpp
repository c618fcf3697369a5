// Placeholder until the owning issue lands.
#include <cstdio>
#include "commands.h"
namespace wb::cli {
int cmdExport(const Argv&) {
  std::fprintf(stderr, "workbench-cli export: not implemented yet\n");
  return 1;
}
}  // namespace wb::cli
