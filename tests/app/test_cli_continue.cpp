// Continuing never overwrites: `workbench-cli try` cut by SIGTERM at each point of a pair (while
// its first run trains, as that run ends, while its second run trains) and run again on the same
// --out finishes the pair in new folders; every file a run wrote before the cut (summary.json,
// events, checkpoints) is still there, byte for byte; a finished pair whose folder was deleted runs
// again, saying why. The ladder runs on the same runner.
// Real processes on a tiny Fashion-MNIST budget.
#include <QCryptographicHash>
#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QMap>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <fstream>

#include <nlohmann/json.hpp>

#include "../support/machine.h"
#include "../support/event_stream.h"
#include "../support/proc.h"
#include "wb/proto/events.h"

using nlohmann::json;

namespace {

QStringList tryArgs(const QString& out) {
  QStringList args{QStringLiteral("try"), QStringLiteral("--events-stdout"), QStringLiteral("--out"), out,
                   QStringLiteral("--vary"), QStringLiteral("train.batch_size=32"), QStringLiteral("--repeats"), QStringLiteral("1")};
  for (const char* kv : {"model.name=mlp", "data.limit_train=4096", "data.limit_val=128", "train.epochs=1", "train.log_every=1",
                         "train.threads=1", "train.batch_size=16"})
    args << QStringLiteral("--set") << QString::fromLatin1(kv);
  return args;
}

// Every file under out/runs, with a hash of its bytes.
QMap<QString, QByteArray> filesUnder(const QString& runs) {
  QMap<QString, QByteArray> out;
  QDirIterator it(runs, QDir::Files, QDirIterator::Subdirectories);
  while (it.hasNext()) {
    const QString path = it.next();
    if (path.endsWith(QStringLiteral(".lock"))) continue;  // a lock is the running process's, not a record
    QFile f(path);
    if (f.open(QIODevice::ReadOnly)) out.insert(path, QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha1));
  }
  return out;
}

// Reads events until `until` holds, the last one into *last; false when the process ended or the
// time ran out.
bool readUntil(QProcess& p, const std::function<bool(const json&)>& until, json* last, int timeoutMs) {
  std::vector<json> events;
  if (!wb::test::readEvents(p, events, until, timeoutMs)) return false;
  *last = events.back();
  return true;
}

bool waitTraining(const QString& dir, QProcess& p) {
  QElapsedTimer waited;
  waited.start();
  while (!wb::test::trainingIn(dir) && waited.elapsed() < 60000 && p.state() == QProcess::Running) QTest::qWait(50);
  return wb::test::trainingIn(dir);
}

}  // namespace

