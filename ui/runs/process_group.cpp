#include "runs/process_group.h"

#include <csignal>

#include <sys/prctl.h>
#include <sys/types.h>
#include <unistd.h>

namespace wb::ui {

void runInOwnGroup(QProcess& process) {
  process.setChildProcessModifier([] {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  });
}

void signalGroup(QProcess& process, qint64 pgid, int signal) {
  if (pgid > 0) ::kill(-static_cast<pid_t>(pgid), signal);
  else if (process.state() != QProcess::NotRunning) process.kill();
}

}  // namespace wb::ui
