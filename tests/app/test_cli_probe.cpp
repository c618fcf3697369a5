// End to end: `workbench-cli probe workers` on a tiny real experiment (Fashion-MNIST, real loader
// threads, real lenet steps, short --seconds): its rows are consistent with its recommendation,
// the result is stored under its key beside the plot, another experiment gets its own file, and
// `ladder --dry-run` then takes its workers count from the stored result.
#include <QtTest/QtTest>
#include <QProcess>
#include <QTemporaryDir>

#include <filesystem>

#include "wb/proto/rundir.h"
#include "wb/report/probe.h"

using nlohmann::json;

#include "../support/proc.h"
#include "../support/datasets.h"

namespace {

using CliResult = wb::test::ProcResult;

CliResult runCli(const QStringList& args, const QString& probesDir) {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert(QStringLiteral("WB_PROBES_DIR"), probesDir);
  return wb::test::runProcess(QStringLiteral(WB_CLI_PATH), args, 300000, env);
}

using wb::test::haveFashionMnist;

// The tiny experiment's overrides, and the same as a Config (for its key).
const QStringList kTiny = {QStringLiteral("--set"), QStringLiteral("data.limit_train=256"), QStringLiteral("--set"),
                           QStringLiteral("train.batch_size=32")};
wb::Config tinyConfig() {
  wb::Config c;
  c.data.limit_train = 256;
  c.train.batch_size = 32;
  return c;
}

QStringList probeArgs(const QStringList& extra) {
  return QStringList{QStringLiteral("probe"), QStringLiteral("workers"), QStringLiteral("--candidates"),
                     QStringLiteral("0,1,2"), QStringLiteral("--seconds"), QStringLiteral("0.3"), QStringLiteral("--json")} +
         kTiny + extra;
}

}  // namespace

class TestCliProbe : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void probesStoresAndFeedsTheLadder() {
    if (!haveFashionMnist()) QSKIP("Fashion-MNIST is not installed (packaging/setup.sh installs dataset-fashion-mnist)");
    QTemporaryDir probes;
    auto r = runCli(probeArgs({}), probes.path());
    QVERIFY2(r.rc == 0, r.err.constData());
    const json doc = json::parse(r.out.toStdString(), nullptr, false);
    QVERIFY2(doc.is_object(), r.out.constData());
    auto parsed = wb::report::probeFromJson(doc);
    QVERIFY(parsed.ok());
    const wb::report::ProbeResult& p = *parsed;

    // (a) and (b) measured, (c) one row per candidate in the order asked, each really timed.
    QVERIFY(p.loader_batches_per_s > 0 && p.loader_samples_per_s > 0);
    QVERIFY(std::abs(p.loader_samples_per_s / p.loader_batches_per_s - 32.0) < 1e-6);  // full batches of 32
    QVERIFY(p.step_alone_ms > 0 && p.step_samples_per_s > 0);
    QCOMPARE(p.rows.size(), size_t{3});
    for (int i = 0; i < 3; ++i) {
      const auto& row = p.rows[size_t(i)];
      QCOMPARE(row.workers, i);
      QVERIFY(row.steps >= 1 && row.seconds >= 0.3);
      QVERIFY(row.data_ms >= 0 && row.step_ms > 0);
      // samples/s is what the row's own clocks say: steps of 32 samples in its seconds.
      QVERIFY(std::abs(row.samples_per_s - row.steps * 32 / row.seconds) <= 1e-6 * row.samples_per_s);
      QVERIFY(std::abs((row.data_ms + row.step_ms) * row.steps - row.seconds * 1000) <= 1e-6 * row.seconds * 1000);
    }
    QCOMPARE(p.recommended, wb::report::recommendWorkers(p.rows));
    QCOMPARE(doc["verdict"].get<std::string>(), p.verdict());

