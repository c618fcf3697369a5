#pragma once
// workbench-cli subcommands. Each add* registers its subcommand (and those below it) on the one
// CLI::App of main.cpp, with typed, range-checked options and its help, and appends what to run
// to `out`. Actions return the process exit code (0 ok, 1 other failure, 2 bad config/usage,
// 3 data error, 4 diverged, 130 cancelled; wb/common/exit_codes.h).
#include <string>

#include "options.h"

namespace wb::cli {

void addRun(CLI::App& cli, Commands& out);           // run one experiment (launcher); cmd_run.cpp
void addWorker(CLI::App& cli, Commands& out);        // one rank (torchrun/srun-compatible); cmd_worker.cpp
void addCapabilities(CLI::App& cli, Commands& out);  // what this machine can do (JSON for the GUI)
void addLadder(CLI::App& cli, Commands& out);        // the speedup ladder
void addTry(CLI::App& cli, Commands& out);           // one change against its baseline, as pairs; cmd_try.cpp
void addCompare(CLI::App& cli, Commands& out);       // comparison table of run dirs on the terminal
void addExport(CLI::App& cli, Commands& out);        // comparison tables to md/csv/tex/json/html
void addWhatIf(CLI::App& cli, Commands& out);        // whatif early-stopping: a finished run replayed
void addDataset(CLI::App& cli, Commands& out);       // dataset export | inspect
void addProbe(CLI::App& cli, Commands& out);         // probe workers: the loader worker count to use
void addNoise(CLI::App& cli, Commands& out);         // noise: this host's run-to-run spread (A/A), stored
void addTune(CLI::App& cli, Commands& out);          // tune (and tune batch): the fastest configuration; cmd_tune.cpp

// compare's and export's --baseline DIR (required) and --target-acc X (cmd_compare.cpp); returns
// --baseline, for a command that can do without it (export --format tensorboard).
CLI::Option* addComparisonOptions(CLI::App& app, std::string& baseline, std::string& targetAcc);
// --min-effect F: the verdicts' practical threshold (compare, export, try, ladder).
void addMinEffectOption(CLI::App& app, double& minEffect);

// The path of this executable (for spawning ranks and ladder runs).
std::string selfPath();

}  // namespace wb::cli
