// Exact resume: a rank SIGKILLed mid-epoch after a checkpoint, resumed with `run --resume`,
// continues with losses bit-for-bit equal to an uninterrupted run (CPU, one thread, fixed seed).
// A ZeRO run resumes on one process and back with more epochs (--set on --resume), keeping the
// configs it replaced; a finished run resumed without more epochs, or with another optimiser, is
// refused untouched.
#include <QtTest/QtTest>
#include <QProcess>
#include <QTemporaryDir>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>

#include "wb/proto/events.h"
#include "wb/proto/rundir.h"
#include "../support/machine.h"

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

using wb::test::haveFashionMnist;

// Every file under dir (relative path -> bytes).
std::map<std::string, std::string> filesUnder(const std::filesystem::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    out[std::filesystem::relative(e.path(), dir).string()] =
        std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  return out;
}

struct Cli {
  int rc = -1;
  QByteArray out, err;
};

Cli runCli(const QStringList& args) {
  QProcess p;
  p.start(QStringLiteral(WB_CLI_PATH), args);
  Cli r;
  if (!p.waitForFinished(600000)) return r;
  r.rc = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  r.out = p.readAllStandardOutput();
  r.err = p.readAllStandardError();
  return r;
}

QStringList setsOf(const QStringList& kvs) {
  QStringList s;
  for (const auto& kv : kvs) s << QStringLiteral("--set") << kv;
  return s;
}

}  // namespace

class TestCliResume : public QObject {
  Q_OBJECT
  QTemporaryDir data_;  // same/: a PNG export of Fashion-MNIST; three/: three of its classes
  QTemporaryDir runs_;
  std::filesystem::path finished_;  // a finished one-epoch lenet run, copied for each test
  int copies_ = 0;

  // A fresh copy of the finished run; empty when it could not be made.
  std::filesystem::path finishedRun() {
    if (finished_.empty()) return {};
    const std::filesystem::path copy = runs_.filePath(QStringLiteral("copy-%1").arg(++copies_)).toStdString();
    std::filesystem::copy(finished_, copy, std::filesystem::copy_options::recursive);
    return copy;
  }

 private Q_SLOTS:
  void initTestCase() {
    WB_NEED(wb::test::missingFashionMnist());
    const QString same = data_.filePath(QStringLiteral("same")), three = data_.filePath(QStringLiteral("three"));
    for (const QString& dir : {same, three})
      QCOMPARE(runCli({QStringLiteral("dataset"), QStringLiteral("export"), QStringLiteral("--limit"), QStringLiteral("300"),
                       QStringLiteral("--to"), QStringLiteral("folder:") + dir}).rc, 0);
    for (const char* split : {"train", "test"})
      for (const auto& e : std::filesystem::directory_iterator((three + QLatin1Char('/') + QLatin1String(split)).toStdString()))
        if (const std::string name = e.path().filename().string(); !(name.size() > 1 && name[1] == '_' && name[0] <= '2'))
          std::filesystem::remove_all(e.path());  // keep 0_*, 1_*, 2_*
    const QString dir = runs_.filePath(QStringLiteral("finished"));
    const Cli first = runCli(QStringList{QStringLiteral("run"), QStringLiteral("--run-dir"), dir} +
                             setsOf({QStringLiteral("data.limit_train=512"), QStringLiteral("data.limit_val=256"),
                                     QStringLiteral("train.epochs=1")}));
    QVERIFY2(first.rc == 0, first.err.constData());
    finished_ = dir.toStdString();
  }

