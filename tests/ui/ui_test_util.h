#pragma once
// Helpers for the ui tests: a scratch runs root under $WB_RUNS_ROOT, hand-written run
// directories and event lines, and the workbench-cli this build made.
#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>
#include <QString>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QWidget>
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include "wb/common/config.h"
#include "wb/proto/config_json.h"
#include "wb/proto/event_types.h"
#include "wb/proto/events.h"
#include "wb/proto/run_summary.h"
#include "wb/common/sysinfo.h"
#include "window/main_window.h"

namespace wb::ui::test {

// The CLI built with these tests (WB_CLI_PATH), made the one the ui finds.
inline QString builtCli() {
#ifdef WB_CLI_PATH
  return QStringLiteral(WB_CLI_PATH);
#else
  return QStringLiteral("workbench-cli");
#endif
}
inline QString cliPath() {
  if (!QFileInfo(builtCli()).isExecutable() && !qEnvironmentVariableIsEmpty("WB_CLI")) return qEnvironmentVariable("WB_CLI");
  return builtCli();
}

// Test settings and the CLI: call first in initTestCase(). The CLI this build made is used;
// a WB_CLI already set wins when this build has none.
inline void setUpEnvironment() {
  QStandardPaths::setTestModeEnabled(true);
  qputenv("WB_CLI", cliPath().toUtf8());
  // No stored noise band (this host's own would make verdicts machine-dependent): the assumed one.
  if (qEnvironmentVariableIsEmpty("WB_NOISE_DIR"))
    qputenv("WB_NOISE_DIR", QFile::encodeName(QDir::tempPath() + QStringLiteral("/wb-ui-tests-no-noise")));
}

// A window on its own runs root: no saved settings, no capabilities query.
inline MainWindow::Options windowOptions(const QTemporaryDir& root) {
  MainWindow::Options o;
  o.runsRoot = root.path();
  o.useSettings = false;
  o.queryCli = false;
  return o;
}

// The small real experiment: Fashion-MNIST subset, lenet, one epoch, frequent step events.
inline nlohmann::json smallExperiment(const char* name) {
  nlohmann::json doc = wb::proto::configToJson(wb::Config{});
  doc["name"] = name;
  doc["data"]["limit_train"] = 2000;
  doc["data"]["limit_val"] = 500;
  doc["model"]["name"] = "lenet";
  doc["train"]["epochs"] = 1;
  doc["train"]["log_every"] = 5;
  doc["speedups"]["workers"] = 0;
  return doc;
}

// A scratch folder under $WB_RUNS_ROOT (or the temp dir), removed at the end of the test.
inline QTemporaryDir scratchRoot() {
  const QString base = qEnvironmentVariable("WB_RUNS_ROOT", QDir::tempPath());
  QDir().mkpath(base);
  return QTemporaryDir(base + QStringLiteral("/ui-XXXXXX"));
}

inline nlohmann::json event(const std::string& type, nlohmann::json fields = nlohmann::json::object(), int rank = 0) {
  nlohmann::json ev = wb::proto::makeEvent(type, rank, fields.value("t", 0.0));
  ev.update(fields);
  return ev;
}

inline QByteArray line(const nlohmann::json& ev) { return QByteArray::fromStdString(wb::proto::encodeEvent(ev) + "\n"); }

// The trainer's events, through its typed writers (wb/proto/event_types.h).
inline nlohmann::json stepEvent(int step, double loss, int rank = 0) {
  wb::proto::StepEvent e;
  e.epoch = 1;
  e.step = step;
  e.samples = step * 64;
  e.loss = loss;
  e.lr = 0.01;
  e.samples_per_s = 640.0 + step;
  e.progress = step / 100.0;
  e.eta_s = 100 - step;
  e.ms = wb::proto::StepPhases{1.0, 0.0, 2.0, 3.0, 0.0, 0.5};  // data, h2d, fwd, bwd, comm, opt
  e.mem = wb::proto::MemoryPart{};
  e.mem->device = "cpu";
  e.mem->rss = int64_t{100} << 20;
  return wb::proto::toEvent(e, rank, step * 0.1);
}

inline nlohmann::json startEvent(int64_t stepsPerEpoch, const std::string& device = "cpu", int worldSize = 1) {
  wb::proto::StartEvent e;
  e.steps_per_epoch = stepsPerEpoch;
  e.device = device;
  e.world_size = worldSize;
  return wb::proto::toEvent(e, 0, 0.0);
}

// The end event; its summary's fields given as JSON go through the summary's own reader.
inline nlohmann::json endEvent(const std::string& status, const nlohmann::json& summary) {
  return wb::proto::toEvent(wb::proto::EndEvent{status, wb::proto::readRunSummary(summary)}, 0, 0.0);
}

// Evaluations reach `acc` at t = 5 and 10 (rising to it), then the run ends.
inline QByteArray eventsReaching(double acc) {
  QByteArray out = line(stepEvent(10, 2.0)) + line(stepEvent(20, 1.5));
  out += line(event("eval", {{"epoch", 1}, {"step", 20}, {"t", 5.0}, {"val_acc", acc - 0.1}, {"eval_ms", 100}}));
  out += line(event("eval", {{"epoch", 2}, {"step", 40}, {"t", 10.0}, {"val_acc", acc}, {"eval_ms", 100}}));
  return out;
}

// The column headed `title`; -1 when there is none.
inline int columnOf(const QTableWidget* table, const QString& title) {
  for (int c = 0; c < table->columnCount(); ++c)
    if (table->horizontalHeaderItem(c) && table->horizontalHeaderItem(c)->text() == title) return c;
  return -1;
}

inline bool writeFile(const QString& path, const QByteArray& bytes, QIODevice::OpenMode mode = QIODevice::WriteOnly) {
  QFile f(path);
  if (!f.open(mode)) return false;
  return f.write(bytes) == bytes.size();
}

// summary.cpu as the launcher fills it (wb/proto/run_summary.h), with no verdict of its own.
inline wb::proto::RunCpu cpuOf(double otherLoad, double used, int cores = 2) {
  wb::proto::RunCpu c;
  c.cores = cores;
  c.asked_cores = 1;
  c.used_cores = used;
  c.other_load_cores = otherLoad;
  c.contended = otherLoad >= wb::kContendedOtherCores;
  return c;
}

// A finished run's summary, filled as the trainer and the launcher fill it (train_samples_per_s
// over training steps, eval_s, time to first step, the command's wall time, the machine's CPU
// with no other load); written through the summary's own writer.
inline wb::proto::RunSummary summaryOf(const QString& status, const QString& id, const QString& name) {
  wb::proto::RunSummary s;
  s.status = status.toStdString();
  s.run_id = id.toStdString();
  s.name = name.toStdString();
  s.best_val_acc = 0.8;
  s.train_samples_per_s = 1000.0;
  s.train_s = 8.0;
  s.train_samples = 8000;
  s.eval_s = 1.5;
  s.checkpoint_s = 0.25;
  s.time_to_first_step_s = 2.0;
  s.run_wall_s = 12.0;
  s.wall_s = 10.0;
  s.epochs = 1;
  s.cpu = cpuOf(0.05, 0.97);
  return s;
}

// <root>/<id>/ with config.json (named `name`) and the given events; summary.json when status
// given (summaryOf, with `summaryFields` set over it, a discarded value removing one, then read
// and written through the summary's own reader and writer).
inline QString writeRunDir(const QString& root, const QString& id, const QString& name, const QByteArray& events,
                           const QString& summaryStatus = {}, const nlohmann::json& summaryFields = nlohmann::json::object()) {
  const QString dir = root + QLatin1Char('/') + id;
  QDir().mkpath(dir);
  wb::Config c;
  c.name = name.toStdString();
  writeFile(dir + QStringLiteral("/config.json"), QByteArray::fromStdString(wb::proto::configToJson(c).dump(2)));
  writeFile(dir + QStringLiteral("/events.jsonl"), events);
  if (!summaryStatus.isEmpty()) {
    nlohmann::json s = wb::proto::toJson(summaryOf(summaryStatus, id, name));
    for (const auto& [key, value] : summaryFields.items()) {
      if (value.is_discarded()) s.erase(key);
      else s[key] = value;
    }
    const nlohmann::json written = wb::proto::toJson(wb::proto::readRunSummary(s));
    writeFile(dir + QStringLiteral("/summary.json"), QByteArray::fromStdString(written.dump(2)));
  }
  return dir;
}

// summary.cpu of a run that shared its machine with another load of `otherLoad` cores.
inline nlohmann::json contendedCpu(double otherLoad, int cores = 2) {
  wb::proto::RunCpu c = cpuOf(otherLoad, 0.6, cores);
  c.contended = true;
  c.note = "another process used the CPU";
  return wb::proto::toJson(c);
}

// A run's curves for hand-written run folders: a start, steps, and three evaluations rising to
// `acc` at t = 2, 4, 6.
inline QByteArray curvesReaching(double acc) {
  QByteArray out = line(startEvent(40));
  for (int step = 5; step <= 40; step += 5) out += line(stepEvent(step, 2.0 - step / 40.0));
  for (int e = 1; e <= 3; ++e)
    out += line(event("eval", {{"epoch", e}, {"step", e * 13}, {"t", 2.0 * e}, {"val_acc", acc * e / 3}, {"val_loss", 1.0 / e}, {"eval_ms", 50}}));
  return out;
}

// <root>/<id> as writeRunDir, with `configPatch` merged over the default config (named `name`).
inline QString writeRunDirWith(const QString& root, const QString& id, const QString& name, const nlohmann::json& configPatch,
                               const QByteArray& events, const QString& summaryStatus = {},
                               const nlohmann::json& summaryFields = nlohmann::json::object()) {
  const QString dir = writeRunDir(root, id, name, events, summaryStatus, summaryFields);
  nlohmann::json config = wb::proto::configToJson(wb::Config{});
  config["name"] = name.toStdString();
  config.merge_patch(configPatch);
  writeFile(dir + QStringLiteral("/config.json"), QByteArray::fromStdString(config.dump(2)));
  return dir;
}

// Nine runs of every kind in `root`, as a newcomer's list looks after a while: a baseline (its
// folder is returned), three that changed one thing, a failed one, a cancelled one, two measured
// under contention and one without a summary.
inline QString writeManyRuns(const QString& root) {
  using nlohmann::json;
  const QString base = writeRunDirWith(root, QStringLiteral("20261201-100000-fashion-mnist-lenet-0001"), QStringLiteral("fashion-mnist-lenet"),
                                       json::object(), curvesReaching(0.8), QStringLiteral("ok"));
  const json changes[] = {{{"speedups", {{"precision", "bf16-mixed"}}}},
                          {{"speedups", {{"workers", 2}}}},
                          {{"data", {{"dataset", "folder:/tmp/fmnist/png"}}}}};
  for (int i = 0; i < 3; ++i)
    writeRunDirWith(root, QStringLiteral("20261201-10%1000-fashion-mnist-lenet-00%1").arg(i + 1), QStringLiteral("fashion-mnist-lenet"),
                    changes[i], curvesReaching(0.75 + 0.05 * i), QStringLiteral("ok"), {{"train_samples_per_s", 900.0 + 200 * i}});
  writeRunDirWith(root, QStringLiteral("20261201-110000-fashion-mnist-lenet-0005"), QStringLiteral("fashion-mnist-lenet"),
                  {{"data", {{"dataset", "folder:/nonexistent"}}}}, curvesReaching(0.3), QStringLiteral("failed"),
                  {{"error", "the dataset folder does not exist"}});
  writeRunDirWith(root, QStringLiteral("20261201-111000-fashion-mnist-lenet-0006"), QStringLiteral("fashion-mnist-lenet"),
                  {{"train", {{"epochs", 5}}}}, curvesReaching(0.5), QStringLiteral("cancelled"));
  for (int i = 0; i < 2; ++i)
    writeRunDirWith(root, QStringLiteral("20261201-12%1000-fashion-mnist-lenet-000%1").arg(i + 7), QStringLiteral("fashion-mnist-lenet"),
                    {{"speedups", {{"workers", 1}}}}, curvesReaching(0.8), QStringLiteral("ok"), {{"cpu", contendedCpu(0.9)}});
  writeRunDirWith(root, QStringLiteral("20261201-130000-fashion-mnist-lenet-0009"), QStringLiteral("fashion-mnist-lenet"),
                  {{"speedups", {{"devices", 2}}}}, curvesReaching(0.6));
  return base;
}

// WB_GRAB_DIR=<folder>: a picture of the widget as <name>.png, for a person to look at.
inline void grabIfAsked(QWidget& widget, const QString& name, QSize size = QSize(1200, 760)) {
  if (!qEnvironmentVariableIsSet("WB_GRAB_DIR")) return;
  widget.resize(size);
  widget.show();
  QVERIFY(QTest::qWaitForWindowExposed(&widget));
  QTest::qWait(200);
  QVERIFY(widget.grab().save(qEnvironmentVariable("WB_GRAB_DIR") + QLatin1Char('/') + name + QStringLiteral(".png")));
}

}  // namespace wb::ui::test
