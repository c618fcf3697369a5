// bench_window_run: a run started from the window (MainWindow::runExperiment: the QProcess
// `workbench-cli run --events-stdout`, live plots drawing) against the same experiment as a
// plain `workbench-cli run`, interleaved, medians. The window's own drawing is other load to
// the run, so its cost shows as the run's other_load_cores. Prints a table; asserts nothing.
//
//   bench_window_run [--repeats N] [--limit-train N]     (QT_QPA_PLATFORM=offscreen or a display)
#include <sys/resource.h>

#include <QApplication>
#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "plots/live_plots.h"
#include "runs/run.h"
#include "setup/setup_panel.h"
#include "window/main_window.h"
#include "wb/common/config.h"
#include "wb/proto/config_json.h"
#include "wb/proto/events.h"

using nlohmann::json;

namespace {

struct Sample {
  double sps = NAN, stepMs = NAN, other = NAN, wall = NAN;
  double windowCores = NAN;  // this process's own CPU (the window) over the run
};

double selfCpuSeconds() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

Sample fromRunDir(const QString& dir, double wall) {
  Sample s;
  s.wall = wall;
  std::ifstream in((dir + QStringLiteral("/summary.json")).toStdString());
  const json sum = json::parse(in, nullptr, false);
  if (sum.is_object()) {
    s.sps = sum.value("train_samples_per_s", NAN);
    s.other = sum.value("/cpu/other_load_cores"_json_pointer, NAN);
  }
  std::vector<double> steps;
  for (const auto& ev : wb::proto::readEventsFile((dir + QStringLiteral("/events.jsonl")).toStdString()))
    if (ev.value("type", "") == "step" && ev.value("rank", 0) == 0 && ev["step_ms"].is_number())
      steps.push_back(ev["step_ms"].get<double>());
  if (steps.size() > 1) {
    steps.erase(steps.begin());
    std::sort(steps.begin(), steps.end());
    s.stepMs = steps[steps.size() / 2];
  }
  return s;
}

Sample fromWindow(const json& experiment, const QString& root) {
  wb::ui::MainWindow::Options o;
  o.runsRoot = root;
  o.useSettings = false;
  o.queryCli = false;
  wb::ui::MainWindow w(o);
  w.resize(1280, 800);
  w.show();
  w.setup()->setConfigJson(experiment);
  QElapsedTimer clock;
  clock.start();
  const double cpu0 = selfCpuSeconds();
  wb::ui::Run* run = w.runExperiment();
  if (!run) return {};
  w.plots()->showTab(QStringLiteral("throughput"));
  while (!wb::ui::isFinal(run->status())) QTest::qWait(20);
  Sample s = fromRunDir(run->runDir(), clock.elapsed() / 1000.0);
  s.windowCores = (selfCpuSeconds() - cpu0) / s.wall;
  return s;
}

Sample fromCli(const json& experiment, const QString& root, int i) {
  const QString config = root + QStringLiteral("/cli-%1.json").arg(i), dir = root + QStringLiteral("/cli-run-%1").arg(i);
  std::ofstream(config.toStdString()) << experiment.dump();
  QElapsedTimer clock;
  clock.start();
  QProcess p;
  p.start(qEnvironmentVariable("WB_CLI"), {QStringLiteral("run"), QStringLiteral("--config"), config, QStringLiteral("--run-dir"), dir});
  p.waitForFinished(-1);
  return fromRunDir(dir, clock.elapsed() / 1000.0);
}

double median(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }), v.end());
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void printRow(const char* name, const std::vector<Sample>& s) {
  std::vector<double> sps, step, other, wall, window;
  for (const auto& x : s)
    sps.push_back(x.sps), step.push_back(x.stepMs), other.push_back(x.other), wall.push_back(x.wall),
        window.push_back(x.windowCores);
  std::printf("%-36s %10.2f %16.0f %18.2f %14.2f %12.2f\n", name, median(step), median(sps), median(other), median(window),
              median(wall));
}

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  int repeats = 3, limit = 0;
  for (int i = 1; i + 1 < argc; ++i) {
    if (QByteArray(argv[i]) == "--repeats") repeats = std::max(1, std::atoi(argv[i + 1]));
    if (QByteArray(argv[i]) == "--limit-train") limit = std::max(0, std::atoi(argv[i + 1]));
  }
  qputenv("WB_CLI", WB_CLI_PATH);
  QTemporaryDir root;
  const wb::Config defaults;  // named: a Config{} temporary trips GCC 12's -Wmaybe-uninitialized
  json experiment = wb::proto::configToJson(defaults);
  experiment["name"] = "bench-window-run";
  experiment["data"]["limit_train"] = limit;
  std::vector<Sample> window, cli;
  for (int r = 0; r < repeats; ++r) {
    window.push_back(fromWindow(experiment, root.path()));
    cli.push_back(fromCli(experiment, root.path(), r));
    std::fprintf(stderr, "  round %d done\n", r + 1);
  }
  std::printf("bench_window_run: the default experiment (lenet, Fashion-MNIST%s), %d interleaved repeats, medians\n",
              limit ? " subset" : " 60k", repeats);
  std::printf("%-36s %10s %16s %18s %14s %12s\n", "how it was started", "step ms", "train samples/s", "other load cores",
              "window cores", "wall s");
  printRow("from the window (live plots)", window);
  printRow("workbench-cli run", cli);
  return 0;
}
