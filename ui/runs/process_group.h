#pragma once
// A workbench-cli child that runs in a process group of its own, for RunProcess and the probe
// runner alike: one signal to the group reaches everything the child starts (the launcher's
// ranks, loader workers), and a window that dies without cleaning up asks the child to stop.
#include <QProcess>

namespace wb::ui {

// Call before start(): the child makes its own group (pgid = its pid) and gets SIGTERM when the
// window's process dies.
void runInOwnGroup(QProcess& process);

// Sends `signal` to the child's whole group once it has started (pgid > 0), else kills the child
// alone if it is running.
void signalGroup(QProcess& process, qint64 pgid, int signal);

}  // namespace wb::ui
