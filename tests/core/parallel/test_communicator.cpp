// Communicator: rendezvous over a real TCPStore on 127.0.0.1 between real processes (this binary
// re-executed once per rank), the metric/broadcast helpers, and the failures that must end in a
// clear error instead of a hang: port in use, world-size mismatch, missing rank, duplicate rank,
// a peer that exits and a peer that stops answering.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include <torch/torch.h>

#include "parallel_test_util.h"
#include "wb/parallel/c10d_compat.h"
#include "wb/parallel/communicator.h"

using namespace std::chrono_literals;
using wb::parallel::Communicator;

namespace {

int fail(const std::string& what) {
  std::fprintf(stderr, "FAIL: %s\n", what.c_str());
  return 4;
}

int helpers(Communicator& comm) {
  const int r = comm.rank();
  auto a = torch::full({3}, static_cast<float>(r + 1));
  auto b = torch::full({2}, static_cast<int64_t>(10 * (r + 1)), torch::kLong);
  if (auto st = comm.broadcast({a, b}, 0); !st) return fail(st.error().message);
  if (!torch::equal(a, torch::full({3}, 1.0f)) || !torch::equal(b, torch::full({2}, int64_t{10}, torch::kLong)))
    return fail("broadcast from rank 0 did not reach every rank");
  auto c = torch::full({2}, static_cast<double>(r + 5), torch::kDouble);
  if (auto st = comm.broadcast({c}, 1); !st) return fail(st.error().message);
  if (!torch::equal(c, torch::full({2}, 6.0, torch::kDouble))) return fail("broadcast from rank 1");

  const std::vector<double> mine{double(r + 1), double(2 * (r + 1))};
  struct Case { wb::parallel::ReduceOp op; std::vector<double> want; const char* name; };
  for (const Case& k : {Case{wb::parallel::ReduceOp::Sum, {3, 6}, "sum"}, Case{wb::parallel::ReduceOp::Mean, {1.5, 3}, "mean"},
                        Case{wb::parallel::ReduceOp::Max, {2, 4}, "max"}, Case{wb::parallel::ReduceOp::Min, {1, 2}, "min"}}) {
    auto got = comm.allReduce(mine, k.op);
    if (!got) return fail(got.error().message);
    if (*got != k.want) return fail(std::string("allReduce ") + k.name);
  }
  if (auto st = comm.barrier(); !st) return fail(st.error().message);
  auto bytes = comm.allGatherBytes(std::string(static_cast<size_t>(r + 1), static_cast<char>('a' + r)));
  if (!bytes) return fail(bytes.error().message);
  if (*bytes != std::vector<std::string>{"a", "bb"}) return fail("allGatherBytes");
  std::printf("helpers_ok=1\n");
  return 0;
}

// Stands in for torchrun's agent: hosts the TCPStore on MASTER_PORT until both ranks are done.
int agent() {
  c10d::TCPStoreOptions o;
  o.port = static_cast<std::uint16_t>(std::stoi(wbtest::workerEnv("MASTER_PORT")));
  o.isServer = true;
  o.waitWorkers = false;
  auto store = wb::parallel::compat::makeTCPStore("127.0.0.1", o);  // the server this LibTorch has (libuv or not)
  const QString dir = QString::fromStdString(wbtest::workerEnv("WB_DIST_WORKDIR"));
  for (int i = 0; i < 1200; ++i) {
    if (QFile::exists(dir + QStringLiteral("/done-0")) && QFile::exists(dir + QStringLiteral("/done-1"))) return 0;
    std::this_thread::sleep_for(50ms);
  }
  return fail("agent: the ranks never finished");
}

int scenario(const std::string& name) {
  if (name == "agent") return agent();
  at::set_num_threads(1);
  auto env = wb::parallel::DistEnv::fromEnvironment();
  if (!env) return fail(env.error().message);
  wb::parallel::CommOptions o;
  o.timeout = std::chrono::milliseconds(std::stoi(wbtest::workerEnv("WB_TEST_TIMEOUT_MS", "10000")));
  o.rendezvous_timeout = std::chrono::milliseconds(std::stoi(wbtest::workerEnv("WB_TEST_RDV_MS", "10000")));
  auto comm = Communicator::create(*env, o);
  if (!comm) {
    std::fprintf(stderr, "ERROR: %s\n", comm.error().message.c_str());
    return 3;
  }
  std::printf("joined=1\n");
  std::fflush(stdout);
  if (name == "helpers") {
    const int rc = helpers(**comm);
    QFile(QString::fromStdString(wbtest::workerEnv("WB_DIST_WORKDIR")) + QStringLiteral("/done-%1").arg(env->rank))
        .open(QIODevice::WriteOnly);
    return rc;
  }

  const std::string action = wbtest::workerEnv("WB_TEST_ACTION", "none");
  // After a barrier: rank 0's group is up too (Gloo 2.x may still be connecting it when this
  // rank's own is done), so the peer is gone before the collective, not during the set-up.
  if (action == "exit") return (*comm)->barrier().ok() ? 0 : 3;
  if (action == "sleep") {
    std::this_thread::sleep_for(o.timeout + 3s);
    return 0;
  }
  auto sum = (*comm)->allReduce({1.0}, wb::parallel::ReduceOp::Sum);
  if (!sum) {
    std::fprintf(stderr, "ERROR: %s\n", sum.error().message.c_str());
    return 3;
  }
  std::printf("sum=%g\n", (*sum)[0]);
  return 0;
}

constexpr int kAnyProc = -1;    // checkProc: at least one process says it
constexpr int kEveryProc = -2;  // checkProc: every process says it

// Holds a listening socket on 127.0.0.1:port for its lifetime.
struct PortHolder {
  int fd = -1;
  explicit PortHolder(int port) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port));
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 || ::listen(fd, 4) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ~PortHolder() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

