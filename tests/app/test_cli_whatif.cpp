// `workbench-cli whatif early-stopping` on real runs: a 6-epoch run trained to the end predicts
// where early stopping would stop; a second real run with that patience and min_delta stops
// there, keeps the predicted best epoch, and ends with that epoch's weights restored. A run of
// one evaluation says it cannot be replayed. Real Fashion-MNIST, real processes, real files.
#include <QtTest/QtTest>
#include <QProcess>
#include <QTemporaryDir>

#include <fstream>

#include "wb/proto/events.h"
#include "wb/proto/rundir.h"

using nlohmann::json;

#include "../support/proc.h"
#include "../support/machine.h"

namespace {

using wb::test::haveFashionMnist;

using CliResult = wb::test::ProcResult;

CliResult cli(const QStringList& args) { return wb::test::runProcess(QStringLiteral(WB_CLI_PATH), args, 600000); }

// One thread and no loader workers: the same seed gives the same validation curve twice.
QStringList experiment(int epochs) {
  QStringList out;
  for (const char* s : {"data.limit_train=1000", "data.limit_val=500", "optim.lr=0.05", "optim.momentum=0.9",
                        "train.threads=1", "train.log_every=100"})
    out << QStringLiteral("--set") << QString::fromLatin1(s);
  out << QStringLiteral("--set") << QStringLiteral("train.epochs=%1").arg(epochs);
  return out;
}

std::vector<json> events(const QString& runDir) {
  std::vector<json> out;
  std::ifstream in(wb::proto::RunDir{runDir.toStdString()}.events());
  for (std::string line; std::getline(in, line);)
    if (auto ev = wb::proto::decodeEvent(line); ev && ev->value("rank", 0) == 0) out.push_back(*ev);
  return out;
}

}  // namespace

