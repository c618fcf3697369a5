#include "wb/launch/slurm_jobs.h"
#include "wb/common/format.h"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "wb/common/fs.h"

namespace wb::launch::slurm {
namespace fs = std::filesystem;

namespace {

Error slurmError(std::string message) { return makeError(Errc::InvalidConfig, std::move(message)); }

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

struct Output {
  int rc = -1;
  std::string text;  // stdout and stderr together, trailing newlines trimmed
};

// A client's run, at most `timeoutS` (coreutils timeout), its words and exit code.
Output runClient(const std::vector<std::string>& argv, int timeoutS = 30, const fs::path& workdir = {}) {
  std::string cmd = workdir.empty() ? "" : "cd " + quoted(workdir.string()) + " && ";
  cmd += "timeout " + std::to_string(timeoutS);
  for (const auto& a : argv) cmd += " " + quoted(a);
  cmd += " 2>&1";
  Output out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[1024];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.text.append(buf, n);
  const int st = ::pclose(p);
  out.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  while (!out.text.empty() && (out.text.back() == '\n' || out.text.back() == ' ')) out.text.pop_back();
  return out;
}


bool onPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  for (size_t from = 0; from <= dirs.size();) {
    const size_t to = std::min(dirs.find(':', from), dirs.size());
    const fs::path candidate = fs::path(dirs.substr(from, to - from)) / program;
    if (to > from && ::access(candidate.c_str(), X_OK) == 0) return true;
    from = to + 1;
  }
  return false;
}

}  // namespace

bool JobState::ended() const {
  for (const char* live : {"PENDING", "RUNNING", "COMPLETING", "SUSPENDED", "CONFIGURING", "REQUEUED", "RESIZING",
                           "SIGNALING", "STAGE_OUT", "REQUEUE_HOLD", "REQUEUE_FED"})
    if (state == live) return false;
  return !state.empty();
}

bool JobState::finished() const { return state == "COMPLETED"; }

bool JobState::endedBySlurm() const {
  return state == "TIMEOUT" || state == "PREEMPTED" || state == "NODE_FAIL" || state == "CANCELLED" ||
         state == "DEADLINE" || state == "BOOT_FAIL" || state == "OUT_OF_MEMORY";
}

bool JobState::cannotStart() const {
  if (state != "PENDING") return false;
  for (const char* never : {"PartitionConfig", "PartitionNodeLimit", "PartitionTimeLimit", "PartitionDown",
                            "PartitionInactive", "AssocGrpCpuLimit", "AccountNotAllowed", "InvalidAccount", "InvalidQOS",
                            "QOSMaxWallDurationPerJobLimit", "BadConstraints"})
    if (reason == never) return true;
  return false;
}

std::string JobState::describe() const {
  std::string s = "job " + id + ": " + state + " (Reason=" + reason;
  if (!exit_code.empty() && exit_code != "0:0") s += ", ExitCode=" + exit_code;
  return s + ")";
}

Status clientsPresent() {
  for (const char* p : {"sbatch", "sinfo", "scontrol", "scancel"})
    if (!onPath(p))
      return slurmError(std::string(p) + " is not on PATH: --executor slurm sends runs to a Slurm cluster through its "
                        "clients; run on a login node that has them (Debian: slurm-client) or leave out --executor slurm");
  return {};
}

std::string partitionOf(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if ((a == "-p" || a == "--partition") && i + 1 < args.size()) return args[i + 1];
    if (a.rfind("--partition=", 0) == 0) return a.substr(12);
    if (a.rfind("-p", 0) == 0 && a.size() > 2 && a[2] != '-') return a.substr(2);
  }
  return "";
}

Status partitionExists(const std::string& partition) {
  const Output all = runClient({"sinfo", "-h", "-o", "%P"});
  if (all.rc != 0) return slurmError("sinfo could not list the cluster's partitions: " + all.text);
  std::string names;
  for (size_t from = 0; from < all.text.size();) {
    const size_t to = std::min(all.text.find('\n', from), all.text.size());
    std::string name = all.text.substr(from, to - from);
    if (!name.empty() && name.back() == '*') name.pop_back();  // the default partition
    if (name == partition) return {};
    names += (names.empty() ? "" : ", ") + name;
    from = to + 1;
  }
  return slurmError("partition '" + partition + "' does not exist on this cluster; its partitions: " + names +
                    " (pass one with --sbatch-arg=--partition=NAME)");
}

