// The Lightning callback (app/python/workbench_recorder/lightning.py): its hooks driven in
// Trainer.fit's order by stand-ins (no Lightning needed), and a real Trainer.fit when Lightning
// is installed (Debian 12 does not package it: that test skips, saying so; packaging/torch2-check.sh
// --lightning runs it in a Debian 13 root with Lightning's sources).
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include "python_util.h"
#include "wb/records/run_record.h"

using nlohmann::json;

class TestLightningCallback : public QObject {
  Q_OBJECT
  QTemporaryDir scratch_;

  wb::records::RunRecord loaded(const QString& dir) {
    auto rec = wb::records::loadRun(dir.toStdString());
    if (!rec.ok()) qWarning("%s", rec.error().message.c_str());
    return rec.ok() ? std::move(rec.value()) : wb::records::RunRecord{};
  }

 private Q_SLOTS:
  void initTestCase() {
    WB_NEED(wb::test::missingPython3());
    QVERIFY(scratch_.isValid());
  }

  // Import of the package never imports Lightning (the callback module neither, until a callback is made).
  void lightningImportedOnlyWhenUsed() {
    const auto r = wb::test::runPython({QStringLiteral("-c"), QStringLiteral(
        "import sys, workbench_recorder, workbench_recorder.lightning\n"
        "print('lightning' in sys.modules or 'pytorch_lightning' in sys.modules)")});
    QVERIFY2(r.rc == 0, r.describe().constData());
    QCOMPARE(r.out.trimmed(), QByteArray("False"));
  }

  void hooksRecordTheTrainersRun() {
    const QString dir = scratch_.filePath(QStringLiteral("standin"));
    const auto r = wb::test::runPython({wb::test::pythonTestsDir() + QStringLiteral("/lightning_standin.py"), dir});
    QVERIFY2(r.rc == 0, r.describe().constData());
    const auto rec = loaded(dir);
    QVERIFY2(rec.problems.empty(), rec.problems.empty() ? "" : rec.problems.front().c_str());
    // The Trainer's own settings are the run's speedups.
    QCOMPARE(rec.configAt("speedups.precision"), json("bf16-mixed"));
    QCOMPARE(rec.configAt("speedups.workers"), json(3));
    QCOMPARE(rec.configAt("speedups.pin_memory"), json(true));
    QCOMPARE(rec.configAt("speedups.devices"), json(1));
    QCOMPARE(rec.configAt("speedups.early_stopping.patience"), json(1));
    QCOMPARE(rec.configAt("train.accumulate_grad_batches"), json(2));
    QCOMPARE(rec.configAt("lightning.strategy"), json("SingleDeviceStrategy"));
    QVERIFY(rec.start.speedups.at("workers").requested);
    QVERIFY(rec.start.speedups.at("pin_memory").requested);
    QVERIFY(!rec.start.speedups.at("sharding").requested);
    // Steps, accumulation, the sanity check left out, percentages as fractions, early stopping.
    QCOMPARE(rec.summary.steps.value_or(0), int64_t(30));
    QCOMPARE(rec.summary.optimizer_steps.value_or(0), int64_t(15));
    QCOMPARE(rec.summary.train_samples.value_or(0), int64_t(30 * 16));
    QCOMPARE(int(rec.evals.size()), 3);
    QCOMPARE(rec.evals[1].val_acc, 0.6);
    QCOMPARE(rec.status, std::string("early-stopped"));
    QVERIFY(rec.early_stop.has_value());
    QCOMPARE(rec.early_stop->best_epoch, 2);
    QCOMPARE(rec.early_stop->epochs_saved, 2);
    // The wait between batches is the data time; forward, backward and the optimizer from the hooks.
    QVERIFY(rec.steps.back().ms.has_value());
    const auto& ms = *rec.steps.back().ms;
    QVERIFY2(ms.data >= 1.5 && ms.fwd >= 0.8 && ms.bwd >= 0.8,
             qPrintable(QStringLiteral("data %1 fwd %2 bwd %3").arg(ms.data).arg(ms.fwd).arg(ms.bwd)));
  }

  void realTrainerFit() {
    WB_NEED(wb::test::missingLightning());
    const QString dir = scratch_.filePath(QStringLiteral("fit"));
    const auto r = wb::test::runPython({wb::test::pythonTestsDir() + QStringLiteral("/lightning_fit.py"), dir}, 240000);
    QVERIFY2(r.rc == 0, r.describe().constData());
    const auto rec = loaded(dir);
    QCOMPARE(rec.status, std::string("ok"));
    QCOMPARE(rec.summary.steps.value_or(0), int64_t(36));  // 384 / 32 x 3 epochs
    QCOMPARE(rec.summary.optimizer_steps.value_or(0), int64_t(18));
    QCOMPARE(int(rec.evals.size()), 3);
    QCOMPARE(rec.configAt("speedups.precision"), json("32-true"));
    QVERIFY(rec.summary.train_samples_per_s.value_or(0) > 0);
  }
};

QTEST_APPLESS_MAIN(TestLightningCallback)
#include "test_lightning_callback.moc"
