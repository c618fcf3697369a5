// A ladder measured while another process spins on a core, the way it breaks on laptops and
// shared servers: every run says it was contended (its other load, in cores), the trainer gave
// up the core the other process took (automatic threads drop to what is free), the ladder runs
// a contended rung once more, and no speedup measured that way is reported as one.
#include <QtTest/QtTest>
#include <QProcess>
#include <QTemporaryDir>

#include <fstream>

#include <nlohmann/json.hpp>

#include "wb/proto/events.h"
#include "../support/machine.h"

using nlohmann::json;

namespace {

using wb::test::haveFashionMnist;

json readJson(const QString& path) {
  std::ifstream in(path.toStdString());
  return json::parse(in, nullptr, false);
}

// A process that keeps one core busy until it is killed.
class BusyLoop {
 public:
  BusyLoop() {
    proc_.start(QStringLiteral("/bin/sh"), {QStringLiteral("-c"), QStringLiteral("while :; do :; done")});
    proc_.waitForStarted();
  }
  ~BusyLoop() {
    proc_.kill();
    proc_.waitForFinished();
  }
  bool running() const { return proc_.state() == QProcess::Running; }
  int pid() const { return int(proc_.processId()); }

 private:
  QProcess proc_;
};

}  // namespace

class TestCliContention : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void ladderUnderABusyCoreReportsNoSpeedup() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir root;
    const QString out = root.filePath(QStringLiteral("ladder"));
    BusyLoop busy;
    QVERIFY(busy.running());
    QProcess ladder;
    ladder.start(QStringLiteral(WB_CLI_PATH),
                 {QStringLiteral("ladder"), QStringLiteral("--out"), out, QStringLiteral("--steps"), QStringLiteral("workers"),
                  QStringLiteral("--repeats"), QStringLiteral("1"),
                  QStringLiteral("--set"), QStringLiteral("data.limit_train=6000"), QStringLiteral("--set"),
                  QStringLiteral("data.limit_val=500")});
    QVERIFY(ladder.waitForFinished(600000));
    QVERIFY2(ladder.exitCode() == 0, ladder.readAllStandardError().constData());

    // Every run knows it shared the machine, and the automatic threads followed the free cores.
    int runs = 0, reruns = 0, named = 0;
    QFileInfoList runDirs;  // each step's runs (the greedy ladder's steps/<step>/runs)
    for (const QFileInfo& step : QDir(out + QStringLiteral("/steps")).entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot))
      runDirs += QDir(step.filePath() + QStringLiteral("/runs")).entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QFileInfo& dir : runDirs) {
      const json s = readJson(dir.filePath() + QStringLiteral("/summary.json"));
      QVERIFY2(s.is_object(), qPrintable(dir.filePath()));
      const json& cpu = s["cpu"];
      QVERIFY2(cpu.value("contended", false), s.dump().c_str());
      QVERIFY(cpu.value("other_load_cores", 0.0) >= 0.3);
      QVERIFY(cpu["note"].get<std::string>().find("other processes used") != std::string::npos);
      for (const auto& other : cpu.value("busiest_others", json::array()))  // who took the core, by pid
        named += other.value("pid", 0) == busy.pid() && other.value("name", "") == "sh" && other.value("cores", 0.0) > 0.3;
      if (cpu.value("cores", 1) >= 2 && cpu.value("asked_cores", 1) >= 2) QCOMPARE(cpu.value("min_threads", 0), 1);
      ++runs;
      reruns += dir.fileName().contains(QStringLiteral("-p2"));
    }
    QCOMPARE(runs, 4);    // one pair (baseline and workers), and a second because the first was contended
    QCOMPARE(reruns, 2);
    QVERIFY2(named >= runs / 2, qPrintable(QStringLiteral("the busy loop named by %1 of %2 runs").arg(named).arg(runs)));

    // No speedup is reported from them: the rows say contended, the headline is empty.
    const json doc = readJson(out + QStringLiteral("/ladder.json"));
    int measured = 0;
    for (const auto& row : doc["ladder"]["steps"]) {
      if (row.value("skipped", false)) continue;
      ++measured;
      QVERIFY2(!row["contention"].get<std::string>().empty(), row.dump().c_str());
      QVERIFY2(row["speedup"]["cumulative_to_target"].is_null() || row.value("key", "") == "baseline" ||
                   !row["contention"].get<std::string>().empty(),
               row.dump().c_str());
    }
    QCOMPARE(measured, 2);  // the baseline and workers (no pair counted, so nothing is kept)
    // Not measured is not "no gain": the step and the answer say the load kept it from being measured.
    for (const auto& row : doc["ladder"]["steps"]) {
      if (row.value("key", "") == "workers")
        QVERIFY2(row["decision"].get<std::string>().rfind("not measured: contended", 0) == 0, row.dump().c_str());
      if (row.value("key", "") != "kept") continue;
      const std::string note = row["note"].get<std::string>();  // what it was, and what to do about it
      for (const std::string part : {std::string("could not be measured"), "(pid " + std::to_string(busy.pid()) + ")",
                                     std::string("kill -STOP"), std::string("To get verdicts")})
        QVERIFY2(note.find(part) != std::string::npos, (part + " not in: " + note).c_str());
    }
    const std::string md = [&] {
      std::ifstream in((out + QStringLiteral("/ladder.md")).toStdString());
      return std::string(std::istreambuf_iterator<char>(in), {});
    }();
    QVERIFY(md.find("contended") != std::string::npos);
    QVERIFY(md.find("left out (--steps)") != std::string::npos);
  }
};

QTEST_APPLESS_MAIN(TestCliContention)
#include "test_cli_contention.moc"
