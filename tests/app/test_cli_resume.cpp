// Exact resume: a rank SIGKILLed mid-epoch after a checkpoint, resumed with `run --resume`,
// continues with losses bit-for-bit equal to an uninterrupted run (CPU, one thread, fixed seed).
#include <QtTest/QtTest>
#include <QProcess>
#include <QTemporaryDir>

#include <csignal>
#include <map>

#include "wb/proto/events.h"
#include "wb/proto/rundir.h"

using nlohmann::json;

namespace {

QStringList commonSets() {
  QStringList s;
  for (const char* kv : {"model.name=mnist-cnn", "data.limit_train=1280", "data.limit_val=200", "train.epochs=3",
                         "train.threads=1", "train.log_every=1", "optim.name=adam", "optim.lr=0.001",
                         "optim.schedule=cosine"}) {
    s << QStringLiteral("--set") << QString::fromLatin1(kv);
  }
  return s;
}

std::map<int64_t, double> lossesByStep(const std::string& eventsPath) {
  std::map<int64_t, double> out;
  for (const auto& ev : wb::proto::readEventsFile(eventsPath))
    if (ev.value("type", "") == "step" && ev.value("rank", 0) == 0) out[ev["step"].get<int64_t>()] = ev["loss"].get<double>();
  return out;
}

bool haveFashionMnist() { return QFile::exists(QStringLiteral("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")); }

}  // namespace

class TestCliResume : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void killedMidEpochResumesBitForBit() {
    if (!haveFashionMnist()) QSKIP("Fashion-MNIST is not installed");
    QTemporaryDir root;
    const QString cli = QStringLiteral(WB_CLI_PATH);

    // Reference: uninterrupted.
    const QString refDir = root.filePath(QStringLiteral("ref"));
    QProcess ref;
    ref.start(cli, QStringList{QStringLiteral("run"), QStringLiteral("--run-dir"), refDir} + commonSets());
    QVERIFY(ref.waitForFinished(600000));
    QCOMPARE(ref.exitCode(), 0);
    auto refLoss = lossesByStep(wb::proto::RunDir{refDir.toStdString()}.events().string());
    QCOMPARE(int(refLoss.size()), 60);

    // Interrupted: a standalone rank (as under torchrun) killed with SIGKILL in epoch 2.
    const QString runDir = root.filePath(QStringLiteral("killed"));
    const std::string events = wb::proto::RunDir{runDir.toStdString()}.events().string();
    QProcess worker;
    worker.start(cli, QStringList{QStringLiteral("worker"), QStringLiteral("--run-dir"), runDir} + commonSets());
    QVERIFY(worker.waitForStarted());
    QTRY_VERIFY_WITH_TIMEOUT(lossesByStep(events).count(25) == 1, 600000);
    ::kill(static_cast<pid_t>(worker.processId()), SIGKILL);
    QVERIFY(worker.waitForFinished(60000));
    const auto beforeKill = lossesByStep(events);
    const int64_t lastStepBeforeKill = beforeKill.rbegin()->first;
    QVERIFY2(lastStepBeforeKill < 40, "the rank finished epoch 2 before it could be killed");

    // Resume: continues from last.pt written at the end of epoch 1 (step 20).
    QProcess resume;
    resume.start(cli, {QStringLiteral("run"), QStringLiteral("--resume"), runDir});
    QVERIFY(resume.waitForFinished(600000));
    QVERIFY2(resume.exitCode() == 0, resume.readAllStandardError().constData());

    // Nothing written before the kill was lost: the file holds both lives of the run.
    std::vector<json> all = wb::proto::readEventsFile(events);
    int starts = 0;
    json resumedStart;
    for (const auto& ev : all)
      if (ev.value("type", "") == "start") {
        ++starts;
        resumedStart = ev;
      }
    QCOMPARE(starts, 2);
    QVERIFY(resumedStart.contains("resumed_from"));
    QCOMPARE(resumedStart["resumed_from"]["step"].get<int64_t>(), int64_t(20));

    // Every loss after the resume equals the uninterrupted run's, bit for bit.
    int compared = 0;
    bool afterResume = false;
    for (const auto& ev : all) {
      if (ev.value("type", "") == "start" && ev.contains("resumed_from")) afterResume = true;
      if (!afterResume || ev.value("type", "") != "step") continue;
      const int64_t step = ev["step"].get<int64_t>();
      QVERIFY(refLoss.count(step));
      QVERIFY2(ev["loss"].get<double>() == refLoss[step], ev.dump().c_str());  // exact, not fuzzy
      ++compared;
    }
    QCOMPARE(compared, 40);
    auto summary = wb::proto::readJsonFile(wb::proto::RunDir{runDir.toStdString()}.summary());
    QVERIFY(summary.ok());
    QCOMPARE((*summary)["status"].get<std::string>(), std::string("ok"));
  }
};

QTEST_APPLESS_MAIN(TestCliResume)
#include "test_cli_resume.moc"
