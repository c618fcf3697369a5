// A comparison hands each run the advice of the probe stored for its own experiment on its own
// machine (storedWorkersAdvice): the baseline's (lenet) is found on disk, the mlp run has none and
// gets the rule of thumb, and a report given no advice uses the rule of thumb for every run.
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include "report_fixture.h"
#include "wb/probe/record.h"
#include "wb/report/report.h"

#include "../../support/probe_rows.h"

using fixture::FakeRun;
using namespace wb::records;
using namespace wb::advice;
using namespace wb::report;

namespace {
// The loader takes 6.1 of each 10 ms step: data-bound, with 1 worker on 4 cores.
FakeRun dataBound() { return fixture::withSplit({6.1, 0, 1.5, 2.0, 0.4, 0}, 1, 4); }
}  // namespace

class TestStoredAdvice : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void reportsReadEachRunsStoredProbe() {
    FakeRun lenet = dataBound(), mlp = dataBound();
    mlp.set("model.name", "mlp");
    const RunRecord base = lenet.record("base"), other = mlp.record("mlp");
    // The fixture's machine: testhost, Test CPU, 4 cores; 2 workers clearly faster than 0 and 1.
    const auto config = wb::proto::configFromJson(base.config);
    QVERIFY(config.ok());
    wb::probe::ProbeResult p = wb::test::resultFor(
        config.value(), {"testhost", "Test CPU", 4},
        wb::test::roundsOf({{0, {500, 505, 495}}, {1, {800, 805, 795}}, {2, {1000, 1005, 995}}, {4, {1002, 1004, 998}}}));
    QCOMPARE(p.recommended, 2);
    p.loader_batches_per_s = 125;  // 8 ms a batch against a 10 ms step: the loader is the bottleneck
    p.step_alone_ms = 10;
    QTemporaryDir dir;
    QVERIFY(wb::probe::saveProbe(p, dir.path().toStdString()).ok());

    const WorkersAdviceFor stored = wb::probe::storedWorkersAdvice(dir.path().toStdString());
    QVERIFY(stored(base).measured && !stored(other).measured);
    QCOMPARE(stored(base).workers, 2);
    const Report rep = buildComparisonReport(base, {other}, std::nullopt, stored);
    QCOMPARE(rep.advice.size(), size_t{2});
    const Advice* b = fixture::findAdvice(rep.advice[0].verdicts, "data-bound");
    const Advice* o = fixture::findAdvice(rep.advice[1].verdicts, "data-bound");
    QVERIFY(b && o);
    QVERIFY2(b->text.find("the worker probe of 2026-12-01 08:40 UTC measured 2 workers") != std::string::npos, b->text.c_str());
    QVERIFY2(o->text.find("the rule of thumb min(cores, 4)") != std::string::npos, o->text.c_str());
    // Without the stored advice the baseline falls back to the rule of thumb too.
    const Advice* plain = fixture::findAdvice(buildComparisonReport(base, {other}, std::nullopt).advice[0].verdicts, "data-bound");
    QVERIFY(plain && plain->text.find("rule of thumb") != std::string::npos);
  }
};

QTEST_APPLESS_MAIN(TestStoredAdvice)
#include "test_stored_advice.moc"