class TestCliContinue : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void aCutPairRunsAgainInNewFolders_data() {
    QTest::addColumn<QString>("point");
    QTest::newRow("while the first run trains") << "first";
    QTest::newRow("as the first run ends") << "between";
    QTest::newRow("while the second run trains") << "second";
  }
  void aCutPairRunsAgainInNewFolders() {
    QFETCH(QString, point);
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir root;
    const QString out = root.filePath(QStringLiteral("try"));
    QProcess cut;
    cut.start(QStringLiteral(WB_CLI_PATH), tryArgs(out));
    QVERIFY(cut.waitForStarted());
    json ev;
    auto isStart = [](const json& e) { return e["type"] == "rung_start"; };
    QVERIFY2(readUntil(cut, isStart, &ev, 120000), cut.readAllStandardError().constData());
    if (point == QLatin1String("first")) {
      QVERIFY(waitTraining(QString::fromStdString(ev["run_dir"].get<std::string>()), cut));
    } else {
      QVERIFY(readUntil(cut, [](const json& e) { return e["type"] == "rung_end"; }, &ev, 120000));
      if (point == QLatin1String("second")) {
        QVERIFY(readUntil(cut, isStart, &ev, 60000));
        QVERIFY(waitTraining(QString::fromStdString(ev["run_dir"].get<std::string>()), cut));
      }
    }
    cut.terminate();  // SIGTERM: the run under way stops and writes its end
    QVERIFY(cut.waitForFinished(120000));
    QCOMPARE(cut.exitCode(), 130);
    // The run that was cut: the last one started that did not end ok.
    QString cutDir;
    for (const QByteArray& line : (QByteArray::fromStdString(ev.dump()) + '\n' + cut.readAllStandardOutput()).split('\n')) {
      const auto e = wb::proto::decodeEvent(line.toStdString());
      if (!e) continue;
      const QString dir = QString::fromStdString(e->value("run_dir", std::string()));
      if ((*e)["type"] == "rung_start") cutDir = dir;
      if ((*e)["type"] == "rung_end" && e->value("status", std::string()) == "ok" && dir == cutDir) cutDir.clear();
    }
    const QMap<QString, QByteArray> before = filesUnder(out + QStringLiteral("/runs"));
    QVERIFY(!before.isEmpty());

    const auto again = wb::test::runProcess(QStringLiteral(WB_CLI_PATH), tryArgs(out), 300000);
    QVERIFY2(again.rc == 0, again.describe().constData());
    const QMap<QString, QByteArray> after = filesUnder(out + QStringLiteral("/runs"));
    for (auto it = before.begin(); it != before.end(); ++it) {
      QVERIFY2(after.contains(it.key()), qPrintable(it.key() + QStringLiteral(" is gone")));
      QVERIFY2(after.value(it.key()) == it.value(), qPrintable(it.key() + QStringLiteral(" was rewritten")));
    }
    // The pairs counted are whole pairs that ran after the cut or before it, never the cut run's folder.
    std::ifstream in((out + QStringLiteral("/try.json")).toStdString());
    const json doc = json::parse(in, nullptr, false);
    QCOMPARE(doc["status"].get<std::string>(), std::string("ok"));
    QVERIFY(doc["runs"].size() >= 1);
    for (const auto& pair : doc["runs"])
      for (const char* side : {"reference_dir", "variant_dir"}) {
        const QString dir = QDir(out).filePath(QString::fromStdString(pair[side].get<std::string>()));
        QVERIFY2(dir != cutDir, qPrintable(dir + QStringLiteral(" is the cut run's folder")));
        QVERIFY(QFile::exists(dir + QStringLiteral("/summary.json")));
      }
  }

  // A finished pair whose run folder was deleted runs again, and the continue says which pair and
  // which folder is gone (on stderr and as a warning event); the ladder runs on the same runner.
  void aPairWhoseFolderIsGoneRunsAgainSayingWhy() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir root;
    const QString out = root.filePath(QStringLiteral("try"));
    const auto first = wb::test::runProcess(QStringLiteral(WB_CLI_PATH), tryArgs(out), 300000);
    QVERIFY2(first.rc == 0, first.describe().constData());
    std::ifstream in((out + QStringLiteral("/pairs.json")).toStdString());
    const json pairs = json::parse(in, nullptr, false);
    QVERIFY(pairs.is_object() && !pairs["pairs"].empty());
    const json& pair = pairs["pairs"][0];
    const QString gone = QString::fromStdString(pair["variant_dir"].get<std::string>());
    QVERIFY(QDir(QDir(out).filePath(gone)).removeRecursively());

    const auto again = wb::test::runProcess(QStringLiteral(WB_CLI_PATH), tryArgs(out), 300000);
    QVERIFY2(again.rc == 0, again.describe().constData());
    const QString said = QStringLiteral("%1, pair %2: its run folder %3 is gone: the pair runs again")
                             .arg(QString::fromStdString(pair["key"].get<std::string>()))
                             .arg(pair["pair"].get<int>())
                             .arg(gone);
    QVERIFY2(again.err.contains(said.toUtf8()), again.describe().constData());
    bool warned = false;
    for (const QByteArray& line : again.out.split('\n')) {
      const auto e = wb::proto::decodeEvent(line.toStdString());
      warned = warned || (e && (*e)["type"] == "warning" && QString::fromStdString(e->value("message", std::string())) == said);
    }
    QVERIFY2(warned, again.out.right(2000).constData());
    std::ifstream after((out + QStringLiteral("/pairs.json")).toStdString());
    for (const auto& p : json::parse(after, nullptr, false)["pairs"])
      QVERIFY(QFile::exists(QDir(out).filePath(QString::fromStdString(p["variant_dir"].get<std::string>())) + QStringLiteral("/summary.json")));
  }
};

QTEST_APPLESS_MAIN(TestCliContinue)
#include "test_cli_continue.moc"
