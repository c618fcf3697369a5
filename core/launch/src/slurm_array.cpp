#include "wb/launch/slurm_array.h"

#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <thread>

#include "wb/common/clock.h"
#include "wb/common/fs.h"
#include "wb/proto/cluster_jobs.h"
#include "wb/launch/slurm_jobs.h"

namespace wb::launch::slurm {
namespace fs = std::filesystem;

namespace {

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string withRunDir(std::string arg, const fs::path& dir) {
  const std::string mark = "{run_dir}";
  for (size_t at = arg.find(mark); at != std::string::npos; at = arg.find(mark, at + dir.string().size()))
    arg.replace(at, mark.size(), dir.string());
  return arg;
}

// "3", "2-4", "1,3,5-6", "2-9%4": the task ids a line of scontrol covers.
std::vector<int> taskIds(std::string spec) {
  std::vector<int> ids;
  spec = spec.substr(0, spec.find('%'));
  for (size_t from = 0; from < spec.size();) {
    const size_t to = std::min(spec.find(',', from), spec.size());
    const std::string part = spec.substr(from, to - from);
    const size_t dash = part.find('-');
    try {
      const int a = std::stoi(part.substr(0, dash));
      const int b = dash == std::string::npos ? a : std::stoi(part.substr(dash + 1));
      for (int i = a; i <= b; ++i) ids.push_back(i);
    } catch (const std::exception&) {
    }
    from = to + 1;
  }
  return ids;
}

// Every task of array `id` as scontrol lists it, by task id.
Result<std::map<int, JobState>> arrayStates(const std::string& id) {
  FILE* p = ::popen(("timeout 30 scontrol show job -o " + id + " 2>&1").c_str(), "r");
  if (p == nullptr) return makeError(Errc::Io, "scontrol could not be run for job " + id);
  std::string text;
  char buf[2048];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) text.append(buf, n);
  if (::pclose(p) != 0) return makeError(Errc::Io, "scontrol could not show job " + id + ": " + text);
  std::map<int, JobState> out;
  for (size_t from = 0; from < text.size();) {
    const size_t to = std::min(text.find('\n', from), text.size());
    const std::string line = " " + text.substr(from, to - from);
    const size_t at = line.find(" ArrayTaskId=");
    if (at != std::string::npos) {
      const std::string spec = line.substr(at + 13, line.find(' ', at + 13) - at - 13);
      for (int t : taskIds(spec)) out[t] = parseJobState(id + "_" + std::to_string(t), line);
    }
    from = to + 1;
  }
  return out;
}

// A name in `folder` not taken yet: stem-1.sh, stem-2.sh, ... (an earlier array's script is kept).
fs::path freshName(const fs::path& folder, const std::string& stem, const std::string& ext) {
  for (int i = 1;; ++i) {
    fs::path p = folder / (stem + "-" + std::to_string(i) + ext);
    if (!fs::exists(p)) return p;
  }
}

// The tasks' states into the array folder's jobs.json (wb/proto/cluster_jobs.h) when they changed,
// for the window; a record that cannot be written costs the window its states, not the runs.
void recordStates(const std::vector<ArrayTask>& batch, const std::vector<JobState>& states, const fs::path& folder,
                  std::vector<JobState>& last) {
  const auto same = [](const JobState& a, const JobState& b) { return a.id == b.id && a.state == b.state && a.reason == b.reason; };
  if (std::equal(states.begin(), states.end(), last.begin(), last.end(), same)) return;
  last = states;
  std::vector<proto::ClusterTask> tasks;
  for (size_t i = 0; i < batch.size(); ++i)
    tasks.push_back({fs::absolute(batch[i].run_dir).string(), states[i].id, states[i].state, states[i].reason, utcNowIso()});
  if (auto st = proto::recordClusterTasks(folder, tasks); !st.ok())
    std::fprintf(stderr, "the window will not see the jobs' states: %s\n", st.error().message.c_str());
}

// One array of `batch`, waited for: each task's state, or Cancelled when a stop came.
Result<std::vector<JobState>> runOnce(const std::vector<ArrayTask>& batch, const ArrayOptions& o) {
  std::error_code ec;
  fs::create_directories(o.folder, ec);
  const fs::path script = freshName(o.folder, "array", ".sh");
  if (auto st = writeFileAtomic(script, arrayScript(batch)); !st.ok()) return st.error();
  std::vector<std::string> args = o.sbatch_args;
  std::string range = "--array=0-" + std::to_string(batch.size() - 1);
  if (o.max_at_once > 0) range += "%" + std::to_string(o.max_at_once);
  args.insert(args.end(), {range, "--job-name=" + o.job_name, "--no-requeue",
                           "--output=" + (o.folder / "slurm-%A_%a.out").string()});
  auto id = submit(script, args, {}, o.workdir.empty() ? o.folder : o.workdir);
  if (!id.ok()) return id.error();
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(o.timeout_s);
  std::vector<JobState> recorded;  // the states last written to jobs.json
  for (;;) {
    if (o.stop && o.stop->load()) {
      (void)cancel({*id});
      return makeError(Errc::Cancelled, "cancelled: job array " + *id + " was cancelled (scancel); what finished is kept");
    }
    auto states = arrayStates(*id);
    if (!states.ok()) return states.error();
    std::vector<JobState> out(batch.size());
    bool allEnded = true;
    for (size_t i = 0; i < batch.size(); ++i) {
      auto it = states->find(static_cast<int>(i));
      out[i] = it != states->end() ? it->second : JobState{*id + "_" + std::to_string(i), "UNKNOWN", "no longer listed", ""};
      if (out[i].cannotStart()) {
        (void)cancel({*id});
        return makeError(Errc::InvalidConfig, out[i].describe() + " can never start as asked: fix the --sbatch-arg its reason names");
      }
      allEnded = allEnded && (out[i].ended() || out[i].state == "UNKNOWN");
    }
    recordStates(batch, out, o.folder, recorded);
    if (allEnded) return out;
    if (std::chrono::steady_clock::now() >= until) {
      (void)cancel({*id});
      return makeError(Errc::Io, "job array " + *id + " had not ended after its timeout; cancelled");
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(o.poll_s));
  }
}

}  // namespace