    // Stored under this machine's and this experiment's key, with the plot beside it.
    const std::string key = wb::report::probeKey(tinyConfig(), wb::report::thisMachine());
    QCOMPARE(p.key, key);
    const std::filesystem::path dir = probes.path().toStdString();
    QVERIFY(std::filesystem::exists(dir / (key + ".json")));
    QVERIFY(std::filesystem::file_size(dir / (key + ".svg")) > 0);
    QCOMPARE(QString::fromStdString(doc["files"]["json"].get<std::string>()), QString::fromStdString((dir / (key + ".json")).string()));
    auto stored = wb::report::loadProbe(tinyConfig(), wb::report::thisMachine(), dir);
    QVERIFY(stored);
    QCOMPARE(stored->recommended, p.recommended);

    // Another experiment (mlp) gets its own file; lenet's stays.
    auto other = runCli(probeArgs({QStringLiteral("--set"), QStringLiteral("model.name=mlp"), QStringLiteral("--candidates"),
                                   QStringLiteral("0,1")}),
                        probes.path());
    QVERIFY2(other.rc == 0, other.err.constData());
    wb::Config mlp = tinyConfig();
    mlp.model.name = "mlp";
    auto mlpStored = wb::report::loadProbe(mlp, wb::report::thisMachine(), dir);
    QVERIFY(mlpStored && mlpStored->key != key);
    QCOMPARE(mlpStored->rows.size(), size_t{2});
    QCOMPARE(wb::report::loadProbe(tinyConfig(), wb::report::thisMachine(), dir)->rows.size(), size_t{3});

    // The ladder's workers step reads the stored result for this experiment.
    auto plan = runCli(QStringList{QStringLiteral("ladder"), QStringLiteral("--dry-run")} + kTiny, probes.path());
    QVERIFY2(plan.rc == 0, plan.err.constData());
    const QString text = QString::fromUtf8(plan.out);
    QVERIFY2(text.contains(QStringLiteral("probe of ")), qPrintable(text));
    if (p.recommended > 0)
      QVERIFY2(text.contains(QStringLiteral("loader workers 0 → %1").arg(p.recommended)), qPrintable(text));
    else
      QVERIFY2(text.contains(QStringLiteral("recommends 0 workers")), qPrintable(text));
  }

  void tableByDefault() {
    if (!haveFashionMnist()) QSKIP("Fashion-MNIST is not installed (packaging/setup.sh installs dataset-fashion-mnist)");
    QTemporaryDir probes;
    auto r = runCli(QStringList{QStringLiteral("probe"), QStringLiteral("workers"), QStringLiteral("--candidates"),
                                QStringLiteral("0,1"), QStringLiteral("--seconds"), QStringLiteral("0.2"),
                                QStringLiteral("--no-store")} +
                        kTiny,
                    probes.path());
    QVERIFY2(r.rc == 0, r.err.constData());
    const QString text = QString::fromUtf8(r.out);
    for (const char* heading : {"Workers", "Samples/s", "× vs 0 workers", "Data ms/step", "Step ms", "← recommended",
                                "Loader alone", "Training step alone"})
      QVERIFY2(text.contains(QString::fromUtf8(heading)), qPrintable(text));
    QVERIFY(QDir(probes.path()).isEmpty());  // --no-store wrote nothing
  }

  void refusesBadOptions_data() {
    QTest::addColumn<QStringList>("args");
    QTest::newRow("bad candidate") << QStringList{QStringLiteral("--candidates"), QStringLiteral("0,x")};
    QTest::newRow("negative candidate") << QStringList{QStringLiteral("--candidates"), QStringLiteral("-1")};
    QTest::newRow("seconds out of range") << QStringList{QStringLiteral("--seconds"), QStringLiteral("0")};
    QTest::newRow("bad config field") << QStringList{QStringLiteral("--set"), QStringLiteral("train.batch_size=0")};
  }
  void refusesBadOptions() {
    QFETCH(QStringList, args);
    QTemporaryDir probes;
    auto r = runCli(QStringList{QStringLiteral("probe"), QStringLiteral("workers")} + args, probes.path());
    QCOMPARE(r.rc, 2);
    QVERIFY(!r.err.isEmpty());
  }
};

QTEST_APPLESS_MAIN(TestCliProbe)
#include "test_cli_probe.moc"
