// DataParallel: DDP and ZeRO-1/2 across two real processes on loopback give the parameters of one
// process training on the global batch; optimiser state is sharded (½ per rank, even though one
// tensor holds most of the parameters, so ZeRO splits it between the ranks) and consolidates into
// one unsharded state that resumes unsharded, and loads back into shards.
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <sstream>

#include <torch/torch.h>

#include "parallel_test_util.h"
#include "wb/parallel/data_parallel.h"

using wb::parallel::DataParallel;
using wb::parallel::Sharding;

namespace {

constexpr uint64_t kSeed = 7;
constexpr int kGlobalBatch = 32;

// Lopsided like real models (mnist-cnn's fc1 holds 98 % of its parameters): the 400x48 layer
// holds 68 %, so sharding whole tensors cannot give each rank half.
// In float64: Adam moves every element by about lr whatever its gradient's size, so in fp32 the
// summation-order differences of two half-batch means vs one mean (~1e-8) turn into 1e-4 on
// elements whose gradient is nearly zero, hiding what the comparison is about.
constexpr auto kDtype = torch::kDouble;
constexpr int64_t kElementBytes = 8;

torch::nn::Sequential makeNet() {
  torch::nn::Sequential net(torch::nn::Linear(20, 400), torch::nn::ReLU(), torch::nn::Linear(400, 48), torch::nn::ReLU(),
                            torch::nn::Linear(48, 10));
  net->to(kDtype);
  return net;
}

wb::parallel::OptimizerFactory factoryFor(const std::string& name) {
  return [name](std::vector<torch::Tensor> p) -> wb::Result<std::unique_ptr<torch::optim::Optimizer>> {
    if (name == "adam")
      return std::unique_ptr<torch::optim::Optimizer>(
          std::make_unique<torch::optim::Adam>(std::move(p), torch::optim::AdamOptions(1e-2)));
    return std::unique_ptr<torch::optim::Optimizer>(
        std::make_unique<torch::optim::SGD>(std::move(p), torch::optim::SGDOptions(0.1).momentum(0.9)));
  };
}

// The global batch of step s (same on every rank); rank r trains on rows [r*b, (r+1)*b).
std::pair<torch::Tensor, torch::Tensor> globalBatch(int s) {
  torch::manual_seed(5000 + s);
  auto x = torch::randn({kGlobalBatch, 20}, kDtype);
  auto y = torch::randint(0, 10, {kGlobalBatch}, torch::kLong);
  return {x, y};
}

torch::Tensor lossOn(torch::nn::Sequential& net, int s, int rank, int world) {
  auto [x, y] = globalBatch(s);
  const int b = kGlobalBatch / world;
  return torch::nn::functional::cross_entropy(net->forward(x.narrow(0, rank * b, b)), y.narrow(0, rank * b, b));
}

// One process on the global batch: the reference every data-parallel run must match.
struct Reference {
  torch::nn::Sequential net = makeNet();
  std::unique_ptr<torch::optim::Optimizer> opt;
  explicit Reference(const std::string& optimizer, uint64_t seed = kSeed) {
    torch::manual_seed(seed);
    net = makeNet();
    opt = factoryFor(optimizer)(net->parameters()).value();
  }
  void steps(int from, int to) {
    for (int s = from; s < to; ++s) {
      opt->zero_grad();
      lossOn(net, s, 0, 1).backward();
      opt->step();
    }
  }
};

std::vector<int64_t> numels(const std::vector<torch::Tensor>& params) {
  std::vector<int64_t> n;
  for (const auto& p : params) n.push_back(p.numel());
  return n;
}

double maxDiff(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, (a[i] - b[i]).abs().max().item<double>());
  return m;
}

std::vector<torch::Tensor> detached(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> out;
  for (const auto& p : params) out.push_back(p.detach().clone());
  return out;
}

// ---- worker (one rank) --------------------------------------------------------------------

int fail(const std::string& what) {
  std::fprintf(stderr, "FAIL: %s\n", what.c_str());
  return 4;
}

