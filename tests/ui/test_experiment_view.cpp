// The Experiments tab: an open ladder leads with the speedup at equal accuracy (a step that
// never reached the target says so with the accuracy it reached, in the chart and in the ladder
// table), a step measured by parts shows its split, its export writes the ladder, and it asks
// the Compare tab's question (its target and threshold) while the Compare tab's chart stays on
// the ticked runs.
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QCheckBox>
#include <QtTest/QtTest>

#include "compare/compare_view.h"
#include "compare/experiment_view.h"
#include "compare/speedup_chart.h"
#include "runs/run.h"
#include "runs/runs_model.h"
#include "ui_test_util.h"
#include "wb/proto/rundir.h"

using namespace wb::ui;
namespace t = wb::ui::test;

namespace {

// A ladder whose workers step ran 15× faster on wall time but fell from 68.5 % to 62.8 %.
wb::ladder::Ladder fieldLadder() {
  wb::ladder::Ladder l;
  l.target_acc = 0.685;
  wb::ladder::LadderRow base, workers;
  base.step.key = "baseline", base.step.added = "all speedups off";
  base.repeats = base.reached = 1;
  base.wall_s = 151, base.target_s = 150, base.val_acc = 0.685, base.cumulative = 1, base.cumulative_target = 1;
  workers.step.key = "workers", workers.step.added = "loader workers 0 → 2";
  workers.repeats = 1;
  workers.wall_s = 10, workers.val_acc = 0.628, workers.cumulative = 15.1, workers.marginal = 15.1;
  l.rows = {base, workers};
  return l;
}

QString writeFieldLadder(const QTemporaryDir& root) {
  const QString file = root.filePath(QStringLiteral("ladder.json"));
  return wb::proto::writeJsonAtomic(file.toStdString(), wb::ladder::ladderJson(fieldLadder())).ok() ? file : QString();
}

}  // namespace