  void killedMidEpochResumesBitForBit() {
    WB_NEED(wb::test::missingFashionMnist());
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

  void shardedRunResumesOnOtherRanksWithMoreEpochs() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir root;
    const QString cli = QStringLiteral(WB_CLI_PATH);
    const QString runDir = root.filePath(QStringLiteral("zero2"));
    const wb::proto::RunDir run{runDir.toStdString()};
    auto runCli = [&](const QStringList& args, int expectedExit) -> QByteArray {
      QProcess p;
      p.start(cli, args);
      if (!p.waitForFinished(600000)) return "timed out";
      const QByteArray err = p.readAllStandardError();
      if (p.exitCode() != expectedExit) qWarning("exit %d: %s", p.exitCode(), err.constData());
      return p.exitCode() == expectedExit ? err : QByteArray("unexpected exit code");
    };
    auto sets = [](std::initializer_list<const char*> kvs) {
      QStringList s;
      for (const char* kv : kvs) s << QStringLiteral("--set") << QString::fromLatin1(kv);
      return s;
    };
    QVERIFY(runCli(QStringList{QStringLiteral("run"), QStringLiteral("--run-dir"), runDir} +
                       sets({"data.limit_train=2000", "data.limit_val=500", "optim.name=adam", "train.epochs=1",
                             "train.log_every=4", "speedups.devices=2", "speedups.sharding=zero2"}),
                   0) != "unexpected exit code");
    const auto firstLife = wb::proto::readEventsFile(run.events().string());
    const double firstLoss = [&] {
      for (const auto& ev : firstLife)
        if (ev.value("type", "") == "step" && ev.value("rank", 0) == 0) return ev["loss"].get<double>();
      return 0.0;
    }();
    auto readAll = [](const std::filesystem::path& path) {
      QFile f(QString::fromStdString(path.string()));
      return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    };
    const QByteArray firstSummary = readAll(run.summary());
    const QByteArray firstConfig = readAll(run.config());

    // Finished: resuming at the same train.epochs is refused, naming the field, and changes nothing.
    const QByteArray refused = runCli({QStringLiteral("run"), QStringLiteral("--resume"), runDir}, 2);
    QVERIFY2(refused.contains("train.epochs") && refused.contains("already trained 1 epoch"), refused.constData());
    QCOMPARE(wb::proto::readEventsFile(run.events().string()).size(), firstLife.size());
    QCOMPARE(readAll(run.summary()), firstSummary);
    // Adam's state cannot resume under SGD: refused naming optim.name, again before anything is written.
    const QByteArray otherOptim = runCli(QStringList{QStringLiteral("run"), QStringLiteral("--resume"), runDir} +
                                             sets({"train.epochs=2", "optim.name=sgd"}),
                                         2);
    QVERIFY2(otherOptim.contains("optim.name") && otherOptim.contains("trained with adam"), otherOptim.constData());
    QCOMPARE(wb::proto::readEventsFile(run.events().string()).size(), firstLife.size());
    QCOMPARE(readAll(run.config()), firstConfig);

    // On one process, unsharded, one more epoch: the consolidated optimiser state loads unsharded.
    QVERIFY(runCli(QStringList{QStringLiteral("run"), QStringLiteral("--resume"), runDir} +
                       sets({"train.epochs=2", "speedups.devices=1", "speedups.sharding=off"}),
                   0) != "unexpected exit code");
    QCOMPARE(readAll(run.root / "config.before-resume-1.json"), firstConfig);
    auto config = wb::proto::readJsonFile(run.config());
    QVERIFY(config.ok());
    QCOMPARE((*config)["speedups"]["devices"].get<int>(), 1);
    QCOMPARE((*config)["train"]["epochs"].get<int>(), 2);
    // --set applies on top of the run's own config, not the defaults.
    QCOMPARE((*config)["data"]["limit_train"].get<int>(), 2000);
    QCOMPARE((*config)["optim"]["name"].get<std::string>(), std::string("adam"));
    auto secondSummary = wb::proto::readJsonFile(run.summary());
    QVERIFY(secondSummary.ok());

    // ...and back on two ZeRO-1 ranks for a third epoch.
    QVERIFY(runCli(QStringList{QStringLiteral("run"), QStringLiteral("--resume"), runDir} +
                       sets({"train.epochs=3", "speedups.devices=2", "speedups.sharding=zero1"}),
                   0) != "unexpected exit code");
    QVERIFY(QFile::exists(QString::fromStdString((run.root / "config.before-resume-2.json").string())));
    // The summary's training throughput covers this life only: train samples/s x its training
    // time = the samples it trained.
    auto thirdSummary = wb::proto::readJsonFile(run.summary());
    QVERIFY(thirdSummary.ok());
    const double trainedNow = (*thirdSummary)["samples"].get<double>() - (*secondSummary)["samples"].get<double>();
    QCOMPARE((*thirdSummary)["train_samples"].get<double>(), trainedNow);
    const double sps = (*thirdSummary)["train_samples_per_s"].get<double>(), wall = (*thirdSummary)["train_s"].get<double>();
    QVERIFY(trainedNow > 0);
    QVERIFY2(std::abs(sps * wall - trainedNow) <= 0.01 * trainedNow,
             qPrintable(QStringLiteral("%1 samples/s x %2 s vs %3 samples").arg(sps).arg(wall).arg(trainedNow)));

    std::vector<json> lives;  // the `run` event of each life
    json secondStart, lastEval;
    bool batchNote = false;
    for (const auto& ev : wb::proto::readEventsFile(run.events().string())) {
      const std::string type = ev.value("type", "");
      if (type == "run") lives.push_back(ev);
      if (type == "start" && ev.value("world_size", 0) == 1) secondStart = ev;
      if (type == "warning" && ev.value("message", "").find("global batch of 128") != std::string::npos) batchNote = true;
      if (type == "eval" && ev.value("rank", 0) == 0) lastEval = ev;
    }
    QCOMPARE(int(lives.size()), 3);  // the first life and two resumes; the refused one wrote nothing
    QVERIFY2(lives[1]["config_changes"].dump().find("speedups.devices: 2 -> 1") != std::string::npos,
             lives[2].dump().c_str());
    QCOMPARE(secondStart["resumed_from"]["epoch"].get<int>(), 2);
    QVERIFY(batchNote);  // 2 ranks x 64 before, 1 x 64 now: said, not silent
    QCOMPARE(lastEval["epoch"].get<int>(), 3);
    // Trained on, not restarted: a fresh lenet starts at ln(10) = 2.3.
    QVERIFY(firstLoss > 2.0);
    QVERIFY2(lastEval["val_loss"].get<double>() < 1.2, lastEval.dump().c_str());
  }

