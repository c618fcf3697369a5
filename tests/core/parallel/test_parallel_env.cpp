// DistEnv: the torchrun / Slurm environment of one rank, and the errors that name the variable.
#include <QtTest/QtTest>

#include <map>
#include <string>

#include "wb/parallel/env.h"
#include "wb/parallel/slurm.h"

namespace {

using Vars = std::map<std::string, std::string>;

wb::Result<wb::parallel::DistEnv> parse(const Vars& vars) {
  return wb::parallel::DistEnv::fromLookup([&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

Vars varsFrom(const QString& text) {  // "A=1 B=x"
  Vars v;
  for (const QString& kv : text.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
    const auto parts = kv.split(QLatin1Char('='));
    v[parts[0].toStdString()] = parts.value(1).toStdString();
  }
  return v;
}

}  // namespace

class TestParallelEnv : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void valid_data() {
    QTest::addColumn<QString>("vars");
    QTest::addColumn<int>("rank");
    QTest::addColumn<int>("world");
    QTest::addColumn<int>("local");
    QTest::addColumn<bool>("launched");
    QTest::addColumn<QString>("source");
    QTest::newRow("nothing set: one process") << QString() << 0 << 1 << 0 << false << QStringLiteral("none");
    QTest::newRow("torchrun rank 1 of 4")
        << QStringLiteral("RANK=1 WORLD_SIZE=4 LOCAL_RANK=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500") << 1 << 4 << 1
        << true << QStringLiteral("torchrun");
    QTest::newRow("torchrun multi-node local rank")
        << QStringLiteral("RANK=9 WORLD_SIZE=16 LOCAL_RANK=1 MASTER_ADDR=node0 MASTER_PORT=29500") << 9 << 16 << 1
        << true << QStringLiteral("torchrun");
    QTest::newRow("torchrun world 1 without port: no group")
        << QStringLiteral("RANK=0 WORLD_SIZE=1 LOCAL_RANK=0") << 0 << 1 << 0 << false << QStringLiteral("torchrun");
    QTest::newRow("torchrun world 1 with port: a group of one")
        << QStringLiteral("RANK=0 WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29501") << 0 << 1 << 0 << true
        << QStringLiteral("torchrun");
    QTest::newRow("slurm fallback")
        << QStringLiteral("SLURM_PROCID=3 SLURM_NTASKS=8 SLURM_LOCALID=3 MASTER_ADDR=gpu01 MASTER_PORT=29500") << 3
        << 8 << 3 << true << QStringLiteral("slurm");
    QTest::newRow("slurm single task: no group") << QStringLiteral("SLURM_PROCID=0 SLURM_NTASKS=1") << 0 << 1 << 0
                                                 << false << QStringLiteral("slurm");
    QTest::newRow("srun's task")
        << QStringLiteral("SLURM_JOB_ID=5 SLURM_STEP_ID=0 SLURM_PROCID=1 SLURM_NTASKS=2 MASTER_ADDR=n MASTER_PORT=5") << 1
        << 2 << 1 << true << QStringLiteral("slurm");
    QTest::newRow("a batch script's own process: one process")
        << QStringLiteral("SLURM_JOB_ID=5 SLURM_PROCID=0 SLURM_NTASKS=2 SLURM_LOCALID=0") << 0 << 1 << 0 << false
        << QStringLiteral("none");
    QTest::newRow("an array task's batch script: one process")
        << QStringLiteral("SLURM_JOB_ID=5 SLURM_PROCID=0 SLURM_LOCALID=0") << 0 << 1 << 0 << false << QStringLiteral("none");
    QTest::newRow("torchrun wins over slurm")
        << QStringLiteral("RANK=2 WORLD_SIZE=4 MASTER_ADDR=h MASTER_PORT=1234 SLURM_PROCID=0 SLURM_NTASKS=1") << 2 << 4
        << 2 << true << QStringLiteral("torchrun");
  }
  void valid() {
    QFETCH(QString, vars);
    QFETCH(int, rank);
    QFETCH(int, world);
    QFETCH(int, local);
    QFETCH(bool, launched);
    QFETCH(QString, source);
    auto env = parse(varsFrom(vars));
    QVERIFY2(env.ok(), env.ok() ? "" : env.error().message.c_str());
    QCOMPARE(env->rank, rank);
    QCOMPARE(env->world_size, world);
    QCOMPARE(env->local_rank, local);
    QCOMPARE(env->launched(), launched);
    QCOMPARE(QString::fromStdString(env->source), source);
  }

  void torchrunAgentStoreAndRestarts() {
    auto env = parse(varsFrom(QStringLiteral("RANK=0 WORLD_SIZE=2 MASTER_ADDR=a MASTER_PORT=5 "
                                             "TORCHELASTIC_RUN_ID=job7 TORCHELASTIC_RESTART_COUNT=2 "
                                             "TORCHELASTIC_USE_AGENT_STORE=True")));
    QVERIFY(env.ok());
    QVERIFY(env->agent_store);
    QCOMPARE(QString::fromStdString(env->run_id), QStringLiteral("job7/attempt2"));
    auto plain = parse(varsFrom(QStringLiteral("RANK=0 WORLD_SIZE=2 MASTER_ADDR=a MASTER_PORT=5")));
    QVERIFY(plain.ok());
    QVERIFY(!plain->agent_store);
  }

  void storeFileNeedsNoMasterAddrOrPort() {
    auto env = parse(varsFrom(QStringLiteral("RANK=1 WORLD_SIZE=2 WB_STORE_FILE=/tmp/run/.rendezvous")));
    QVERIFY2(env.ok(), env.ok() ? "" : env.error().message.c_str());
    QVERIFY(env->launched());
    QCOMPARE(QString::fromStdString(env->store_file), QStringLiteral("/tmp/run/.rendezvous"));
    QCOMPARE(env->master_port, 0);
    QVERIFY(env->describe().find("/tmp/run/.rendezvous") != std::string::npos);
  }

  void runIdNamespacesTheRendezvous() {
    auto env = parse(varsFrom(QStringLiteral("RANK=0 WORLD_SIZE=2 MASTER_ADDR=a MASTER_PORT=5 WB_RUN_ID=run-42")));
    QVERIFY(env.ok());
    QCOMPARE(QString::fromStdString(env->run_id), QStringLiteral("run-42"));
    QCOMPARE(QString::fromStdString(env->master_addr), QStringLiteral("a"));
    QCOMPARE(env->master_port, 5);
  }

  void invalid_data() {
    QTest::addColumn<QString>("vars");
    QTest::addColumn<QString>("names");  // the variable the message must name
    QTest::newRow("rank without world size") << QStringLiteral("RANK=0") << QStringLiteral("WORLD_SIZE");
    QTest::newRow("world size without rank") << QStringLiteral("WORLD_SIZE=2") << QStringLiteral("RANK");
    QTest::newRow("rank not a number")
        << QStringLiteral("RANK=one WORLD_SIZE=2 MASTER_ADDR=a MASTER_PORT=5") << QStringLiteral("RANK='one'");
    QTest::newRow("rank out of range")
        << QStringLiteral("RANK=2 WORLD_SIZE=2 MASTER_ADDR=a MASTER_PORT=5") << QStringLiteral("RANK=2");
    QTest::newRow("world size 0") << QStringLiteral("RANK=0 WORLD_SIZE=0") << QStringLiteral("WORLD_SIZE=0");
    QTest::newRow("no master addr") << QStringLiteral("RANK=0 WORLD_SIZE=2 MASTER_PORT=5") << QStringLiteral("MASTER_ADDR");
    QTest::newRow("no master port") << QStringLiteral("RANK=0 WORLD_SIZE=2 MASTER_ADDR=a") << QStringLiteral("MASTER_PORT");
    QTest::newRow("port out of range")
        << QStringLiteral("RANK=0 WORLD_SIZE=2 MASTER_ADDR=a MASTER_PORT=70000") << QStringLiteral("MASTER_PORT=70000");
    QTest::newRow("slurm without master addr")
        << QStringLiteral("SLURM_PROCID=0 SLURM_NTASKS=2") << QStringLiteral("MASTER_ADDR");
    QTest::newRow("bad local rank")
        << QStringLiteral("RANK=0 WORLD_SIZE=2 LOCAL_RANK=-1 MASTER_ADDR=a MASTER_PORT=5") << QStringLiteral("LOCAL_RANK");
  }
  void invalid() {
    QFETCH(QString, vars);
    QFETCH(QString, names);
    auto env = parse(varsFrom(vars));
    QVERIFY(!env.ok());
    QCOMPARE(int(env.error().code), int(wb::Errc::Distributed));
    const QString message = QString::fromStdString(env.error().message);
    QVERIFY2(message.contains(names), qPrintable(message));
  }

  // srun sets SLURM_STEP_TASKS_PER_NODE ("2", "2(x2)", "3,2"); --ntasks-per-node's variable wins.
  void slurmTasksPerNode() {
    const std::string base = "SLURM_PROCID=1 SLURM_NTASKS=4 MASTER_ADDR=a MASTER_PORT=5 ";
    QCOMPARE(parse(varsFrom(QString::fromStdString(base + "SLURM_STEP_TASKS_PER_NODE=2(x2)")))->local_world_size, 2);
    QCOMPARE(parse(varsFrom(QString::fromStdString(base + "SLURM_STEP_TASKS_PER_NODE=3,1")))->local_world_size, 3);
    QCOMPARE(parse(varsFrom(QString::fromStdString(base + "SLURM_NTASKS_PER_NODE=1 SLURM_STEP_TASKS_PER_NODE=2(x2)")))
                 ->local_world_size, 1);
    QCOMPARE(parse(varsFrom(QString::fromStdString(base)))->local_world_size, 4);
  }

  // Slurm's ending in words, from scontrol's own lines (as slurmctld 22.05 writes them while the
  // job's processes are being stopped, and after).
  void slurmEndingWords_data() {
    QTest::addColumn<QString>("scontrol");
    QTest::addColumn<QString>("says");
    QTest::newRow("time limit, while completing")
        << QStringLiteral("JobId=4 JobName=t.sh JobState=COMPLETING Reason=TimeLimit Dependency=(null) TimeLimit=00:01:00")
        << QStringLiteral("time limit 00:01:00");
    QTest::newRow("time limit, after") << QStringLiteral("JobId=4 JobState=TIMEOUT Reason=TimeLimit TimeLimit=00:01:00")
                                       << QStringLiteral("time limit");
    QTest::newRow("scancel") << QStringLiteral("JobId=3 JobState=COMPLETING Reason=None TimeLimit=UNLIMITED")
                             << QStringLiteral("Slurm cancelled job 3");
    QTest::newRow("node failure") << QStringLiteral("JobId=5 JobState=NODE_FAIL Reason=NodeDown")
                                  << QStringLiteral("a node failed");
    QTest::newRow("preempted") << QStringLiteral("JobId=5 JobState=PREEMPTED Reason=None")
                               << QStringLiteral("preempted");
    QTest::newRow("not Slurm's signal") << QStringLiteral("JobId=6 JobState=RUNNING Reason=None")
                                        << QStringLiteral("did not end Slurm job 6");
  }
  void slurmEndingWords() {
    QFETCH(QString, scontrol);
    QFETCH(QString, says);
    const std::string job = scontrol.section(QLatin1Char(' '), 0, 0).mid(6).toStdString();
    const QString words = QString::fromStdString(wb::parallel::slurmEndingFrom(job, scontrol.toStdString()));
    QVERIFY2(words.contains(says), qPrintable(words));
    QVERIFY2(words.contains(QStringLiteral("JobState=")), qPrintable(words));  // Slurm's own words quoted
  }

  void slurmJobFromTheEnvironment() {
    QCOMPARE(wb::parallel::slurmJobOf([](const char*) -> const char* { return nullptr; }), std::string());
    const Vars v = varsFrom(QStringLiteral("SLURM_JOB_ID=12 SLURM_STEP_ID=0"));
    auto look = [&](const char* n) -> const char* { auto it = v.find(n); return it == v.end() ? nullptr : it->second.c_str(); };
    QCOMPARE(wb::parallel::slurmJobOf(look), std::string("12.0"));
    const Vars odd = varsFrom(QStringLiteral("SLURM_JOB_ID=12;rm"));
    QCOMPARE(wb::parallel::slurmJobOf([&](const char* n) -> const char* { auto it = odd.find(n); return it == odd.end() ? nullptr : it->second.c_str(); }),
             std::string());
  }

  void freePortIsBindable() {
    auto port = wb::parallel::findFreePort();
    QVERIFY(port.ok());
    QVERIFY(*port > 0 && *port < 65536);
  }
};

QTEST_APPLESS_MAIN(TestParallelEnv)
#include "test_parallel_env.moc"