class TestCommunicator : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void localCommunicatorIsIdentity() {
    auto comm = Communicator::create(wb::parallel::DistEnv{});
    QVERIFY(comm.ok());
    QVERIFY(!(*comm)->hasGroup());
    QCOMPARE((*comm)->worldSize(), 1);
    auto t = torch::ones({2});
    QVERIFY((*comm)->broadcast({t}).ok());
    auto mean = (*comm)->allReduce({2.0, 4.0}, wb::parallel::ReduceOp::Mean);
    QVERIFY(mean.ok());
    QCOMPARE((*mean)[1], 4.0);
    QVERIFY((*comm)->barrier().ok());
  }

  void ncclWithoutCudaBuildIsAClearError() {
    if (wb::parallel::ncclCompiled()) QSKIP("this build has NCCL; test_communicator_gpu covers it");
    wb::parallel::CommOptions o;
    o.backend = wb::parallel::Backend::Nccl;
    auto comm = Communicator::create(wb::parallel::DistEnv::local(0, 2, 1), o);
    QVERIFY(!comm.ok());
    QVERIFY(QString::fromStdString(comm.error().message).contains(QStringLiteral("nccl is not available")));
    QVERIFY(!wb::parallel::parseBackend("mpi").ok());
    QVERIFY(wb::parallel::parseBackend("gloo").ok());
  }

  void helpersAcrossTwoRanks() {
    QTemporaryDir dir;
    auto port = wb::parallel::findFreePort();
    QVERIFY(port.ok());
    auto runs = wbtest::runRanks(QStringLiteral("helpers"), {wbtest::rankEnv(0, 2, *port), wbtest::rankEnv(1, 2, *port)},
                                 60000, dir.path());
    for (const auto& r : runs) {
      QVERIFY2(r.exit_code == 0, qPrintable(wbtest::describe(runs)));
      QVERIFY2(r.out.contains(QStringLiteral("helpers_ok=1")), qPrintable(wbtest::describe(runs)));
    }
  }

  // torchrun >= 2.x hosts the store in its agent and tells the ranks so: rank 0 must not host it.
  void helpersThroughTorchrunAgentStore() {
    QTemporaryDir dir;
    auto port = wb::parallel::findFreePort();
    QVERIFY(port.ok());
    const wbtest::Env viaAgent{{QStringLiteral("TORCHELASTIC_USE_AGENT_STORE"), QStringLiteral("True")},
                               {QStringLiteral("TORCHELASTIC_RUN_ID"), QStringLiteral("job1")}};
    auto runs = wbtest::runRanks(
        QStringLiteral("helpers"),
        {wbtest::merged(wbtest::rankEnv(0, 2, *port), {{QStringLiteral("WB_DIST_SCENARIO"), QStringLiteral("agent")}}),
         wbtest::merged(wbtest::rankEnv(0, 2, *port), viaAgent), wbtest::merged(wbtest::rankEnv(1, 2, *port), viaAgent)},
        60000, dir.path());
    for (const auto& r : runs) QVERIFY2(r.exit_code == 0, qPrintable(wbtest::describe(runs)));
    QVERIFY2(runs[1].out.contains(QStringLiteral("helpers_ok=1")), qPrintable(wbtest::describe(runs)));
  }

  // procs: one entry per process, "rank/world" plus optional ":KEY=VALUE,..."; %PORT% in
  // `expect` is the rendezvous port.
  void failsClearlyAndNeverHangs_data() {
    QTest::addColumn<QString>("procs");
    QTest::addColumn<int>("rdvMs");
    QTest::addColumn<int>("timeoutMs");
    QTest::addColumn<bool>("holdPort");
    QTest::addColumn<int>("checkProc");
    QTest::addColumn<QString>("expect");
    QTest::newRow("port in use") << QStringLiteral("0/2") << 3000 << 3000 << true << 0
                                 << QStringLiteral("MASTER_PORT=%PORT% is already in use");
    QTest::newRow("world size mismatch") << QStringLiteral("0/2 1/3") << 5000 << 5000 << false << kEveryProc
                                         << QStringLiteral("WORLD_SIZE mismatch: rank ");
    QTest::newRow("missing rank") << QStringLiteral("0/2") << 2000 << 2000 << false << 0
                                  << QStringLiteral("rank(s) 1 did not join the rendezvous at 127.0.0.1:%PORT%");
    QTest::newRow("rank 0 never started") << QStringLiteral("1/2") << 2000 << 2000 << false << 0
                                          << QStringLiteral("rank 1 could not reach rank 0's rendezvous at 127.0.0.1:%PORT%");
    QTest::newRow("duplicate rank") << QStringLiteral("0/3 1/3 1/3") << 3000 << 3000 << false << kAnyProc
                                    << QStringLiteral("two processes were started with rank 1");
    QTest::newRow("peer exits before the collective") << QStringLiteral("0/2 1/2:WB_TEST_ACTION=exit") << 10000 << 5000
                                                      << false << 0 << QStringLiteral("rank 0: all-reduce of metrics failed");
    QTest::newRow("peer stops answering") << QStringLiteral("0/2 1/2:WB_TEST_ACTION=sleep") << 10000 << 2000 << false << 0
                                          << QStringLiteral("Timed out waiting 2000ms");  // Gloo's words
  }
  void failsClearlyAndNeverHangs() {
    QFETCH(QString, procs);
    QFETCH(int, rdvMs);
    QFETCH(int, timeoutMs);
    QFETCH(bool, holdPort);
    QFETCH(int, checkProc);
    QFETCH(QString, expect);
    auto port = wb::parallel::findFreePort();
    QVERIFY(port.ok());
    std::unique_ptr<PortHolder> holder;
    if (holdPort) {
      holder = std::make_unique<PortHolder>(*port);
      QVERIFY(holder->fd >= 0);
    }
    std::vector<wbtest::Env> envs;
    for (const QString& spec : procs.split(QLatin1Char(' '))) {
      const auto parts = spec.split(QLatin1Char(':'));
      const auto rw = parts[0].split(QLatin1Char('/'));
      auto env = wbtest::rankEnv(rw[0].toInt(), rw[1].toInt(), *port);
      env[QStringLiteral("WB_TEST_RDV_MS")] = QString::number(rdvMs);
      env[QStringLiteral("WB_TEST_TIMEOUT_MS")] = QString::number(timeoutMs);
      for (const QString& kv : parts.value(1).split(QLatin1Char(','), Qt::SkipEmptyParts))
        env[kv.section(QLatin1Char('='), 0, 0)] = kv.section(QLatin1Char('='), 1);
      envs.push_back(env);
    }
    QTemporaryDir dir;
    // Generous limit: far above the configured timeouts, far below a hang.
    const int limit = rdvMs + timeoutMs + 20000;
    auto runs = wbtest::runRanks(QStringLiteral("rendezvous"), envs, limit, dir.path());
    const QString want = QString(expect).replace(QStringLiteral("%PORT%"), QString::number(*port));
    int found = 0;
    for (size_t i = 0; i < runs.size(); ++i) {
      QVERIFY2(!runs[i].timed_out, qPrintable(wbtest::describe(runs)));
      if (checkProc >= 0 && int(i) != checkProc) continue;
      if (runs[i].err.contains(want)) {
        ++found;
        QVERIFY2(runs[i].exit_code == 3, qPrintable(wbtest::describe(runs)));
      }
    }
    const bool ok = checkProc == kEveryProc ? found == int(runs.size()) : found > 0;
    QVERIFY2(ok, qPrintable(QStringLiteral("expected \"%1\" in:\n%2").arg(want, wbtest::describe(runs))));
  }
};

WB_DIST_TEST_MAIN(TestCommunicator, scenario)
#include "test_communicator.moc"
