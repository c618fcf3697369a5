// `workbench-cli ladder` cut by SIGTERM in the middle of a rung, then continued: the cut rung
// gives no speedup (not in ladder.json, not in the tables), ladder.json says where the ladder was
// cancelled and which steps did not run; the same command on the same --out continues, reusing
// the finished pairs; another plan on that folder is refused, saying what to do. Real processes
// on a tiny Fashion-MNIST budget.
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <fstream>

#include <nlohmann/json.hpp>

#include "../support/event_stream.h"
#include "../support/proc.h"
#include "wb/proto/events.h"

using nlohmann::json;

#include "../support/machine.h"

namespace {

using wb::test::haveFashionMnist;
using wb::test::readEvents;
using wb::test::trainingIn;

json readJson(const QString& path) {
  std::ifstream in(path.toStdString());
  return json::parse(in, nullptr, false);
}

QStringList ladderArgs(const QString& out, const QString& steps) {
  QStringList args{QStringLiteral("ladder"), QStringLiteral("--events-stdout"), QStringLiteral("--out"), out,
                   QStringLiteral("--steps"), steps, QStringLiteral("--repeats"), QStringLiteral("1")};
  // Runs of a few seconds: the test cuts one while it trains.
  for (const char* kv : {"model.name=mlp", "data.limit_train=4096", "data.limit_val=128", "train.epochs=1",
                         "train.log_every=1", "train.threads=1", "train.batch_size=16"})
    args << QStringLiteral("--set") << QString::fromLatin1(kv);
  return args;
}

const json& stepOf(const json& ladderDoc, const std::string& key) {
  for (const auto& s : ladderDoc["ladder"]["steps"])
    if (s["key"] == key) return s;
  static const json none;
  return none;
}

}  // namespace

class TestCliLadderCancel : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void aCutRungGivesNoSpeedupAndTheLadderContinues() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir root;
    const QString out = root.filePath(QStringLiteral("ladder"));
    const QString steps = QStringLiteral("workers,early_stopping,inference_eval");
    QProcess ladder;
    ladder.setProcessChannelMode(QProcess::SeparateChannels);
    ladder.start(QStringLiteral(WB_CLI_PATH), ladderArgs(out, steps));
    QVERIFY(ladder.waitForStarted());

    // The workers pair finishes; the early-stopping step's run starts (after its reference, the
    // configuration kept so far): cut it mid-training.
    std::vector<json> events;
    QVERIFY2(readEvents(ladder, events, [](const json& e) { return e["type"] == "pair_end" && e["key"] == "workers"; }, 240000),
             ladder.readAllStandardError().constData());
    QVERIFY(readEvents(ladder, events, [](const json& e) { return e["type"] == "rung_start" && e["key"] == "early_stopping"; }, 120000));
    const QString cutDir = QString::fromStdString(events.back()["run_dir"].get<std::string>());
    QElapsedTimer waited;
    waited.start();
    while (!trainingIn(cutDir) && waited.elapsed() < 60000 && ladder.state() == QProcess::Running) QTest::qWait(100);
    QVERIFY2(trainingIn(cutDir), "the early-stopping rung never started training");
    ladder.terminate();  // SIGTERM
    QVERIFY(ladder.waitForFinished(120000));
    QCOMPARE(ladder.exitCode(), 130);

    const json cut = readJson(QDir(out).filePath(QStringLiteral("ladder.json")));
    QCOMPARE(cut["ladder"]["status"].get<std::string>(), std::string("cancelled"));
    QCOMPARE(cut["ladder"]["cancelled_at"].get<std::string>(), std::string("early_stopping"));
    QCOMPARE(cut["ladder"]["status_note"].get<std::string>(), std::string("cancelled at step early_stopping"));
    const json& es = stepOf(cut, "early_stopping");
    QVERIFY(es["speedup"]["cumulative_to_target"].is_null() && es["speedup"]["cumulative"].is_null());
    QCOMPARE(es["run_dirs"].size(), size_t{0});  // the cut run is not in the record
    QVERIFY(es["not_run"].get<bool>());
    QVERIFY(stepOf(cut, "inference_eval")["not_run"].get<bool>());
    QVERIFY(QString::fromStdString(stepOf(cut, "inference_eval")["problems"].get<std::string>()).contains(QStringLiteral("not run (cancelled)")));
    QVERIFY(stepOf(cut, "workers")["run_dirs"].size() >= 1);  // the finished pair stands (two when the first was contended)
    // Its speedup, unless the machine was busy (a contended pair gives none).
    QVERIFY(stepOf(cut, "workers")["speedup"]["cumulative"].is_number() || !stepOf(cut, "workers")["contention"].get<std::string>().empty());
    QFile md(QDir(out).filePath(QStringLiteral("ladder.md")));
    QVERIFY(md.open(QIODevice::ReadOnly));
    const QByteArray table = md.readAll();
    QVERIFY(table.contains("cancelled at step early_stopping"));
    QVERIFY(table.contains("not run (cancelled)"));

    // The same command continues: the workers pair is reused, the rest runs; the cut run's
    // folder keeps what it wrote (the pair runs again in new folders).
    const QByteArray cutEvents = [&] {
      QFile f(cutDir + QStringLiteral("/events.jsonl"));
      return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }();
    const auto workersSummary = QFileInfo(QString::fromStdString(stepOf(cut, "workers")["run_dirs"][0].get<std::string>()) +
                                          QStringLiteral("/summary.json")).lastModified();
    const auto again = wb::test::runProcess(QStringLiteral(WB_CLI_PATH), ladderArgs(out, steps), 300000);
    QVERIFY2(again.rc == 0, again.describe().constData());
    QStringList started;
    for (const QByteArray& line : again.out.split('\n'))
      if (auto ev = wb::proto::decodeEvent(line.toStdString()); ev && (*ev)["type"] == "rung_start")
        started << QString::fromStdString((*ev)["key"].get<std::string>());
    QVERIFY2(!started.contains(QStringLiteral("workers")), qPrintable(started.join(QLatin1Char(','))));
    QVERIFY(started.contains(QStringLiteral("early_stopping")) && started.contains(QStringLiteral("inference_eval")));
    const json done = readJson(QDir(out).filePath(QStringLiteral("ladder.json")));
    QCOMPARE(done["ladder"]["status"].get<std::string>(), std::string("ok"));
    for (const char* key : {"workers", "early_stopping", "inference_eval"}) {
      QVERIFY(stepOf(done, key)["run_dirs"].size() >= 1);
      QVERIFY(!stepOf(done, key)["not_run"].get<bool>());
    }
    QVERIFY(stepOf(done, "baseline")["run_dirs"].size() >= 1);  // the first step's reference runs
    QCOMPARE(QFileInfo(QString::fromStdString(stepOf(done, "workers")["run_dirs"][0].get<std::string>()) +
                       QStringLiteral("/summary.json")).lastModified(), workersSummary);
    QFile cutAfter(cutDir + QStringLiteral("/events.jsonl"));
    QVERIFY(cutAfter.open(QIODevice::ReadOnly));
    QCOMPARE(cutAfter.readAll(), cutEvents);

    // Another plan on that folder: refused, saying what differs and what to do.
    const auto other = wb::test::runProcess(QStringLiteral(WB_CLI_PATH), ladderArgs(out, QStringLiteral("workers")), 120000);
    QCOMPARE(other.rc, 2);
    QVERIFY2(other.err.contains("holds the pairs of another plan") && other.err.contains("choose a new --out"),
             other.describe().constData());
  }
};

QTEST_APPLESS_MAIN(TestCliLadderCancel)
#include "test_cli_ladder_cancel.moc"