int trainStep(torch::nn::Sequential& net, DataParallel& dp, int s, int rank, int world, bool report) {
  dp.zeroGrad();
  lossOn(net, s, rank, world).backward();
  if (auto st = dp.finishGradients(); !st) return fail(st.error().message);
  if (report) {
    int held = 0, owned = 0;
    int64_t ownedNumel = 0, nonzeroOutside = 0;
    const auto params = net->parameters();
    for (size_t i = 0; i < params.size(); ++i) {
      held += params[i].grad().defined() ? 1 : 0;
      owned += dp.ownedNumel(i) > 0 ? 1 : 0;
      ownedNumel += dp.ownedNumel(i);
      if (params[i].grad().defined()) nonzeroOutside += params[i].grad().ne(0).sum().item<int64_t>();
    }
    // Gradient elements this rank holds beyond its range (zero2: none; else all but its range).
    const auto layout = wb::parallel::partitionFlat(numels(params), world);
    for (const auto& piece : layout[static_cast<size_t>(rank)])
      nonzeroOutside -= params[piece.param].grad().reshape(-1).narrow(0, piece.offset, piece.numel).ne(0).sum().item<int64_t>();
    std::printf("grads_held=%d\nowned=%d\nowned_numel=%lld\nnonzero_grads_outside=%lld\n", held, owned,
                static_cast<long long>(ownedNumel), static_cast<long long>(nonzeroOutside));
  }
  if (auto st = dp.step(); !st) return fail(st.error().message);
  if (report) {
    const auto c = dp.lastStats();
    std::printf("bytes_reduced=%lld\nbytes_gathered=%lld\nbuckets=%d\nbuckets_in_backward=%d\noverlap=%g\ncomm_ms=%g\n",
                static_cast<long long>(c.bytes_reduced), static_cast<long long>(c.bytes_gathered), c.buckets,
                c.buckets_in_backward, c.overlap, c.comm_ms);
  }
  return 0;
}

// Gradient accumulation: each rank's part of the global batch in kMicro micro-batches, the
// gradients synced only on the last one; prints the collectives launched and the buckets per step.
constexpr int kMicro = 4, kAccumulatedSteps = 3;

int accumulateScenario() {
  at::set_num_threads(1);
  auto comm = wbtest::joinFromEnvironment();
  if (!comm) return fail(comm.error().message);
  const int rank = (*comm)->rank(), world = (*comm)->worldSize();
  torch::manual_seed(kSeed + 100 * static_cast<uint64_t>(rank));
  auto net = makeNet();
  wb::parallel::DataParallelOptions o;
  o.bucket_bytes = 8 * 1024;
  o.first_bucket_bytes = 2 * 1024;
  auto dp = DataParallel::create(**comm, net->parameters(), factoryFor("sgd"), o);
  if (!dp) return fail(dp.error().message);
  const int perRank = kGlobalBatch / world, per = perRank / kMicro;
  for (int s = 0; s < kAccumulatedSteps; ++s) {
    (*dp)->zeroGrad();
    auto [x, y] = globalBatch(s);
    for (int m = 0; m < kMicro; ++m) {
      (*dp)->setGradientSync(m == kMicro - 1);
      const int from = rank * perRank + m * per;
      auto loss = torch::nn::functional::cross_entropy(net->forward(x.narrow(0, from, per)), y.narrow(0, from, per));
      (loss / kMicro).backward();
    }
    if (auto st = (*dp)->finishGradients(); !st) return fail(st.error().message);
    if (auto st = (*dp)->step(); !st) return fail(st.error().message);
  }
  torch::save(detached(net->parameters()), wbtest::workerEnv("WB_DIST_WORKDIR") + "/accum" + std::to_string(rank) + ".pt");
  std::printf("reductions=%lld\nbuckets=%d\n", static_cast<long long>((*dp)->gradientReductions()), (*dp)->numBuckets());
  return 0;
}

