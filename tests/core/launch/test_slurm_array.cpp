// Runs as one job array on the real single-node Slurm cluster (the slurm fixture): every task's
// command writes its folder; a task Slurm ended from outside is rerun once into a fresh folder
// (the first kept) and named with Slurm's reason; a stop cancels the array and keeps what finished.
#include <QtTest/QtTest>
#include <QProcess>
#include <QTemporaryDir>

#include "../../support/machine.h"

#include <atomic>
#include <thread>

#include "wb/launch/slurm_array.h"
#include "wb/proto/cluster_jobs.h"

namespace sl = wb::launch::slurm;

namespace {

QString squeue(const QStringList& args) {
  QProcess p;
  p.start(QStringLiteral("squeue"), QStringList{QStringLiteral("-h")} + args);
  p.waitForFinished(30000);
  return QString::fromUtf8(p.readAllStandardOutput()).trimmed();
}

// A task that writes "<folder>/done"; `hold` tasks first sleep (until Slurm or the test ends them)
// unless this is their rerun.
sl::ArrayTask task(const QTemporaryDir& dir, int i, bool hold) {
  sl::ArrayTask t;
  t.run_dir = dir.filePath(QStringLiteral("run-%1").arg(i)).toStdString();
  const std::string body = hold ? "mkdir -p \"$1\"; case \"$1\" in *.rerun) ;; *) sleep 300 ;; esac; echo ok > \"$1/done\""
                                : "mkdir -p \"$1\" && echo ok > \"$1/done\"";
  t.argv = {"sh", "-c", body, "sh", "{run_dir}"};
  return t;
}

// Waits until task `i` of the array named `name` runs and has made `folder`, then scancels that task alone.
void cancelTaskWhenRunning(const QString& name, int i, const QString& folder) {
  const QString suffix = QStringLiteral("_%1").arg(i);
  for (int tries = 0; tries < 600; ++tries) {
    if (!QDir(folder).exists()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    for (const QString& id : squeue({QStringLiteral("-n"), name, QStringLiteral("-t"), QStringLiteral("RUNNING"),
                                     QStringLiteral("-o"), QStringLiteral("%i")})
                                 .split(QLatin1Char('\n')))
      if (id.endsWith(suffix)) {
        QProcess::execute(QStringLiteral("scancel"), {id});
        return;
      }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}
}  // namespace

class TestSlurmArray : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void theScriptRunsTaskIInTaskI() {
    QTemporaryDir dir;
    const std::string s = sl::arrayScript({task(dir, 0, false), task(dir, 1, false)});
    QVERIFY2(s.find("1) exec 'sh' '-c'") != std::string::npos, s.c_str());
    QVERIFY2(s.find(dir.filePath(QStringLiteral("run-1")).toStdString()) != std::string::npos, s.c_str());
    QVERIFY2(s.find("{run_dir}") == std::string::npos, s.c_str());
  }

  void init() {
    if (QByteArray(QTest::currentTestFunction()) == "theScriptRunsTaskIInTaskI") return;
    WB_NEED(wb::test::missingSlurm());
  }

  void everyTaskWritesItsFolder() {
    QTemporaryDir dir;
    std::vector<sl::ArrayTask> tasks;
    for (int i = 0; i < 4; ++i) tasks.push_back(task(dir, i, false));
    sl::ArrayOptions o;
    o.folder = dir.filePath(QStringLiteral("slurm")).toStdString();
    o.job_name = "wbtest-array";
    o.poll_s = 0.2;
    auto ends = sl::runArray(tasks, o);
    QVERIFY2(ends.ok(), ends.ok() ? "" : ends.error().message.c_str());
    for (int i = 0; i < 4; ++i) {
      QVERIFY2((*ends)[i].finished, (*ends)[i].state.c_str());
      QVERIFY((*ends)[i].slurm_ended.empty());
      QVERIFY(QFile::exists(dir.filePath(QStringLiteral("run-%1/done").arg(i))));
      // Each run's job and its last state, for the window (wb/proto/cluster_jobs.h).
      const auto t = wb::proto::clusterTaskOf(dir.filePath(QStringLiteral("run-%1").arg(i)).toStdString());
      QVERIFY(t && t->state == "COMPLETED");
      QVERIFY2(t->job.size() > 2 && t->job.substr(t->job.size() - 2) == "_" + std::to_string(i), t->job.c_str());
    }
  }

  void aTaskSlurmEndedRunsOnceMore() {
    QTemporaryDir dir;
    std::vector<sl::ArrayTask> tasks{task(dir, 0, false), task(dir, 1, true)};
    sl::ArrayOptions o;
    o.folder = dir.filePath(QStringLiteral("slurm")).toStdString();
    o.job_name = "wbtest-array-rerun";
    o.poll_s = 0.2;
    std::thread canceller(cancelTaskWhenRunning, QStringLiteral("wbtest-array-rerun"), 1, dir.filePath(QStringLiteral("run-1")));
    auto ends = sl::runArray(tasks, o);
    canceller.join();
    QVERIFY2(ends.ok(), ends.ok() ? "" : ends.error().message.c_str());
    const sl::TaskEnd& e = (*ends)[1];
    QVERIFY2(e.finished, e.state.c_str());
    QCOMPARE(QString::fromStdString(e.run_dir.string()), dir.filePath(QStringLiteral("run-1.rerun")));
    QCOMPARE(e.slurm_ended.size(), size_t(1));
    QVERIFY2(e.slurm_ended[0].find("CANCELLED") != std::string::npos, e.slurm_ended[0].c_str());
    QVERIFY(QDir(dir.filePath(QStringLiteral("run-1"))).exists());  // the first attempt's folder is kept
    QVERIFY(QFile::exists(dir.filePath(QStringLiteral("run-1.rerun/done"))));
  }

  void aStopCancelsTheArrayAndKeepsWhatFinished() {
    QTemporaryDir dir;
    std::vector<sl::ArrayTask> tasks{task(dir, 0, false), task(dir, 1, true), task(dir, 2, true)};
    std::atomic<bool> stop{false};
    sl::ArrayOptions o;
    o.folder = dir.filePath(QStringLiteral("slurm")).toStdString();
    o.job_name = "wbtest-array-stop";
    o.poll_s = 0.2;
    o.stop = &stop;
    std::thread stopper([&] {
      for (int i = 0; i < 600 && !QFile::exists(dir.filePath(QStringLiteral("run-0/done"))); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      stop = true;
    });
    auto ends = sl::runArray(tasks, o);
    stopper.join();
    QVERIFY(!ends.ok());
    QCOMPARE(int(ends.error().code), int(wb::Errc::Cancelled));
    QVERIFY(QFile::exists(dir.filePath(QStringLiteral("run-0/done"))));
    QTRY_VERIFY_WITH_TIMEOUT(squeue({QStringLiteral("-n"), QStringLiteral("wbtest-array-stop")}).isEmpty(), 30000);
  }
};

QTEST_APPLESS_MAIN(TestSlurmArray)
#include "test_slurm_array.moc"