class TestExperimentView : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { t::setUpEnvironment(); }

  void ladderLeadsWithSpeedupAtEqualAccuracy() {
    auto root = t::scratchRoot();
    QVERIFY(!writeFieldLadder(root).isEmpty());
    RunsModel model;
    ExperimentView view(&model);
    QVERIFY(!view.canExport());
    QString error;
    QVERIFY2(view.openLadder(root.path(), &error), qPrintable(error));
    QVERIFY(view.canExport());
    const auto& spec = view.chart()->bars();
    QVERIFY(QString::fromStdString(spec.title).contains(QStringLiteral("speedup to 68.50 % val acc")));
    QCOMPARE(int(spec.bars.size()), 2);
    QVERIFY(spec.bars[1].skipped);
    QCOMPARE(QString::fromStdString(spec.bars[1].annotation), QStringLiteral("not reached"));
    QCOMPARE(QString::fromStdString(spec.bars[1].detail), QStringLiteral("acc 62.8 %"));
    const auto* ladder = view.findChild<QTableWidget*>(QStringLiteral("ladderTable"));
    // By default the decisions, as the terminal prints them; every figure one tick away.
    QVERIFY2(t::columnOf(ladder, QStringLiteral("Decision")) >= 0 && t::columnOf(ladder, QStringLiteral("Note")) < 0,
             "the open ladder's table is not the decisions' table");
    QCOMPARE(ladder->item(0, t::columnOf(ladder, QStringLiteral("Decision")))->text(), QStringLiteral("not reached"));
    view.findChild<QCheckBox*>(QStringLiteral("ladderDetails"))->setChecked(true);
    QCOMPARE(ladder->item(1, t::columnOf(ladder, QStringLiteral("× to target")))->text(), QStringLiteral("not reached · 62.8 %"));
    QCOMPARE(ladder->item(1, t::columnOf(ladder, QStringLiteral("× wall")))->text(), QStringLiteral("15.1× (no interval)"));  // an older ladder.json
    t::grabIfAsked(view, QStringLiteral("ladder"));
  }

  // A greedy step measured by parts (its try.json) reads as such: its pairs cell says so, its
  // headline is the composed speedup with its interval, its note the split.
  void aLadderStepByPartsShowsItsSplit() {
    auto root = t::scratchRoot();
    wb::ladder::LadderStepRuns base, precision;
    base.step.key = "baseline", base.step.added = "all speedups off";
    precision.step.key = "precision", precision.step.added = "precision 32-true → bf16-mixed";
    precision.decision = "kept: 1.31× faster to target: 1.45× throughput, 0.90× samples to target (more samples needed)";
    precision.by_parts = {{"method", "composed"}, {"reached", true},
                          {"words", "1.31× faster to target: 1.45× throughput, 0.90× samples to target (more samples needed)"},
                          {"variant_runs", {"a", "b", "c", "d", "e"}},
                          {"medians", {{"time_to_target_s", {{"baseline", 13.1}, {"variant", 10.0}}},
                                       {"train_samples_per_s", {{"baseline", 10000}, {"variant", 14500}}}}},
                          {"estimate", {{"to_target", {{"point", 1.31}, {"lo", 1.2}, {"hi", 1.43}, {"verdict", "faster"}, {"pairs", 0}}},
                                        {"throughput", {{"point", 1.45}, {"lo", 1.4}, {"hi", 1.5}, {"verdict", "faster"}, {"pairs", 6}}}}}};
    const auto l = wb::ladder::summarizeLadder({base, precision}, 0.7, {}, {"ok", "", true});
    QVERIFY(wb::proto::writeJsonAtomic(root.filePath(QStringLiteral("ladder.json")).toStdString(), wb::ladder::ladderJson(l)).ok());
    RunsModel model;
    ExperimentView view(&model);
    QString error;
    QVERIFY2(view.openLadder(root.path(), &error), qPrintable(error));
    view.findChild<QCheckBox*>(QStringLiteral("ladderDetails"))->setChecked(true);
    const auto* ladder = view.findChild<QTableWidget*>(QStringLiteral("ladderTable"));
    QVERIFY2(ladder->item(1, t::columnOf(ladder, QStringLiteral("× to target")))->text().startsWith(QStringLiteral("1.31× [1.20, 1.43]")),
             qPrintable(ladder->item(1, t::columnOf(ladder, QStringLiteral("× to target")))->text()));
    QVERIFY(ladder->item(1, t::columnOf(ladder, QStringLiteral("Pairs")))->text().contains(QStringLiteral("by parts")));
    QVERIFY(ladder->item(1, t::columnOf(ladder, QStringLiteral("Note")))->text().contains(QStringLiteral("1.45× throughput")));
    t::grabIfAsked(view, QStringLiteral("ladder-by-parts"));
    if (qEnvironmentVariableIsSet("WB_GRAB_LADDER")) {  // a real ladder's folder, to look at
      ExperimentView real(&model);
      real.resize(1280, 800);
      real.show();
      QVERIFY(QTest::qWaitForWindowExposed(&real));
      QVERIFY2(real.openLadder(qEnvironmentVariable("WB_GRAB_LADDER"), &error), qPrintable(error));
      QTest::qWait(300);
      QVERIFY(!real.chart()->bars().bars.empty());
      t::grabIfAsked(real, QStringLiteral("ladder-real"));
    }
  }

  // An open ladder leads with its record's answer, large and first (its ladder.json's "answer";
  // an older one without it keeps today's line); a greedy ladder that kept a step offers to use
  // it, which hands the kept configuration to the set-up; Back returns to the list.
  void anOpenLadderLeadsWithItsAnswerAndOffersTheKeptSetting() {
    auto root = t::scratchRoot();
    wb::ladder::Ladder l = fieldLadder();
    l.greedy = true;
    wb::ladder::LadderRow kept = l.rows[1];
    kept.step.key = wb::ladder::kKeptStep;
    kept.step.config.speedups.workers = 2;
    l.rows.push_back(kept);
    nlohmann::json doc = wb::ladder::ladderJson(l);
    doc["answer"] = "Turn on loader workers: 1.52\u00D7 faster to 68.5 % val acc (95 %: 1.40-1.66\u00D7).";
    const QString dir = root.filePath(QStringLiteral("20261207-100000-ladder"));
    QVERIFY(QDir().mkpath(dir));
    QVERIFY(wb::proto::writeJsonAtomic((dir + QStringLiteral("/ladder.json")).toStdString(), doc).ok());
    RunsModel model;
    ExperimentView view(&model);
    view.setRunsRoot(root.path());
    const auto* answer = view.findChild<QLabel*>(QStringLiteral("experimentAnswer"));
    QVERIFY(answer && answer->font().bold());
    QVERIFY2(answer->text().startsWith(QStringLiteral("Which speedups pay here?")), qPrintable(answer->text()));
    QString error;
    QVERIFY2(view.openLadder(dir, &error), qPrintable(error));
    QCOMPARE(answer->text(), QString::fromStdString(doc["answer"].get<std::string>()));
    auto* use = view.findChild<QPushButton*>(QStringLiteral("experimentUse"));
    QVERIFY(use && !use->isHidden());
    QSignalSpy used(&view, &ExperimentView::useConfig);
    use->click();
    QCOMPARE(used.count(), 1);
    const auto loaded = wb::proto::readJsonFile(used.first().at(0).toString().toStdString());
    QVERIFY(loaded.ok());
    QCOMPARE((*loaded)["speedups"]["workers"].get<int>(), 2);
    // Without an answer in its record: today's line, and nothing kept means nothing to use.
    QVERIFY(wb::proto::writeJsonAtomic((dir + QStringLiteral("/ladder.json")).toStdString(), wb::ladder::ladderJson(fieldLadder())).ok());
    QVERIFY(view.openLadder(dir, &error));
    QVERIFY2(answer->text().startsWith(QStringLiteral("Ladder in")), qPrintable(answer->text()));
    QVERIFY(use->isHidden());
    auto* back = view.findChild<QPushButton*>(QStringLiteral("experimentBack"));
    back->click();
    QVERIFY(!view.canExport());
    const auto* list = view.findChild<QTableWidget*>(QStringLiteral("ladderTable"));
    QCOMPARE(list->item(0, 0)->data(Qt::UserRole).toString(), dir);
  }

  // Export writes the open ladder where it lives; nothing is offered before one is open.
  void exportWritesTheOpenLadder() {
    auto root = t::scratchRoot();
    QVERIFY(!writeFieldLadder(root).isEmpty());
    RunsModel model;
    ExperimentView view(&model);
    view.setRunsRoot(root.path());
    QString error;
    QVERIFY(!view.exportTo(root.filePath(QStringLiteral("none.md")), &error));
    QVERIFY2(error.contains(QStringLiteral("run or open a ladder")), qPrintable(error));
    QVERIFY2(view.openLadder(root.path(), &error), qPrintable(error));
    QCOMPARE(view.exportStartPath(), QDir(root.path()).filePath(QStringLiteral("ladder.html")));
    const QString md = root.filePath(QStringLiteral("out.md"));
    QVERIFY2(view.exportTo(md, &error), qPrintable(error));
    QFile f(md);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(f.readAll());
    QVERIFY2(text.contains(QStringLiteral("loader workers 0 → 2")), qPrintable(text.left(400)));
    // The chart by its extension; an unknown one is named with the ones it takes.
    const QString svg = root.filePath(QStringLiteral("ladder.svg"));
    QVERIFY2(view.exportTo(svg, &error), qPrintable(error));
    QVERIFY(QFileInfo(svg).size() > 0);
    QVERIFY(!view.exportTo(root.filePath(QStringLiteral("ladder.docx")), &error));
    QVERIFY2(error.contains(QStringLiteral("\"docx\"")) && error.contains(QStringLiteral(".html")), qPrintable(error));
  }

  // Each tab answers its own question: the open ladder stays on the Experiments tab's chart
  // while the Compare tab's chart and table hold the ticked runs; the ladder measures to the
  // Compare tab's target and threshold, and says so.
  void eachTabAnswersItsOwnQuestion() {
    auto root = t::scratchRoot();
    QVERIFY(!writeFieldLadder(root).isEmpty());
    RunsModel model;
    Run* base = Run::fromDirectory(t::writeRunDir(root.path(), QStringLiteral("base"), QStringLiteral("base"),
                                                  t::eventsReaching(0.8), QStringLiteral("ok")));
    Run* other = Run::fromDirectory(t::writeRunDir(root.path(), QStringLiteral("other"), QStringLiteral("other"),
                                                   t::eventsReaching(0.9), QStringLiteral("ok")));
    model.addRun(base), model.addRun(other);
    CompareView compare(&model);
    ExperimentView view(&model);
    view.setTargetSource([] { return QStringList{QStringLiteral("--target-acc"), QStringLiteral("0.84")}; });
    view.setMinEffectSource([] { return 0.05; });
    compare.setRunsRoot(root.path());
    QString error;
    QVERIFY2(view.openLadder(root.path(), &error), qPrintable(error));
    model.setBaseline(base);
    model.setShown(other, true);
    compare.refreshNow();
    QVERIFY(QString::fromStdString(view.chart()->bars().title).contains(QStringLiteral("68.50 %")));
    const QString title = QString::fromStdString(compare.chart()->bars().title);
    QVERIFY2(!title.contains(QStringLiteral("68.50 %")), qPrintable(title));
    QCOMPARE(int(compare.chart()->bars().bars.size()), compare.table()->rowCount());  // the table's runs
    QCOMPARE(compare.exportStartPath(), QDir(root.path()).filePath(QStringLiteral("comparison.html")));  // the runs folder
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    const auto* question = view.findChild<QLabel*>(QStringLiteral("experimentQuestion"));
    QVERIFY(question);
    QVERIFY2(question->text().contains(QStringLiteral("84.00 %")) && question->text().contains(QStringLiteral("5 %")),
             qPrintable(question->text()));
  }
};

QTEST_MAIN(TestExperimentView)
#include "test_experiment_view.moc"