std::string arrayScript(const std::vector<ArrayTask>& tasks) {
  std::string s = "#!/bin/bash\n# One run per array task (workbench-cli): task i runs the i-th command.\nset -eu\n";
  s += "case \"$SLURM_ARRAY_TASK_ID\" in\n";
  for (size_t i = 0; i < tasks.size(); ++i) {
    s += "  " + std::to_string(i) + ") exec";
    for (const auto& a : tasks[i].argv) s += " " + quoted(withRunDir(a, tasks[i].run_dir));
    s += " ;;\n";
  }
  s += "  *) echo \"no run for array task $SLURM_ARRAY_TASK_ID\" >&2; exit 2 ;;\nesac\n";
  return s;
}

Result<std::vector<TaskEnd>> runArray(const std::vector<ArrayTask>& tasks, const ArrayOptions& o) {
  std::vector<TaskEnd> ends(tasks.size());
  std::vector<size_t> todo;
  for (size_t i = 0; i < tasks.size(); ++i) {
    ends[i].state = "not run";
    ends[i].run_dir = tasks[i].run_dir;
    todo.push_back(i);
  }
  for (int attempt = 0; attempt < 2 && !todo.empty(); ++attempt) {
    std::vector<ArrayTask> batch;
    for (size_t i : todo) {
      ArrayTask t = tasks[i];
      if (attempt > 0 && o.rerun_in_fresh_folder) t.run_dir = t.run_dir.string() + ".rerun";  // the first attempt's kept
      ends[i].run_dir = t.run_dir;
      batch.push_back(t);
    }
    auto states = runOnce(batch, o);
    if (!states.ok()) return states.error();
    std::vector<size_t> again;
    for (size_t k = 0; k < todo.size(); ++k) {
      TaskEnd& e = ends[todo[k]];
      const JobState& j = (*states)[k];
      e.state = j.state;
      e.reason = j.reason;
      e.exit_code = j.exit_code;
      e.finished = j.state == "COMPLETED" || j.state == "FAILED";
      if (j.endedBySlurm()) {
        e.slurm_ended.push_back(j.describe());
        again.push_back(todo[k]);
      }
    }
    todo = again;
  }
  return ends;
}

}  // namespace wb::launch::slurm