Result<std::string> submit(const fs::path& script, const std::vector<std::string>& sbatchArgs,
                           const std::vector<std::string>& scriptArgs, const fs::path& workdir) {
  std::vector<std::string> argv{"sbatch", "--parsable"};
  argv.insert(argv.end(), sbatchArgs.begin(), sbatchArgs.end());
  argv.push_back(script.string());
  argv.insert(argv.end(), scriptArgs.begin(), scriptArgs.end());
  const Output out = runClient(argv, 60, workdir);
  // --parsable prints "id" or "id;cluster" as its last line; warnings may come before it.
  const std::string last = out.text.substr(out.text.rfind('\n') == std::string::npos ? 0 : out.text.rfind('\n') + 1);
  const std::string id = last.substr(0, last.find(';'));
  if (out.rc != 0 || id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
    return slurmError("Slurm refused the job " + script.string() + ": \"" + out.text +
                      "\" (fix the --sbatch-arg it names, or ask the cluster's admins)");
  return id;
}

JobState parseJobState(const std::string& id, const std::string& line) {
  JobState j;
  j.id = id;
  j.state = slurmField(line, "JobState");
  j.reason = slurmField(line, "Reason");
  j.exit_code = slurmField(line, "ExitCode");
  return j;
}

Result<JobState> jobState(const std::string& id) {
  const Output out = runClient({"scontrol", "show", "job", "-o", id});
  if (out.rc != 0) return makeError(Errc::Io, "scontrol could not show job " + id + ": " + out.text);
  return parseJobState(id, out.text);
}

Result<JobState> waitForJob(const std::string& id, double timeoutS, double pollS) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutS);
  for (;;) {
    auto j = jobState(id);
    if (!j.ok() || j->ended()) return j;
    if (j->cannotStart())
      return slurmError(j->describe() + " can never start as asked: fix the --sbatch-arg its reason names");
    if (std::chrono::steady_clock::now() >= until)
      return makeError(Errc::Io, j->describe() + " has not ended after " + std::to_string(int(timeoutS)) + " s");
    std::this_thread::sleep_for(std::chrono::duration<double>(pollS));
  }
}

Status cancel(const std::vector<std::string>& ids) {
  if (ids.empty()) return {};
  std::vector<std::string> argv{"scancel"};
  argv.insert(argv.end(), ids.begin(), ids.end());
  const Output out = runClient(argv);
  if (out.rc != 0) return makeError(Errc::Io, "scancel did not cancel " + std::to_string(ids.size()) + " job(s): " + out.text);
  return {};
}

Status folderVisible(const fs::path& folder, const std::vector<std::string>& sbatchArgs, double timeoutS) {
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) return slurmError("cannot make " + folder.string() + ": " + ec.message());
  const fs::path probe = folder / ".slurm-probe";
  const fs::path script = folder / ".slurm-probe.sh";
  fs::remove(probe, ec);
  if (auto st = writeFileAtomic(script, "#!/bin/sh\nhostname > " + quoted(probe.string()) + "\n"); !st.ok()) return st;
  std::vector<std::string> args = sbatchArgs;
  args.insert(args.end(), {"--job-name=workbench-folder-check", "--ntasks=1", "--output=/dev/null"});
  auto id = submit(script, args, {}, folder);
  if (!id.ok()) return id.error();
  auto ended = waitForJob(*id, timeoutS);
  fs::remove(script, ec);
  if (!ended.ok()) {
    (void)cancel({*id});
    return ended.error();
  }
  auto text = readFile(probe);
  if (!ended->finished() || !text.ok())
    return slurmError("the cluster's nodes cannot write " + folder.string() + " (" + ended->describe() +
                      (text.ok() ? "" : ", nothing came back") +
                      "): put the experiment's folder on a filesystem every node shares");
  fs::remove(probe, ec);
  return {};
}

Status checkCluster(const fs::path& folder, const std::vector<std::string>& sbatchArgs) {
  if (auto st = clientsPresent(); !st.ok()) return st;
  if (const std::string p = partitionOf(sbatchArgs); !p.empty())
    if (auto st = partitionExists(p); !st.ok()) return st;
  return folderVisible(folder, sbatchArgs);
}

}  // namespace wb::launch::slurm