int trainScenario(const std::string& scenario) {
  if (scenario == "accumulate") return accumulateScenario();
  at::set_num_threads(1);
  auto comm = wbtest::joinFromEnvironment();
  if (!comm) return fail(comm.error().message);
  const int rank = (*comm)->rank(), world = (*comm)->worldSize();
  const std::string dir = wbtest::workerEnv("WB_DIST_WORKDIR");
  const std::string opt = wbtest::workerEnv("WB_TEST_OPT", "sgd");
  const int k = std::stoi(wbtest::workerEnv("WB_TEST_STEPS", "5"));
  const int j = std::stoi(wbtest::workerEnv("WB_TEST_STEPS2", "0"));
  auto sharding = wb::parallel::parseSharding(wbtest::workerEnv("WB_TEST_SHARDING", "off"));
  auto sharding2 = wb::parallel::parseSharding(wbtest::workerEnv("WB_TEST_SHARDING2", "off"));
  if (!sharding || !sharding2) return fail("bad sharding");

  torch::manual_seed(kSeed + 100 * static_cast<uint64_t>(rank));  // differs per rank: create() must broadcast rank 0's
  auto net = makeNet();
  wb::parallel::DataParallelOptions o;
  o.sharding = *sharding;
  o.bucket_bytes = 8 * 1024;  // several buckets for this small net
  o.first_bucket_bytes = 2 * 1024;
  o.emulate_reduce_scatter = wbtest::workerEnv("WB_TEST_RS_LAYOUT", "0") == "1";
  auto dp = DataParallel::create(**comm, net->parameters(), factoryFor(opt), o);
  if (!dp) return fail(dp.error().message);
  for (int s = 0; s < k; ++s)
    if (int rc = trainStep(net, **dp, s, rank, world, s == k - 1)) return rc;
  torch::save(detached(net->parameters()), dir + "/rank" + std::to_string(rank) + "-k.pt");
  std::printf("state_bytes=%lld\ngradient_memory_saved=%d\nsharding=%s\n",
              static_cast<long long>((*dp)->optimizerStateBytes()), (*dp)->gradientMemorySaved() ? 1 : 0,
              wb::parallel::shardingName((*dp)->sharding()));

  auto consolidated = (*dp)->consolidatedOptimizerState();
  if (!consolidated) return fail(consolidated.error().message);
  if (rank == 0) std::ofstream(dir + "/consolidated.bin", std::ios::binary) << *consolidated;
  if (j == 0) return 0;

  // Resume from the consolidated state under another sharding mode.
  dp->reset();
  o.sharding = *sharding2;
  auto dp2 = DataParallel::create(**comm, net->parameters(), factoryFor(opt), o);
  if (!dp2) return fail(dp2.error().message);
  if (auto st = (*dp2)->loadOptimizerState(*consolidated); !st) return fail(st.error().message);
  for (int s = k; s < k + j; ++s)
    if (int rc = trainStep(net, **dp2, s, rank, world, false)) return rc;
  torch::save(detached(net->parameters()), dir + "/rank" + std::to_string(rank) + "-final.pt");
  return 0;
}

std::vector<torch::Tensor> loadTensors(const QString& path) {
  std::vector<torch::Tensor> t;
  torch::load(t, path.toStdString());
  return t;
}

