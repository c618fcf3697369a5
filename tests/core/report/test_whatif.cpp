// The early-stopping what-if on hand-checkable curves written through the proto event writers
// (report_fixture.h): the stop epoch, the best epoch kept, the wall time saved; val_acc in max
// mode; min_delta; a run that stopped early itself; fewer than two evaluations; the list parsers;
// the table in the comparison report and its exports.
#include <QtTest/QtTest>

#include <QTemporaryDir>

#include "report_fixture.h"
#include "wb/report/export.h"
#include "wb/report/report.h"
#include "wb/report/whatif.h"

using fixture::FakeRun;
using nlohmann::json;

namespace {

// A run of one evaluation per epoch: val_loss[i] at epoch i+1, epoch i+1 ending at t = 10·(i+1).
FakeRun curveRun(const std::vector<double>& losses, const std::string& monitor = "val_loss") {
  FakeRun r;
  r.set("train.epochs", static_cast<int>(losses.size()));
  r.set("speedups.early_stopping.monitor", monitor);
  r.set("speedups.early_stopping.mode", monitor == "val_acc" ? "max" : "min");
  r.start();
  for (size_t i = 0; i < losses.size(); ++i) {
    const int epoch = static_cast<int>(i + 1);
    const double t = 10.0 * epoch;
    r.eval(epoch, t - 0.5, 1.0 - losses[i]);  // the fixture writes val_loss = 1 − val_acc
    r.epoch(epoch, t, 10.0);
  }
  r.end("ok", 10.0 * static_cast<double>(losses.size()) + 1.0);
  return r;
}

const wb::report::WhatIfRow& rowOf(const wb::report::WhatIf& w, int patience, double minDelta) {
  for (const auto& r : w.rows)
    if (r.patience == patience && r.min_delta == minDelta) return r;
  static wb::report::WhatIfRow none;
  return none;
}

}  // namespace