  // What a resume cannot continue is refused before the run folder is touched (exit 2, naming
  // the field), every file of it left byte for byte: another model, another dataset without
  // --fine-tune, --fine-tune onto data of other classes, and --fine-tune without another dataset.
  void aResumeThatCannotContinueLeavesEveryFile_data() {
    QTest::addColumn<QStringList>("changes");
    QTest::addColumn<bool>("fineTune");
    QTest::addColumn<QStringList>("said");
    QTest::newRow("another model") << QStringList{QStringLiteral("model.name=mlp")} << false
                                   << QStringList{QStringLiteral("model.name"), QStringLiteral("lenet")};
    QTest::newRow("another dataset") << QStringList{QStringLiteral("data.dataset=folder:@same")} << false
                                     << QStringList{QStringLiteral("data.dataset"), QStringLiteral("--fine-tune")};
    QTest::newRow("fine-tune onto other classes") << QStringList{QStringLiteral("data.dataset=folder:@three")} << true
                                                  << QStringList{QStringLiteral("data.dataset"), QStringLiteral("3 classes")};
    QTest::newRow("fine-tune on the same dataset") << QStringList{} << true << QStringList{QStringLiteral("--fine-tune")};
  }
  void aResumeThatCannotContinueLeavesEveryFile() {
    WB_NEED(wb::test::missingFashionMnist());
    QFETCH(QStringList, changes);
    QFETCH(bool, fineTune);
    QFETCH(QStringList, said);
    const std::filesystem::path runDir = finishedRun();
    QVERIFY(!runDir.empty());
    for (auto& c : changes) c.replace(QStringLiteral("@same"), data_.filePath(QStringLiteral("same")))
                                .replace(QStringLiteral("@three"), data_.filePath(QStringLiteral("three")));
    const auto before = filesUnder(runDir);
    QStringList args = QStringList{QStringLiteral("run"), QStringLiteral("--resume"), QString::fromStdString(runDir.string())} +
                       setsOf(changes << QStringLiteral("train.epochs=2"));
    if (fineTune) args << QStringLiteral("--fine-tune");
    const Cli r = runCli(args);
    QVERIFY2(r.rc == 2, r.err.constData());
    for (const auto& s : said) QVERIFY2(r.err.contains(s.toUtf8()), r.err.constData());
    const auto after = filesUnder(runDir);
    QCOMPARE(after.size(), before.size());
    for (const auto& [path, bytes] : before) {
      QVERIFY2(after.count(path), path.c_str());
      QVERIFY2(after.at(path) == bytes, (path + " changed").c_str());
    }
  }

