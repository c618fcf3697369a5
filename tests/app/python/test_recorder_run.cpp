// A plain PyTorch training loop (Debian's python3-torch) on a slice of Fashion-MNIST, recorded
// with the Python recorder (train_fashion_mnist.py), then read back as the workbench reads its
// own runs: core/records' loader, and `workbench-cli compare`, `export` and `whatif`.
#include <QtTest/QtTest>

#include <cmath>

#include <nlohmann/json.hpp>

#include "python_util.h"
#include "wb/proto/event_types.h"
#include "wb/proto/events.h"
#include "wb/records/run_record.h"
#include "wb/render/table.h"

using nlohmann::json;

namespace {
QString cli() { return QStringLiteral(WB_CLI_PATH); }
}  // namespace

class TestRecorderRun : public QObject {
  Q_OBJECT
  QTemporaryDir scratch_{wb::test::scratchPattern(QStringLiteral("recorder"))};
  QString run_;
  wb::records::RunRecord rec_;

 private Q_SLOTS:
  void initTestCase() {
    WB_NEED(wb::test::missingPythonTorch());
    WB_NEED(wb::test::missingFashionMnist());
    QVERIFY(scratch_.isValid());
    run_ = scratch_.filePath(QStringLiteral("python-run"));
    const auto r = wb::test::runPython({wb::test::pythonTestsDir() + QStringLiteral("/train_fashion_mnist.py"), run_,
                                        QStringLiteral("--epochs"), QStringLiteral("3")},
                                       240000);
    QVERIFY2(r.rc == 0, r.describe().constData());
    auto rec = wb::records::loadRun(run_.toStdString());
    QVERIFY2(rec.ok(), rec.ok() ? "" : rec.error().message.c_str());
    rec_ = std::move(rec.value());
  }

  void folderHasTheRunsFiles() {
    const QDir dir(run_);
    for (const char* f : {"config.json", "events.jsonl", "summary.json", "env.json", ".lock"})
      QVERIFY2(dir.exists(QString::fromLatin1(f)), f);
    // summary.json was renamed into place: no temporary file is left beside it.
    QCOMPARE(dir.entryList({QStringLiteral("*.tmp-*")}, QDir::Files | QDir::Hidden).size(), 0);
  }

  void readsAsARunWithNothingSkipped() {
    QVERIFY2(rec_.problems.empty(), rec_.problems.empty() ? "" : rec_.problems.front().c_str());
    QCOMPARE(rec_.status, std::string("ok"));
    QCOMPARE(rec_.name, std::string("python-fashion-mlp"));
    QCOMPARE(rec_.summary.steps.value_or(0), int64_t(96));  // ceil(2000 / 64) x 3
    QCOMPARE(rec_.summary.train_samples.value_or(0), int64_t(6000));
    QCOMPARE(int(rec_.evals.size()), 3);
    QCOMPARE(int(rec_.epochs.size()), 3);
    QCOMPARE(rec_.start.model.parameters, int64_t(784 * 128 + 128 + 128 * 10 + 10));
    QCOMPARE(rec_.start.dataset.train, int64_t(2000));
    QCOMPARE(rec_.configAt("speedups.workers"), json(0));
    QCOMPARE(rec_.configAt("speedups.precision"), json("32-true"));  // not named by the script: off
    QVERIFY2(rec_.summary.best_val_acc.value_or(0) > 0.6, "the loop learned (a real run, not a stub)");
    QVERIFY(rec_.summary.peak_mem.value_or(0) > 10 << 20);  // peak RSS: torch alone is tens of MiB
    QVERIFY(rec_.summary.cpu && rec_.summary.cpu->contended.has_value() && rec_.summary.cpu->other_load_cores);
  }

