// workbench-cli's options (CLI11, app/cli/options.h) on the real executable: every command's
// --help exits 0 and lists its options; every bad input (unknown option, missing value, bad
// number, out of range, bad choice, extra argument, unknown command) exits 2 before anything
// runs, with one line on stderr that names the command, the option and what is allowed; both
// --key=value and --key value are read. Nothing here trains.
#include <QtTest/QtTest>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include "../support/proc.h"

namespace {

using CliResult = wb::test::ProcResult;

// Runs with the runs root and probes in a fresh folder, so a row that parsed by mistake and
// started work would leave a trace there (checked) instead of in the user's runs.
CliResult cli(const QStringList& args, const QString& root) {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert(QStringLiteral("WB_RUNS_ROOT"), root + QStringLiteral("/runs"));
  env.insert(QStringLiteral("WB_PROBES_DIR"), root + QStringLiteral("/probes"));
  return wb::test::runProcess(QStringLiteral(WB_CLI_PATH), args, 60000, env);
}

QStringList words(const char* text) { return QString::fromLatin1(text).split(QLatin1Char(' '), Qt::SkipEmptyParts); }

}  // namespace

class TestCliOptions : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void helpListsTheOptions_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QStringList>("lists");
    QTest::newRow("workbench-cli") << words("--help")
                                   << words("Commands: run worker ladder try compare export whatif dataset capabilities probe --version");
    QTest::newRow("help") << words("help") << words("Commands: run probe");
    QTest::newRow("run") << words("run --help")
                         << words("--config --set --runs-root --run-dir --overwrite --resume --from --events-stdout "
                                  "--print-config --collective-timeout 1..86400 Values model.name bf16-mixed Exit");
    QTest::newRow("worker") << words("worker -h") << words("--config --set --run-dir --resume --events-stdout --collective-timeout torchrun");
    QTest::newRow("ladder") << words("ladder --help")
                            << words("--out --runs-root --repeats 1..100 --max-pairs --budget-s --noise-band --rerun-contended --steps --isolated "
                                     "--lr-scaling none|linear|sqrt --target-acc --dry-run --events-stdout");
    QTest::newRow("try") << words("try --help") << words("--vary --variant-config --speedup --out --repeats --max-pairs --events-stdout --json");
    QTest::newRow("compare") << words("compare --help") << words("run-dir --baseline --target-acc --wide");
    QTest::newRow("export") << words("export --help") << words("run-dir --baseline --format --output --target-acc");
    QTest::newRow("whatif") << words("whatif --help") << words("early-stopping");
    QTest::newRow("whatif early-stopping") << words("whatif early-stopping --help")
                                           << words("run-dir --patience 0..1000 --min-delta --json --format --output");
    QTest::newRow("dataset") << words("dataset --help") << words("export inspect");
    QTest::newRow("dataset export") << words("dataset export --help") << words("--dataset --split --to --format --size 0..4096 --limit");
    QTest::newRow("dataset inspect") << words("dataset inspect --help") << words("spec --json");
    QTest::newRow("capabilities") << words("capabilities --help") << words("--json");
    QTest::newRow("probe") << words("probe --help") << words("workers");
    QTest::newRow("probe workers") << words("probe workers --help")
                                   << words("--config --set --candidates 0..256 --seconds 0.2..60 --json --no-store");
  }
  void helpListsTheOptions() {
    QFETCH(QStringList, args);
    QFETCH(QStringList, lists);
    QTemporaryDir root;
    const CliResult r = cli(args, root.path());
    QVERIFY2(r.rc == 0, r.err.constData());
    QVERIFY2(r.err.isEmpty(), r.err.constData());
    QVERIFY(r.out.contains("Usage: workbench-cli"));
    for (const QString& item : lists) QVERIFY2(r.out.contains(item.toUtf8()), qPrintable(item + QStringLiteral(" not in:\n") + QString::fromUtf8(r.out)));
  }

  void badInputExits2NamingTheOption_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("command");  // the message's prefix: "workbench-cli <command>: "
    QTest::addColumn<QStringList>("says");  // the option (or argument) and what is allowed
    QTest::newRow("unknown option") << words("run --bogus") << "run" << words("--bogus --collective-timeout");
    QTest::newRow("unknown option=value") << words("run --bogus=1") << "run" << words("--bogus --print-config");
    QTest::newRow("timeout not a number") << words("run --collective-timeout abc") << "run" << words("--collective-timeout 'abc' 1..86400");
    QTest::newRow("timeout zero") << words("run --collective-timeout 0") << "run" << words("--collective-timeout 1..86400");
    QTest::newRow("timeout past int64") << words("run --collective-timeout=99999999999999999999") << "run"
                                        << words("--collective-timeout 1..86400");
    QTest::newRow("timeout with junk") << words("worker --collective-timeout 30s") << "worker" << words("--collective-timeout 1..86400");
    QTest::newRow("missing value") << words("run --config") << "run" << words("--config");
    QTest::newRow("missing list") << words("ladder --steps") << "ladder" << words("--steps");
    QTest::newRow("extra positional") << words("run extra") << "run" << words("'extra'");
    QTest::newRow("extra after probe") << words("probe workers extra") << "probe workers" << words("'extra'");
    QTest::newRow("bad candidate") << words("probe workers --candidates 0,x") << "probe workers" << words("--candidates 'x' 0..256");
    QTest::newRow("negative seconds") << words("probe workers --seconds -1") << "probe workers" << words("--seconds 0.2..60");
    QTest::newRow("nan seconds") << words("probe workers --seconds=nan") << "probe workers" << words("--seconds 0.2..60");
    QTest::newRow("lr-scaling cubic") << words("ladder --lr-scaling cubic") << "ladder" << words("--lr-scaling 'cubic' none, linear, sqrt");
    QTest::newRow("repeats zero") << words("ladder --repeats 0") << "ladder" << words("--repeats 1..100");
    QTest::newRow("target-acc junk") << words("ladder --target-acc 90x") << "ladder" << words("--target-acc 85%");
    QTest::newRow("export format") << words("export /x --baseline /x --output o --format pdf") << "export" << words("--format md, csv");
    QTest::newRow("compare no baseline") << words("compare /x") << "compare" << words("--baseline required");
    QTest::newRow("patience") << words("whatif early-stopping /x --patience 1,a") << "whatif early-stopping" << words("--patience 0..1000");
    QTest::newRow("fractional patience") << words("whatif early-stopping /x --patience 1.5") << "whatif early-stopping"
                                         << words("--patience '1.5' whole");
    QTest::newRow("empty patience item") << words("whatif early-stopping /x --patience 1,,2") << "whatif early-stopping"
                                         << words("--patience ''");
    QTest::newRow("min-delta word") << words("whatif early-stopping /x --min-delta abc") << "whatif early-stopping"
                                    << words("--min-delta 'abc'");
    QTest::newRow("min-delta") << words("whatif early-stopping /x --min-delta -1") << "whatif early-stopping" << words("--min-delta >=");
    QTest::newRow("no run folder") << words("whatif early-stopping") << "whatif early-stopping" << words("run-dir required");
    QTest::newRow("unknown what-if") << words("whatif lr") << "whatif" << words("'lr' early-stopping");
    QTest::newRow("dataset --to") << words("dataset export --to x") << "dataset export" << words("--to folder:<dir>");
    QTest::newRow("dataset --split") << words("dataset export --to folder:/nonexistent --split val") << "dataset export"
                                     << words("--split train test both");
    QTest::newRow("unknown dataset command") << words("dataset bogus") << "dataset" << words("'bogus' export, inspect");
    QTest::newRow("unknown probe") << words("probe foo") << "probe" << words("'foo' workers");
    QTest::newRow("unknown command") << words("bogus") << "" << words("'bogus' run, worker");
    QTest::newRow("from first") << words("run --from first") << "run" << words("--from last best");
  }
  void badInputExits2NamingTheOption() {
    QFETCH(QStringList, args);
    QFETCH(QString, command);
    QFETCH(QStringList, says);
    QTemporaryDir root;
    const CliResult r = cli(args, root.path());
    const QString err = QString::fromUtf8(r.err);
    QVERIFY2(r.rc == 2, qPrintable(QStringLiteral("exit %1: %2").arg(r.rc).arg(err)));
    QVERIFY2(r.out.isEmpty(), r.out.constData());
    QVERIFY2(err.count(QLatin1Char('\n')) == 1 && err.endsWith(QLatin1Char('\n')), qPrintable(err));  // one line
    const QString prefix = QStringLiteral("workbench-cli") + (command.isEmpty() ? QString() : QLatin1Char(' ') + command);
    QVERIFY2(err.startsWith(prefix + QStringLiteral(": ")), qPrintable(err));
    QVERIFY2(err.contains(QStringLiteral("(see ") + prefix + QStringLiteral(" --help)")), qPrintable(err));
    for (const QString& s : says) QVERIFY2(err.contains(s), qPrintable(s + QStringLiteral(" not in: ") + err));
    QVERIFY2(QDir(root.path()).isEmpty(), "a refused command wrote into the runs root");  // nothing started
  }

  // --key=value and --key value, repeated --set, and `workbench-cli --set ...` meaning `run`.
  void keyValueForms_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("epochs");
    QTest::addColumn<double>("lr");
    QTest::newRow("--set=") << words("run --print-config --set=train.epochs=2") << 2 << 0.0;
    QTest::newRow("--set value") << words("run --print-config --set train.epochs=3 --set optim.lr=0.25") << 3 << 0.25;
    QTest::newRow("mixed, options first") << words("--set=train.epochs=4 --print-config --collective-timeout=60 --set optim.lr=0.5")
                                          << 4 << 0.5;
  }
  void keyValueForms() {
    QFETCH(QStringList, args);
    QFETCH(int, epochs);
    QFETCH(double, lr);
    QTemporaryDir root;
    const CliResult r = cli(args, root.path());
    QVERIFY2(r.rc == 0, r.err.constData());
    const QJsonObject config = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(config.value(QStringLiteral("train")).toObject().value(QStringLiteral("epochs")).toInt(), epochs);
    if (lr > 0) QCOMPARE(config.value(QStringLiteral("optim")).toObject().value(QStringLiteral("lr")).toDouble(), lr);
  }

  void ladderDryRunReadsItsOptions() {
    QTemporaryDir root;
    const CliResult r = cli(words("ladder --dry-run --repeats=3 --lr-scaling sqrt --steps=workers --target-acc 85%"), root.path());
    QVERIFY2(r.rc == 0, r.err.constData());
    QVERIFY2(r.out.contains("workers") && r.out.contains("left out (--steps)"), r.out.constData());
  }
};

QTEST_APPLESS_MAIN(TestCliOptions)
#include "test_cli_options.moc"