  // --fine-tune onto another dataset of the same classes, channels and size continues the
  // weights there, and the run says where they come from: the `run` event and summary.json's
  // fine_tuned_from, and a warning that best.pt and early stopping start afresh.
  void aFineTuneOnAnotherDatasetIsMarked() {
    WB_NEED(wb::test::missingFashionMnist());
    const std::filesystem::path runDir = finishedRun();
    QVERIFY(!runDir.empty());
    const QString other = QStringLiteral("folder:") + data_.filePath(QStringLiteral("same"));
    const Cli r = runCli(QStringList{QStringLiteral("run"), QStringLiteral("--resume"), QString::fromStdString(runDir.string()),
                                     QStringLiteral("--fine-tune"), QStringLiteral("--events-stdout")} +
                         setsOf({QStringLiteral("data.dataset=") + other, QStringLiteral("train.epochs=2")}));
    QVERIFY2(r.rc == 0, r.err.constData());
    bool marked = false, warned = false;
    for (const auto& line : r.out.split('\n')) {
      auto ev = wb::proto::decodeEvent(line.toStdString());
      if (!ev) continue;
      if (ev->value("type", "") == "run") marked = ev->value("fine_tuned_from", "") == "fashion-mnist";
      if (ev->value("type", "") == "warning") warned = warned || ev->value("message", "").find("fine-tuning") != std::string::npos;
    }
    QVERIFY2(marked, r.out.left(3000).constData());
    QVERIFY(warned);
    auto summary = wb::proto::readJsonFile(wb::proto::RunDir{runDir}.summary());
    QVERIFY(summary.ok());
    QCOMPARE(summary->value("fine_tuned_from", ""), std::string("fashion-mnist"));
    QCOMPARE(summary->value("status", ""), std::string("ok"));
  }

  // A resume refused for a corrupt last.pt leaves the finished run as it was: its summary still
  // says how it ended, and its events have nothing of the refused attempt.
  void aRefusedResumeLeavesTheRunUntouched() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir root;
    const QString runDir = root.filePath(QStringLiteral("finished"));
    const wb::proto::RunDir run{runDir.toStdString()};
    QProcess first;
    first.start(QStringLiteral(WB_CLI_PATH), QStringList{QStringLiteral("run"), QStringLiteral("--run-dir"), runDir,
                                                         QStringLiteral("--set"), QStringLiteral("data.limit_train=512"),
                                                         QStringLiteral("--set"), QStringLiteral("data.limit_val=256"),
                                                         QStringLiteral("--set"), QStringLiteral("train.epochs=1")});
    QVERIFY(first.waitForFinished(300000));
    QCOMPARE(first.exitCode(), 0);
    {
      std::fstream ck(run.lastCheckpoint(), std::ios::in | std::ios::out | std::ios::binary);
      ck.seekp(200);
      ck.write("garbage!garbage!", 16);  // the CRC no longer matches
    }
    auto bytes = [](const std::filesystem::path& p) {
      std::ifstream in(p, std::ios::binary);
      return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    };
    const std::string summary = bytes(run.summary()), events = bytes(run.events());
    QProcess resume;
    resume.start(QStringLiteral(WB_CLI_PATH), QStringList{QStringLiteral("run"), QStringLiteral("--resume"), runDir,
                                                          QStringLiteral("--set"), QStringLiteral("train.epochs=2")});
    QVERIFY(resume.waitForFinished(300000));
    const QByteArray err = resume.readAllStandardError();
    QVERIFY2(resume.exitCode() != 0, err.constData());
    QVERIFY2(err.contains("last.pt"), err.constData());
    QCOMPARE(bytes(run.summary()), summary);
    QCOMPARE(bytes(run.events()), events);

    // The advice the refusal gives has a CLI form: continue from best.pt.
    QVERIFY2(err.contains("--from best"), err.constData());
    QProcess fromBest;
    fromBest.start(QStringLiteral(WB_CLI_PATH),
                   QStringList{QStringLiteral("run"), QStringLiteral("--resume"), runDir, QStringLiteral("--from"),
                               QStringLiteral("best"), QStringLiteral("--set"), QStringLiteral("train.epochs=2"),
                               QStringLiteral("--events-stdout")});
    QVERIFY(fromBest.waitForFinished(300000));
    const QByteArray out = fromBest.readAllStandardOutput();
    QVERIFY2(fromBest.exitCode() == 0, fromBest.readAllStandardError().constData());
    QVERIFY2(out.contains("\"resume\":\"" + QByteArray::fromStdString(run.bestCheckpoint().string()) + "\""), out.left(3000).constData());
    QVERIFY(out.contains("\"status\":\"ok\""));
  }
};

QTEST_APPLESS_MAIN(TestCliResume)
#include "test_cli_resume.moc"
