#pragma once
// Warm starts: the ranks an experiment's launches start on this machine are forked from a process
// that loaded LibTorch once (a fork server, as Python's multiprocessing and Android's zygote have),
// not exec'd: a run then starts without the dynamic linker's symbol lookups and LibTorch's operator
// registration (about 0.4 s a process here), and trains exactly as it would cold (the same code
// from the same `main`, the same arguments, environment, descriptors and signal dispositions).
//
// The server is forked by startWarmServer from the command's own process at the start of main,
// while it has one thread and has touched neither LibTorch's thread pools nor CUDA; it forks a
// child per request, which forks the rank and exits, so the rank is re-parented to the launcher
// (a child subreaper while it launches: leftovers.h). The launcher then waits for it, reads its
// CPU time and signals it as a rank it forked itself; the rank dies with the launcher's process
// (PR_SET_PDEATHSIG, set once it is the launcher's child) and stays in its process group. The
// server ends with the command (its socket closed at exit, PR_SET_PDEATHSIG besides).
//
// Used only where it changes nothing but the start: a rank of this very binary, started while the
// launcher is a subreaper; anything else (a user's --command, another workbench-cli, a server
// that is gone) starts cold, as before. Slurm and torchrun start their ranks themselves.
namespace wb::launch {

// What a warm child runs in place of exec: the program's main, on the request's arguments.
using WarmMain = int (*)(int argc, char** argv);

// Forks the server (once; false, starting nothing, when this process already has another thread
// or the fork fails). argv and environ as main received them: a child's /proc/PID/cmdline is
// rewritten there to its own arguments, as exec would show them.
bool startWarmServer(WarmMain main, int argc, char** argv);

// Whether a server is running (started and not stopped).
bool warmServerRunning();

// Closes the server's socket and waits for it to exit. Safe to call without one.
void stopWarmServer();

}  // namespace wb::launch
