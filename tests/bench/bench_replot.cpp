// bench_replot: loads 20 runs x 100k step points into the live plots and prints how long the
// replots take ("20 runs x 100 k points stays responsive").
//   bench_replot [runs] [points]        (offscreen unless a display is set)
// Not a CTest test: it measures, it does not judge.
#include <QApplication>
#include <QElapsedTimer>
#include <QRandomGenerator>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <vector>

#include "plots/live_plots.h"
#include "plots/qcp.h"
#include "runs/runs_model.h"

using wb::ui::EvalPoint;
using wb::ui::LivePlots;
using wb::ui::Run;
using wb::ui::RunsModel;
using wb::ui::StepPoint;

namespace {

void fill(Run* run, int first, int count, int runIndex, QRandomGenerator& rng) {
  auto& s = run->mutableSeries();
  for (int i = first; i < first + count; ++i) {
    StepPoint p;
    p.step = i;
    p.epoch = i / 1000.0;
    p.t = i * 0.01;
    p.samples = i * 64.0;
    p.loss = 2.3 * std::exp(-i / (20000.0 + 1000.0 * runIndex)) + 0.1 * rng.generateDouble();
    p.samplesPerS = 5000 + 500 * runIndex + 200 * rng.generateDouble();
    p.ms = {1.0, 0.1, 2.0, 3.0, 0.5, 0.2};
    p.rss = (200 + runIndex) * 1024.0 * 1024.0;
    s.appendStep(p);
    if ((i + 1) % 1000 == 0) {
      EvalPoint e;
      e.step = i;
      e.epoch = (i + 1) / 1000.0;
      e.t = p.t;
      e.samples = p.samples;
      e.valLoss = p.loss + 0.05;
      e.valAcc = 0.6 + 0.3 * (1 - std::exp(-i / 30000.0));
      s.appendEval(e);
    }
  }
}

// Wall time and this thread's CPU time: on a shared machine the CPU time is the figure to read.
struct Stats {
  double wallMedian, wallMax, cpuMedian;
};

double threadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

template <class F>
Stats measure(int reps, F&& fn) {
  std::vector<double> wall, cpu;
  for (int r = 0; r < reps; ++r) {
    QElapsedTimer t;
    const double c0 = threadCpuMs();
    t.start();
    fn(r);
    wall.push_back(t.nsecsElapsed() / 1e6);
    cpu.push_back(threadCpuMs() - c0);
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  return {wall[wall.size() / 2], wall.back(), cpu[cpu.size() / 2]};
}

// Points are counted here, after the measurement (argument evaluation order is unspecified).
void row(const char* what, Stats s, const LivePlots& plots, const char* tab) {
  std::printf("| %-46s | %8.1f | %8.1f | %8.1f | %9d | %9d |\n", what, s.cpuMedian, s.wallMedian, s.wallMax,
              plots.pointCount(QString::fromLatin1(tab)), plots.drawnPointCount(QString::fromLatin1(tab)));
}

// Draws the visible tab whole: a load taken in slices runs to its end.
void flushWhole(LivePlots& plots) {
  plots.flush(true);
  while (plots.loading()) QCoreApplication::processEvents();
  plots.flush(true);
}

// A first load is taken in slices, the window's events handled between them, and drawn once
// whole: the longest slice is how long the window stops answering; the total, until the picture.
void wholeLoad(const char* what, LivePlots& plots, const char* tab) {
  QElapsedTimer total;
  total.start();
  const double c0 = threadCpuMs();
  std::vector<double> slices;
  QElapsedTimer slice;
  slice.start();
  plots.flush(true);
  slices.push_back(slice.nsecsElapsed() / 1e6);
  while (plots.loading()) {
    slice.restart();
    QCoreApplication::processEvents();
    slices.push_back(slice.nsecsElapsed() / 1e6);
  }
  plots.flush(true);  // the whole picture
  slices.push_back(slice.nsecsElapsed() / 1e6);
  const double longest = *std::max_element(slices.begin(), slices.end());
  std::printf("| %-46s | %8.1f | %8.1f | %8.1f | %9d | %9d |\n", (std::string(what) + ", whole").c_str(), threadCpuMs() - c0,
              total.nsecsElapsed() / 1e6, longest, plots.pointCount(QString::fromLatin1(tab)),
              plots.drawnPointCount(QString::fromLatin1(tab)));
  std::printf("| %-46s | %8s | %8.1f | %8.1f | %9zu | %9s |\n", (std::string(what) + ", longest slice").c_str(), "",
              longest, longest, slices.size(), "slices");
}

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  const int nRuns = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  const int nPoints = argc > 2 ? std::max(10, std::atoi(argv[2])) : 100000;

  RunsModel model;
  LivePlots plots(&model);
  plots.resize(1280, 800);
  plots.show();
  QApplication::processEvents();

  QRandomGenerator rng(42);
  std::vector<Run*> runs;
  for (int r = 0; r < nRuns; ++r) {
    auto* run = new Run(Run::Origin::Launched);
    run->setName(QStringLiteral("run-%1").arg(r));
    fill(run, 0, nPoints, r, rng);
    model.addRun(run, false);
    runs.push_back(run);
  }
  for (Run* r : runs) model.setShown(r, true);
  model.setBaseline(runs.front());

  std::printf("Replot benchmark: %d runs x %d step points (plus %d evals each), plot %dx%d, platform %s\n\n", nRuns,
              nPoints, nPoints / 1000, plots.width(), plots.height(), qPrintable(QGuiApplication::platformName()));
  std::printf("| %-46s | %8s | %8s | %8s | %9s | %9s |\n", "case (median of repeats)", "cpu ms", "wall ms", "wall max", "points",
              "drawn");
  std::printf("|%s|%s|%s|%s|%s|%s|\n", std::string(48, '-').c_str(), std::string(10, '-').c_str(), std::string(10, '-').c_str(),
              std::string(10, '-').c_str(), std::string(11, '-').c_str(), std::string(11, '-').c_str());

  plots.showTab(QStringLiteral("loss"));
  wholeLoad("loss tab: first load", plots, "loss");
  row("loss tab: redraw, no new data", measure(15, [&](int) { plots.flush(true); }), plots, "loss");

  int next = nPoints;
  row("loss tab: live, +100 points per run, redraw", measure(15, [&](int) {
        for (size_t r = 0; r < runs.size(); ++r) {
          fill(runs[r], next, 100, int(r), rng);
          Q_EMIT runs[r]->dataAppended();
        }
        next += 100;
        plots.flush(true);
      }),
      plots, "loss");

  QCustomPlot* loss = plots.plot(QStringLiteral("loss"));
  row("loss tab: zoomed to the last 1 %", measure(15, [&](int) {
        loss->xAxis->setRange(next * 0.99, next);
        plots.flush(true);
      }),
      plots, "loss");
  row("loss tab: wheel zoom out, 10 % a step", measure(15, [&](int r) {
        const double width = next * 0.01 * std::pow(1.1, r + 1);
        loss->xAxis->setRange(next - width, next);
        plots.flush(true);
      }),
      plots, "loss");

  row("loss tab: smoothing 0.9 (rebuild all curves)", measure(3, [&](int r) {
        plots.setSmoothing(r % 2 ? 0.8 : 0.9);
        plots.flush(true);
      }),
      plots, "loss");
  plots.setSmoothing(0);

  row("loss tab: x axis -> epoch (rebuild all curves)", measure(3, [&](int r) {
        plots.setXAxis(r % 2 ? LivePlots::XAxis::Step : LivePlots::XAxis::Epoch);
        flushWhole(plots);
      }),
      plots, "loss");

  plots.showTab(QStringLiteral("throughput"));
  wholeLoad("throughput tab: first load", plots, "throughput");
  plots.showTab(QStringLiteral("steptime"));
  row("step-time tab (stacked bars)", measure(5, [&](int) { plots.flush(true); }), plots, "steptime");

  std::printf("\nHidden tabs are not drawn: the memory tab holds %d points (never shown).\n",
              plots.pointCount(QStringLiteral("memory")));
  return 0;
}