class TestCliWhatIf : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void predictsTheStopOfARealRunWithThatPatience() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir root;
    const QString full = root.filePath(QStringLiteral("full"));
    auto r = cli(QStringList{QStringLiteral("run"), QStringLiteral("--run-dir"), full} + experiment(6));
    QVERIFY2(r.rc == 0, r.err.constData());

    // The what-if of the finished run, as JSON; the printed table too.
    auto w = cli({QStringLiteral("whatif"), QStringLiteral("early-stopping"), full, QStringLiteral("--patience"),
                  QStringLiteral("0,1,2,3"), QStringLiteral("--min-delta"), QStringLiteral("0,0.01,0.05"), QStringLiteral("--json")});
    QVERIFY2(w.rc == 0, w.err.constData());
    const json doc = json::parse(w.out.toStdString());
    QCOMPARE(doc["evaluations"].get<int>(), 6);
    QCOMPARE(doc["monitor"].get<std::string>(), std::string("val_loss"));
    QCOMPARE(int(doc["rows"].size()), 1 + 3 * 3);  // off: one row
    // The first setting that stops before the last epoch (the smallest patience and min_delta).
    json chosen;
    for (const auto& row : doc["rows"])
      if (chosen.is_null() && row["stops"].get<bool>() && row["stop_epoch"].get<int>() < 6) chosen = row;
    QVERIFY2(!chosen.is_null(), w.out.constData());
    QVERIFY(chosen["wall_saved_s"].get<double>() > 0);
    QVERIFY(chosen["saved_fraction"].get<double>() > 0 && chosen["saved_fraction"].get<double>() < 1);
    for (const auto& row : doc["rows"])
      if (row["patience"].get<int>() == 0) {
        QVERIFY(!row["stops"].get<bool>());
        QCOMPARE(row["wall_saved_s"].get<double>(), 0.0);
      }
    auto table = cli({QStringLiteral("whatif"), QStringLiteral("early-stopping"), full});
    QVERIFY2(table.rc == 0, table.err.constData());
    QVERIFY(table.out.contains("Stops after epoch"));
    QVERIFY(table.out.contains("Wall saved"));

    // The same experiment with that setting, for real: it stops where the what-if said.
    const int patience = chosen["patience"].get<int>();
    const double minDelta = chosen["min_delta"].get<double>();
    const QString stopped = root.filePath(QStringLiteral("stopped"));
    r = cli(QStringList{QStringLiteral("run"), QStringLiteral("--run-dir"), stopped} + experiment(6) +
            QStringList{QStringLiteral("--set"), QStringLiteral("speedups.early_stopping.patience=%1").arg(patience),
                        QStringLiteral("--set"), QStringLiteral("speedups.early_stopping.min_delta=%1").arg(minDelta)});
    QVERIFY2(r.rc == 0, r.err.constData());
    int lastEval = 0, bestEpoch = -1;
    for (const auto& e : events(stopped)) {
      if (e["type"] == "eval") lastEval = e["epoch"].get<int>();
      if (e["type"] == "early_stop") bestEpoch = e["best_epoch"].get<int>();
    }
    const QString why = QStringLiteral("patience %1, min_delta %2: %3").arg(patience).arg(minDelta).arg(QString::fromUtf8(w.out));
    QVERIFY2(bestEpoch > 0, qPrintable(why));  // it early-stopped
    QVERIFY2(lastEval == chosen["stop_epoch"].get<int>(), qPrintable(why));
    QVERIFY2(bestEpoch == chosen["best_epoch"].get<int>(), qPrintable(why));
    QCOMPARE(chosen["final_weights_epoch"].get<int>(), bestEpoch);  // early stopping restores best.pt

    // Its own what-if, at its own setting: marked as the run's, the same stop, later epochs unknown.
    w = cli({QStringLiteral("whatif"), QStringLiteral("early-stopping"), stopped, QStringLiteral("--patience"),
             QString::number(patience), QStringLiteral("--min-delta"), QString::number(minDelta), QStringLiteral("--json")});
    QVERIFY2(w.rc == 0, w.err.constData());
    const json own = json::parse(w.out.toStdString());
    QVERIFY(own["truncated"].get<bool>());
    QCOMPARE(int(own["rows"].size()), 1);
    QVERIFY(own["rows"][0]["as_run"].get<bool>());
    QCOMPARE(own["rows"][0]["stop_epoch"].get<int>(), lastEval);

    // Written as CSV through the exporters.
    const QString csv = root.filePath(QStringLiteral("whatif.csv"));
    auto out = cli({QStringLiteral("whatif"), QStringLiteral("early-stopping"), full, QStringLiteral("--output"), csv});
    QVERIFY2(out.rc == 0, out.err.constData());
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY(f.readAll().startsWith("Patience,Min"));
  }

  void oneEvaluationSaysSo() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir root;
    const QString dir = root.filePath(QStringLiteral("one"));
    auto r = cli(QStringList{QStringLiteral("run"), QStringLiteral("--run-dir"), dir} + experiment(1));
    QVERIFY2(r.rc == 0, r.err.constData());
    auto w = cli({QStringLiteral("whatif"), QStringLiteral("early-stopping"), dir});
    QCOMPARE(w.rc, 1);
    QVERIFY2(w.err.contains("has 1 evaluation: an early-stopping what-if needs at least 2"), w.err.constData());
  }

  void usageErrors_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("says");
    QTest::newRow("no what-if") << QStringList{} << "name the what-if";
    QTest::newRow("unknown what-if") << QStringList{QStringLiteral("lr")} << "unknown what-if 'lr'";
    QTest::newRow("no run") << QStringList{QStringLiteral("early-stopping")} << "run-dir is required";
    QTest::newRow("bad patience") << QStringList{QStringLiteral("early-stopping"), QStringLiteral("/x"), QStringLiteral("--patience"), QStringLiteral("a")}
                                  << "--patience: 'a' is not a whole number";
  }
  void usageErrors() {
    QFETCH(QStringList, args);
    QFETCH(QString, says);
    auto r = cli(QStringList{QStringLiteral("whatif")} + args);
    QCOMPARE(r.rc, 2);
    QVERIFY2(QString::fromUtf8(r.err).contains(says), r.err.constData());
  }
};

QTEST_APPLESS_MAIN(TestCliWhatIf)
#include "test_cli_whatif.moc"
