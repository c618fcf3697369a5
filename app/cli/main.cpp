// workbench-cli: the headless workbench (run | worker | ladder | compare | export | dataset |
// capabilities). c10::Error and std::exception are caught once, here, and turned into a message
// and exit code 1; subcommands turn their own failures into documented exit codes.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>

#include "commands.h"

namespace {

const char* kUsage = R"(workbench-cli — measure which training speedups pay off on your model, data and hardware

Usage: workbench-cli <command> [options]     (workbench-cli <command> --help for each)

Commands:
  run           train one experiment (spawns one worker per device) and write its run directory
  worker        one rank of a run (what `run` spawns; also under torchrun --no-python or srun)
  ladder        baseline, then each speedup added in turn; writes the ladder table and chart
  compare       comparison table of run directories against a baseline, on the terminal
  export        comparison tables as md | csv | tex | json | html
  whatif        whatif early-stopping <run-dir>: each patience / min_delta replayed on a finished run
  dataset       dataset export --to folder:<dir> | dataset inspect <spec>
  capabilities  what this machine can do (CUDA, GPUs, cores, which speedups apply), as JSON
  probe         probe workers: times the loader, the step and a few worker counts; recommends one

Options:
  --version     print the version and the libraries in use
  --help        this text

Exit codes: 0 ok, 1 other failure, 2 bad config or usage, 3 data error, 4 diverged, 130 cancelled.
With no command, `workbench-cli` runs the default experiment (Fashion-MNIST, lenet, 1 epoch).
)";

}  // namespace

namespace wb::cli {
int printVersion();  // version.cpp
}

namespace {
// The launcher has written and closed everything when cmdRun returns (summary.json fsynced, the
// events file closed); the libraries' static teardown that a return from main runs (LibTorch's
// registries among them) costs ~0.1 s that a user and the window would wait for with nothing
// left to do. Flush stdio and leave.
[[noreturn]] void finishRun(int code) {
  std::fflush(nullptr);
  std::_Exit(code);
}
}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.empty()) finishRun(wb::cli::cmdRun({}));
    const std::string cmd = args[0];
    std::vector<std::string> rest(args.begin() + 1, args.end());
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (cmd == "--version") return wb::cli::printVersion();
    if (cmd == "run") finishRun(wb::cli::cmdRun(rest));
    if (cmd == "worker") return wb::cli::cmdWorker(rest);
    if (cmd == "ladder") return wb::cli::cmdLadder(rest);
    if (cmd == "compare") return wb::cli::cmdCompare(rest);
    if (cmd == "export") return wb::cli::cmdExport(rest);
    if (cmd == "dataset") return wb::cli::cmdDataset(rest);
    if (cmd == "capabilities") return wb::cli::cmdCapabilities(rest);
    if (cmd == "whatif") return wb::cli::cmdWhatIf(rest);
    if (cmd == "probe") finishRun(wb::cli::cmdProbe(rest));
    if (cmd.rfind("--", 0) == 0) finishRun(wb::cli::cmdRun(args));  // `workbench-cli --set x=y` = run
    std::fprintf(stderr, "workbench-cli: unknown command '%s'\n\n%s", cmd.c_str(), kUsage);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "workbench-cli: internal error: %s\n", e.what());
    return 1;
  }
}