std::string readFile(const QString& path) {
  std::ifstream in(path.toStdString(), std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

}  // namespace

class TestDataParallel : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { at::set_num_threads(1); }

  void partitionCutsTheFlatParametersIntoEqualRanges() {
    // mnist-cnn's tensors: fc1.weight alone is 98 % of the elements, and it is split.
    const std::vector<int64_t> cnn{288, 32, 18432, 64, 1179648, 128, 1280, 10};
    const auto two = wb::parallel::partitionFlat(cnn, 2);
    QCOMPARE(two.size(), size_t{2});
    QCOMPARE(two[0].size(), size_t{5});  // conv1 w/b, conv2 w/b, the first part of fc1.weight
    QCOMPARE(two[0].back().param, size_t{4});
    QCOMPARE(two[0].back().offset, int64_t{0});
    QCOMPARE(two[1].front().param, size_t{4});
    QCOMPARE(two[1].front().offset, two[0].back().numel);
    torch::manual_seed(3);
    auto random = torch::randint(0, 10000, {40}, torch::kLong);
    std::vector<int64_t> rs(random.data_ptr<int64_t>(), random.data_ptr<int64_t>() + 40);
    for (const auto& sizes : {cnn, rs, std::vector<int64_t>{3, 0, 2}}) {
      const int64_t total = std::accumulate(sizes.begin(), sizes.end(), int64_t{0});
      for (int world : {1, 2, 3, 8}) {
        const auto parts = wb::parallel::partitionFlat(sizes, world);
        QCOMPARE(int(parts.size()), world);
        QCOMPARE(wb::parallel::partitionFlat(sizes, world).back().size(), parts.back().size());  // deterministic
        // Every element exactly once, in order; each rank holds ceil(total / world) or the rest.
        std::vector<int64_t> next(sizes.size(), 0);
        const int64_t chunk = (total + world - 1) / world;
        for (int r = 0; r < world; ++r) {
          int64_t n = 0;
          for (const auto& piece : parts[r]) {
            QVERIFY(piece.numel > 0);
            QCOMPARE(piece.offset, next[piece.param]);
            next[piece.param] += piece.numel;
            n += piece.numel;
          }
          QCOMPARE(n, std::clamp<int64_t>(total - r * chunk, 0, chunk));
        }
        QCOMPARE(next, sizes);
      }
    }
  }

  void optimizerStateRoundTrip() {
    Reference ref("adam");
    ref.steps(0, 2);
    const std::string bytes = wb::parallel::saveOptimizerState(*ref.opt);
    int64_t numel = 0;
    for (const auto& p : ref.net->parameters()) numel += p.numel();
    QCOMPARE(wb::parallel::optimizerStateBytes(*ref.opt), 2 * kElementBytes * numel);  // exp_avg + exp_avg_sq

    Reference copy("adam", kSeed + 1);
    QVERIFY(wb::parallel::loadOptimizerState(*copy.opt, bytes).ok());
    {
      torch::NoGradGuard g;
      auto src = ref.net->parameters(), dst = copy.net->parameters();
      for (size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
    }
    ref.steps(2, 4);
    copy.steps(2, 4);
    QVERIFY(maxDiff(ref.net->parameters(), copy.net->parameters()) == 0.0);

    torch::optim::Adam other(std::vector<torch::Tensor>{torch::zeros({3}, torch::requires_grad())});
    auto st = wb::parallel::loadOptimizerState(other, bytes);
    QVERIFY(!st.ok());
    QCOMPARE(int(st.error().code), int(wb::Errc::Checkpoint));
  }

  void localCommunicatorTrainsLikeOneProcess() {
    auto comm = wb::parallel::Communicator::local();
    torch::manual_seed(kSeed);
    auto net = makeNet();
    wb::parallel::DataParallelOptions o;
    o.sharding = Sharding::Zero1;
    auto dp = DataParallel::create(*comm, net->parameters(), factoryFor("adam"), o);
    QVERIFY(dp.ok());
    for (int s = 0; s < 3; ++s) QCOMPARE(trainStep(net, **dp, s, 0, 1, false), 0);
    Reference ref("adam");
    ref.steps(0, 3);
    QVERIFY(maxDiff(net->parameters(), ref.net->parameters()) == 0.0);
    QCOMPARE((*dp)->optimizerStateBytes(), wb::parallel::optimizerStateBytes(*ref.opt));

    // The Optimizer-shaped adapter: a loop that only knows torch::optim::Optimizer trains the same,
    // and the lr it sets reaches the shard's optimiser.
    auto view = (*dp)->steppingOptimizer();
    QVERIFY(view.ok());
    for (auto& g : (*view)->param_groups()) g.options().set_lr(5e-3);
    for (int s = 3; s < 5; ++s) {
      (*view)->zero_grad();
      lossOn(net, s, 0, 1).backward();
      QVERIFY((*dp)->finishGradients().ok());
      (*view)->step();
    }
    for (auto& g : ref.opt->param_groups()) g.options().set_lr(5e-3);
    ref.steps(3, 5);
    QVERIFY(maxDiff(net->parameters(), ref.net->parameters()) == 0.0);
    QCOMPARE((*dp)->optimizer()->param_groups()[0].options().get_lr(), 5e-3);
  }

  // N micro-batches of B/N per rank, summed, match one step on the whole batch, and only the last
  // backward of each step reduces: N - 1 of every N backwards launch no collective.
  void accumulationMatchesTheWholeBatchAndReducesOnce() {
    QTemporaryDir dir;
    auto port = wb::parallel::findFreePort();
    QVERIFY(port.ok());
    auto runs = wbtest::runRanks(QStringLiteral("accumulate"), {wbtest::rankEnv(0, 2, *port), wbtest::rankEnv(1, 2, *port)},
                                 120000, dir.path());
    for (const auto& r : runs) QVERIFY2(r.exit_code == 0, qPrintable(wbtest::describe(runs)));
    Reference ref("sgd");
    ref.steps(0, kAccumulatedSteps);
    for (int r = 0; r < 2; ++r) {
      const auto got = loadTensors(dir.path() + QStringLiteral("/accum%1.pt").arg(r));
      const double diff = maxDiff(got, ref.net->parameters());
      QVERIFY2(diff < 1e-10, qPrintable(QStringLiteral("rank %1: max |accumulated - whole batch| = %2").arg(r).arg(diff)));
      auto kv = wbtest::keyValues(runs[r].out);
      const int buckets = kv[QStringLiteral("buckets")].toInt();
      QVERIFY(buckets > 1);
      QCOMPARE(kv[QStringLiteral("reductions")].toLongLong(), int64_t{kAccumulatedSteps} * buckets);
    }
  }

  void twoRanksMatchOneProcess_data() {
    QTest::addColumn<QString>("sharding");
    QTest::addColumn<QString>("optimizer");
    QTest::addColumn<QString>("resumeAs");  // sharding of the run resumed from the consolidated state
    QTest::addColumn<bool>("rsLayout");     // zero2's NCCL bucket layout, reduce-scatter emulated on Gloo
    QTest::newRow("ddp sgd") << QStringLiteral("off") << QStringLiteral("sgd") << QString() << false;
    QTest::newRow("ddp adam, resumed as zero1") << QStringLiteral("off") << QStringLiteral("adam") << QStringLiteral("zero1")
                                                << false;
    QTest::newRow("zero1 adam, resumed as zero2") << QStringLiteral("zero1") << QStringLiteral("adam")
                                                  << QStringLiteral("zero2") << false;
    QTest::newRow("zero2 adam, resumed unsharded") << QStringLiteral("zero2") << QStringLiteral("adam") << QStringLiteral("off")
                                                   << false;
    QTest::newRow("zero2 sgd, resumed as zero1") << QStringLiteral("zero2") << QStringLiteral("sgd") << QStringLiteral("zero1")
                                                 << false;
    QTest::newRow("zero2 adam, reduce-scatter layout") << QStringLiteral("zero2") << QStringLiteral("adam") << QString()
                                                       << true;
  }
  void twoRanksMatchOneProcess() {
    QFETCH(QString, sharding);
    QFETCH(QString, optimizer);
    QFETCH(QString, resumeAs);
    QFETCH(bool, rsLayout);
    constexpr int k = 5, j = 2;
    QTemporaryDir dir;
    auto port = wb::parallel::findFreePort();
    QVERIFY(port.ok());
    const wbtest::Env extra{{QStringLiteral("WB_TEST_SHARDING"), sharding},
                            {QStringLiteral("WB_TEST_OPT"), optimizer},
                            {QStringLiteral("WB_TEST_STEPS"), QString::number(k)},
                            {QStringLiteral("WB_TEST_RS_LAYOUT"), rsLayout ? QStringLiteral("1") : QStringLiteral("0")},
                            {QStringLiteral("WB_TEST_STEPS2"), QString::number(resumeAs.isEmpty() ? 0 : j)},
                            {QStringLiteral("WB_TEST_SHARDING2"), resumeAs.isEmpty() ? QStringLiteral("off") : resumeAs}};
    auto runs = wbtest::runRanks(QStringLiteral("train"),
                                 {wbtest::merged(wbtest::rankEnv(0, 2, *port), extra),
                                  wbtest::merged(wbtest::rankEnv(1, 2, *port), extra)},
                                 120000, dir.path());
    for (const auto& r : runs) QVERIFY2(r.exit_code == 0, qPrintable(wbtest::describe(runs)));

    Reference ref(optimizer.toStdString());
    ref.steps(0, k);
    const auto refK = detached(ref.net->parameters());
    const int64_t refStateBytes = wb::parallel::optimizerStateBytes(*ref.opt);

    // Parameters after k steps: identical across ranks, equal to one process on the global batch.
    auto p0 = loadTensors(dir.path() + QStringLiteral("/rank0-k.pt"));
    auto p1 = loadTensors(dir.path() + QStringLiteral("/rank1-k.pt"));
    QCOMPARE(p0.size(), refK.size());
    QCOMPARE(maxDiff(p0, p1), 0.0);
    const double diff = maxDiff(p0, refK);
    QVERIFY2(diff < 1e-5, qPrintable(QStringLiteral("max |dp - single| = %1").arg(diff)));

    // Gradient communication: every gradient byte once per step, bucketed, launched during backward.
    int64_t paramBytes = 0;
    for (const auto& p : refK) paramBytes += p.numel() * kElementBytes;
    const auto sizes = numels(refK);
    const int64_t totalNumel = std::accumulate(sizes.begin(), sizes.end(), int64_t{0});
    const int64_t chunk = (totalNumel + 1) / 2;
    for (int r = 0; r < 2; ++r) {
      auto kv = wbtest::keyValues(runs[r].out);
      // The reduce-scatter layout pads each bucket to world x its largest chunk.
      if (rsLayout) QVERIFY(kv[QStringLiteral("bytes_reduced")].toLongLong() >= paramBytes);
      else QCOMPARE(kv[QStringLiteral("bytes_reduced")].toLongLong(), paramBytes);
      const int buckets = kv[QStringLiteral("buckets")].toInt();
      QVERIFY(buckets > 1);
      QCOMPARE(kv[QStringLiteral("buckets_in_backward")].toInt(), buckets);
      const double overlap = kv[QStringLiteral("overlap")].toDouble();
      QVERIFY(overlap >= 0.0 && overlap <= 1.0);
      QCOMPARE(kv[QStringLiteral("gradient_memory_saved")], QStringLiteral("0"));  // Gloo: emulated

      const int64_t stateBytes = kv[QStringLiteral("state_bytes")].toLongLong();
      const int nParams = int(sizes.size());
      if (sharding == QStringLiteral("off")) {
        QCOMPARE(stateBytes, refStateBytes);
        QCOMPARE(kv[QStringLiteral("grads_held")].toInt(), nParams);
        QCOMPARE(kv[QStringLiteral("bytes_gathered")].toLongLong(), int64_t{0});
      } else {
        // Adam keeps 2 values per element, SGD with momentum 1: for this rank's half only.
        const int64_t perElement = (optimizer == QStringLiteral("adam") ? 2 : 1) * kElementBytes;
        const int64_t shardNumel = r == 0 ? chunk : totalNumel - chunk;
        QCOMPARE(kv[QStringLiteral("owned_numel")].toLongLong(), shardNumel);
        QCOMPARE(stateBytes, perElement * shardNumel);
        QVERIFY2(std::llabs(2 * stateBytes - refStateBytes) <= perElement,
                 qPrintable(QStringLiteral("rank %1 holds %2 of %3 bytes").arg(r).arg(stateBytes).arg(refStateBytes)));
        QCOMPARE(kv[QStringLiteral("bytes_gathered")].toLongLong(), 2 * chunk * kElementBytes);
        // The 400x48 weight is split: each rank steps part of it.
        const int owned = kv[QStringLiteral("owned")].toInt();
        QCOMPARE(owned, r == 0 ? 3 : 4);
        if (sharding == QStringLiteral("zero2")) {
          QCOMPARE(kv[QStringLiteral("grads_held")].toInt(), owned);
          QCOMPARE(kv[QStringLiteral("nonzero_grads_outside")].toLongLong(), int64_t{0});
        } else {
          QCOMPARE(kv[QStringLiteral("grads_held")].toInt(), nParams);
        }
      }
    }

    // The consolidated state is a plain unsharded optimiser state: one process resumes from it.
    const std::string consolidated = readFile(dir.path() + QStringLiteral("/consolidated.bin"));
    QVERIFY(!consolidated.empty());
    Reference resumed(optimizer.toStdString(), kSeed + 5);
    {
      torch::NoGradGuard g;
      auto dst = resumed.net->parameters();
      for (size_t i = 0; i < dst.size(); ++i) dst[i].copy_(p0[i]);
    }
    QVERIFY(wb::parallel::loadOptimizerState(*resumed.opt, consolidated).ok());
    QCOMPARE(wb::parallel::optimizerStateBytes(*resumed.opt), refStateBytes);
    ref.steps(k, k + j);
    resumed.steps(k, k + j);
    const double resumedDiff = maxDiff(resumed.net->parameters(), ref.net->parameters());
    QVERIFY2(resumedDiff < 1e-5, qPrintable(QStringLiteral("resumed unsharded: %1").arg(resumedDiff)));

    if (resumeAs.isEmpty()) return;
    // ...and two ranks resumed from it under another sharding mode continue identically.
    auto f0 = loadTensors(dir.path() + QStringLiteral("/rank0-final.pt"));
    auto f1 = loadTensors(dir.path() + QStringLiteral("/rank1-final.pt"));
    QCOMPARE(maxDiff(f0, f1), 0.0);
    const double finalDiff = maxDiff(f0, ref.net->parameters());
    QVERIFY2(finalDiff < 1e-5, qPrintable(QStringLiteral("resumed as %1: %2").arg(resumeAs).arg(finalDiff)));
  }
};

WB_DIST_TEST_MAIN(TestDataParallel, trainScenario)
#include "test_data_parallel.moc"