class TestWhatIf : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void stopEpochBestAndSavings_data() {
    QTest::addColumn<QString>("monitor");
    QTest::addColumn<QList<double>>("losses");
    QTest::addColumn<int>("patience");
    QTest::addColumn<double>("minDelta");
    QTest::addColumn<int>("stopEpoch");   // 0: does not stop
    QTest::addColumn<int>("bestEpoch");
    QTest::addColumn<double>("saved");    // seconds, from the epochs' t (10 s each)
    // val_loss 0.5 0.4 0.45 0.42 0.41 0.43: best at 2, then no improvement.
    const QList<double> dip{0.5, 0.4, 0.45, 0.42, 0.41, 0.43};
    QTest::newRow("patience 1 stops one after the best") << "val_loss" << dip << 1 << 0.0 << 3 << 2 << 30.0;
    QTest::newRow("patience 3") << "val_loss" << dip << 3 << 0.0 << 5 << 2 << 10.0;
    QTest::newRow("patience 4 stops at the last epoch") << "val_loss" << dip << 4 << 0.0 << 6 << 2 << 0.0;
    QTest::newRow("patience 5 outlasts the curve") << "val_loss" << dip << 5 << 0.0 << 0 << 2 << 0.0;
    QTest::newRow("patience 0 is off") << "val_loss" << dip << 0 << 0.0 << 0 << 2 << 0.0;
    // 0.5 0.45 0.44 0.435: min_delta 0.02 counts only 0.5 → 0.45 as an improvement.
    const QList<double> slow{0.5, 0.45, 0.44, 0.435, 0.43};
    QTest::newRow("min_delta 0 keeps improving") << "val_loss" << slow << 2 << 0.0 << 0 << 5 << 0.0;
    QTest::newRow("min_delta 0.02 stops") << "val_loss" << slow << 2 << 0.02 << 4 << 2 << 10.0;
    // val_acc (max): 0.5 0.6 0.58 0.59 → best 2; patience 2 stops at 4, the last epoch.
    QTest::newRow("val_acc max") << "val_acc" << QList<double>{0.5, 0.4, 0.42, 0.41} << 2 << 0.0 << 4 << 2 << 0.0;
  }
  void stopEpochBestAndSavings() {
    QFETCH(QString, monitor);
    QFETCH(QList<double>, losses);
    QFETCH(int, patience);
    QFETCH(double, minDelta);
    QFETCH(int, stopEpoch);
    QFETCH(int, bestEpoch);
    QFETCH(double, saved);
    const auto run = curveRun(std::vector<double>(losses.begin(), losses.end()), monitor.toStdString()).record();
    wb::report::WhatIfOptions o;
    o.patiences = {patience};
    o.min_deltas = {minDelta};
    const auto w = wb::report::earlyStoppingWhatIf(run, o);
    QVERIFY2(w.problem.empty(), w.problem.c_str());
    QCOMPARE(w.evaluations, int(losses.size()));
    QCOMPARE(int(w.rows.size()), 1);
    const auto& r = w.rows.front();
    QCOMPARE(r.stops, stopEpoch > 0);
    QCOMPARE(r.stop_epoch, stopEpoch > 0 ? stopEpoch : int(losses.size()));
    QCOMPARE(r.best_epoch, bestEpoch);
    QCOMPARE(r.epochs_saved, stopEpoch > 0 ? int(losses.size()) - stopEpoch : 0);
    // A stopped run ends with best.pt's weights, one that trains on with its last epoch's.
    QCOMPARE(r.final_weights_epoch, stopEpoch > 0 ? bestEpoch : int(losses.size()));
    QVERIFY(r.wall_saved_s.has_value());
    QCOMPARE(*r.wall_saved_s, saved);
    QVERIFY(r.saved_fraction.has_value());
    QCOMPARE(*r.saved_fraction, saved / (10.0 * losses.size() + 1.0));
    if (monitor == QLatin1String("val_acc")) QCOMPARE(r.best_value, 1.0 - losses[bestEpoch - 1]);
    QCOMPARE(r.best_val_acc, 1.0 - losses[bestEpoch - 1]);
    if (r.stops) QVERIFY(QString::fromStdString(r.reason).contains(monitor));
  }

  void theRunsOwnSettingIsMarked() {
    auto fake = curveRun({0.5, 0.4, 0.45, 0.46});
    fake.set("speedups.early_stopping.patience", 2);
    const auto w = wb::report::earlyStoppingWhatIf(fake.record());
    int marked = 0;
    for (const auto& r : w.rows) marked += r.as_run;
    QCOMPARE(marked, 1);
    QVERIFY(rowOf(w, 2, 0.0).as_run);
    QCOMPARE(int(w.rows.size()), 1 + 5 * 3);  // the default grid: off, then patience 1..5 × min_delta 0, 0.001, 0.01
  }

  // Off, the trainer keeps best.pt by plain improvement: min_delta does not move the best epoch.
  void offIgnoresMinDelta() {
    // 0.5 0.45 0.445: with min_delta 0.01 the rule's best would stay at 2; off, best.pt is epoch 3.
    wb::report::WhatIfOptions o;
    o.patiences = {0, 5};
    o.min_deltas = {0.01};
    const auto w = wb::report::earlyStoppingWhatIf(curveRun({0.5, 0.45, 0.445}).record(), o);
    QCOMPARE(int(w.rows.size()), 2);
    QCOMPARE(w.rows[0].best_epoch, 3);
    QCOMPARE(w.rows[0].min_delta, 0.0);
    QCOMPARE(w.rows[1].best_epoch, 2);
  }

  // A try of early stopping replays the reference runs, which evaluate several times an epoch: only
  // each epoch's last evaluation feeds the rule (as in the trainer), and the stop is placed at the
  // training samples seen there.
  void theReplayFeedsEachEpochsLastEvaluation() {
    FakeRun r;
    r.set("train.epochs", 4);
    r.start();
    // Within each epoch an evaluation at half the epoch (losses that would trigger patience 1 if
    // counted), then the epoch's own: 0.5 0.4 0.45 0.46 at 1000, 2000, 3000, 4000 samples.
    const double mid[] = {0.9, 0.2, 0.9, 0.9}, end[] = {0.5, 0.4, 0.45, 0.46};
    for (int ep = 1; ep <= 4; ++ep) {
      r.eval(ep, 10.0 * ep - 5, 1.0 - mid[ep - 1], 100, 1000 * ep - 500);
      r.eval(ep, 10.0 * ep - 0.5, 1.0 - end[ep - 1], 100, 1000 * ep);
      r.epoch(ep, 10.0 * ep, 10.0);
    }
    r.end("ok", 41.0);
    wb::EarlyStoppingConfig rule;
    rule.patience = 1;
    const auto stop = wb::report::replayEarlyStopping(r.record(), rule);
    QVERIFY(stop.stops);
    QCOMPARE(stop.epoch, 3);
    QCOMPARE(stop.samples, 3000.0);
    QVERIFY(!stop.reason.empty());
    rule.patience = 3;  // two epochs without improvement after the best: never stops
    const auto none = wb::report::replayEarlyStopping(r.record(), rule);
    QVERIFY(!none.stops);
    QCOMPARE(none.epoch, 4);
  }

  void aRunThatStoppedEarlyKnowsOnlyItsEpochs() {
    FakeRun fake = curveRun({0.5, 0.4, 0.45, 0.46});
    fake.set("train.epochs", 10);
    fake.events.pop_back();  // end
    fake.earlyStop(2).end("early-stopped", 41);
    const auto w = wb::report::earlyStoppingWhatIf(fake.record());
    QVERIFY(w.truncated);
    const auto& longer = rowOf(w, 5, 0.0);
    QVERIFY(!longer.stops);
    QVERIFY(!longer.wall_saved_s.has_value());  // what it would have done later is unknown
    const auto table = wb::report::whatIfTable(w);
    bool said = false;
    for (const auto& row : table.rows) said = said || row[2].text == "not within the 4 recorded";
    QVERIFY(said);
    QVERIFY(rowOf(w, 1, 0.0).stops);
    QCOMPARE(rowOf(w, 1, 0.0).stop_epoch, 3);
  }

  void fewerThanTwoEvaluationsSaysSo() {
    const auto w = wb::report::earlyStoppingWhatIf(curveRun({0.5}).record());
    QVERIFY(w.rows.empty());
    QVERIFY2(QString::fromStdString(w.problem).contains(QStringLiteral("has 1 evaluation: an early-stopping what-if needs at least 2")),
             w.problem.c_str());
    QVERIFY(wb::report::whatIfJson(w)["problem"].is_string());
  }

  // The comparison report carries the what-if, and every export writes it.
  void theComparisonReportAndItsExportsCarryIt() {
    const auto base = curveRun({0.5, 0.4, 0.45, 0.46}).record("base");
    const auto one = curveRun({0.5}).record("one-epoch");
    const auto rep = wb::report::buildComparisonReport(base, {one}, std::nullopt);
    const wb::render::Table* table = nullptr;
    for (const auto& t : rep.tables)
      if (t.title.rfind("Early-stopping what-if", 0) == 0) table = &t;
    QVERIFY(table);
    QCOMPARE(int(table->rows.size()), 5);  // base: patience 1..5 at min_delta 0; one-epoch: none
    QCOMPARE(QString::fromStdString(table->rows[0][3].text), QStringLiteral("3"));  // patience 1 stops after epoch 3
    bool noted = false;
    for (const auto& n : table->notes) noted = noted || n.find("one-epoch has 1 evaluation") != std::string::npos;
    QVERIFY(noted);
    for (auto f : {wb::report::Format::Markdown, wb::report::Format::Html, wb::report::Format::Json, wb::report::Format::Latex})
      QVERIFY(QString::fromStdString(wb::report::render(rep, f)).contains(QStringLiteral("Early-stopping what-if")));
    // CSV holds one table: the what-if's own export (workbench-cli whatif --output x.csv).
    wb::report::Report own;
    own.tables.push_back(wb::report::whatIfTable(wb::report::earlyStoppingWhatIf(base)));
    const QString csv = QString::fromStdString(wb::report::render(own, wb::report::Format::Csv));
    QVERIFY(csv.startsWith(QStringLiteral("Patience,Min Δ,Stops after epoch")));
    QCOMPARE(csv.count(QStringLiteral("\r\n")), 1 + 16);
  }
};

QTEST_APPLESS_MAIN(TestWhatIf)
#include "test_whatif.moc"
