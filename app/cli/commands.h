#pragma once
// workbench-cli subcommands. Each takes the arguments after its name and returns the process
// exit code (0 ok, 1 other failure, 2 bad config/usage, 3 data error, 4 diverged, 130 cancelled).
// Each prints its own --help.
#include <string>
#include <vector>

namespace wb::cli {

using Argv = std::vector<std::string>;

int cmdRun(const Argv& args);           // run one experiment (launcher)
int cmdWorker(const Argv& args);        // one rank (what run spawns; torchrun/srun-compatible)
int cmdLadder(const Argv& args);        // the speedup ladder
int cmdCompare(const Argv& args);       // comparison table of run dirs on the terminal
int cmdExport(const Argv& args);        // comparison tables to md/csv/tex/json/html
int cmdDataset(const Argv& args);       // dataset export | inspect
int cmdCapabilities(const Argv& args);  // what this machine can do (JSON for the GUI)
int cmdWhatIf(const Argv& args);        // whatif early-stopping: a finished run's curve replayed
int cmdProbe(const Argv& args);         // probe workers: the loader worker count to use

// The path of this executable (for spawning ranks and ladder runs).
std::string selfPath();

}  // namespace wb::cli