  // Throughput counts training steps only: evaluation and the rest of the loop are not in it.
  void throughputCountsTrainingStepsOnly() {
    const auto& s = rec_.summary;
    QVERIFY(s.train_s && s.wall_s && s.eval_s && s.train_samples_per_s);
    QVERIFY(*s.eval_s > 0 && *s.train_s < *s.wall_s - *s.eval_s + 1e-6);
    QVERIFY(std::abs(*s.train_samples_per_s - 6000 / *s.train_s) < 1e-6 * *s.train_samples_per_s);
    double epochTrain = 0;
    for (const auto& ev : wb::proto::readEventsFile((run_ + QStringLiteral("/events.jsonl")).toStdString()))
      if (ev["type"] == "epoch") epochTrain += wb::proto::readEpochEvent(ev).train_seconds;
    QVERIFY(std::abs(epochTrain - *s.train_s) < 1e-6);
  }

  // The step split the script timed (data wait, forward, backward, optimizer) adds up to the step.
  void stepSplitAddsUp() {
    int checked = 0;
    for (const auto& ev : wb::proto::readEventsFile((run_ + QStringLiteral("/events.jsonl")).toStdString())) {
      if (ev["type"] != "step") continue;
      const auto s = wb::proto::readStepEvent(ev);
      QVERIFY(s.ms && s.ms->other);
      QVERIFY(s.ms->fwd > 0 && s.ms->bwd > 0 && s.ms->opt > 0 && s.ms->data > 0);
      const double sum = s.ms->data + s.ms->fwd + s.ms->bwd + s.ms->opt + *s.ms->other;
      QVERIFY(std::abs(sum - s.step_ms) < 1e-6);
      QVERIFY(s.mem && s.mem->device == "cpu" && s.mem->rss_peak.value_or(0) > 0);
      ++checked;
    }
    QVERIFY(checked >= 18);  // 96 steps, a step event every 5
  }

  void cliCompareReadsIt() {
    const auto r = wb::test::runProcess(cli(), {QStringLiteral("compare"), QStringLiteral("--details"), QStringLiteral("--baseline"), run_, run_}, 120000);
    QVERIFY2(r.rc == 0, r.describe().constData());
    const QString best = QString::number(*rec_.summary.best_val_acc * 100, 'f', 2) + QStringLiteral(" %");
    QVERIFY2(r.all().contains(best), r.describe().constData());
    QVERIFY2(r.all().contains(QString::fromStdString(wb::fmtRate(*rec_.summary.train_samples_per_s))),
             r.describe().constData());
    QVERIFY2(!r.all().contains(QLatin1String("this reader does not know")), r.describe().constData());  // nothing skipped
  }

  void cliExportReadsIt() {
    const QString out = scratch_.filePath(QStringLiteral("compare.json"));
    const auto r = wb::test::runProcess(cli(), {QStringLiteral("export"), QStringLiteral("--baseline"), run_,
                                                QStringLiteral("--output"), out}, 120000);
    QVERIFY2(r.rc == 0, r.describe().constData());
    QFile f(out);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const json doc = json::parse(f.readAll().toStdString());
    const json& row = doc["comparison"]["runs"][0];
    QCOMPARE(row["best_val_acc"].get<double>(), *rec_.summary.best_val_acc);
    QCOMPARE(row["train_samples_per_s"].get<double>(), *rec_.summary.train_samples_per_s);
    QCOMPARE(row["epochs"].get<int>(), 3);
    QVERIFY(row["step_ms"]["data"].get<double>() > 0);
  }

  void cliWhatifReadsIt() {
    const auto r = wb::test::runProcess(cli(), {QStringLiteral("whatif"), QStringLiteral("early-stopping"), run_,
                                                QStringLiteral("--json")}, 120000);
    QVERIFY2(r.rc == 0, r.describe().constData());
    const json doc = json::parse(r.out.toStdString());
    QCOMPARE(doc["evaluations"].get<int>(), 3);
    QCOMPARE(doc["monitor"].get<std::string>(), std::string("val_loss"));
    QVERIFY(doc["rows"].size() > 1);
    QCOMPARE(doc["rows"][0]["best_val_acc"].get<double>(), rec_.evals[size_t(doc["rows"][0]["best_epoch"].get<int>() - 1)].val_acc);
  }
};

QTEST_APPLESS_MAIN(TestRecorderRun)
#include "test_recorder_run.moc"
