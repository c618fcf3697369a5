// ReplicaGroup. Across two real ranks on loopback: BatchNorm running statistics follow rank 0, as
// PyTorch's DDP does with broadcast_buffers=True. Ranks start from different seeds and batches;
// creating the sync makes parameters and buffers rank 0's; a forward on each rank's own batch
// moves the running statistics apart; syncBuffers() (the trainer calls it before each forward)
// makes them rank 0's again, bit for bit, so evaluation and checkpoints agree across ranks.
// A group of one (no communicator) is one process: a step through it is bit for bit a plain
// optimiser's step, it stops at once when asked, and its optimiser state is a plain one's.
#include <torch/torch.h>

#include "../parallel/parallel_test_util.h"
#include "wb/parallel/c10d_compat.h"
#include "wb/parallel/communicator.h"
#include "wb/model/model.h"
#include "wb/train/checkpoint.h"
#include "wb/train/optim.h"
#include "wb/train/replica_group.h"

namespace {

int fail(const std::string& what) {
  std::fprintf(stderr, "FAIL: %s\n", what.c_str());
  return 4;
}

std::vector<torch::Tensor> floatBuffers(wb::model::Model& model) {
  std::vector<torch::Tensor> out;
  for (const auto& [name, b] : model.namedBuffers())
    if (b.is_floating_point()) out.push_back(b.detach().clone());
  return out;
}

int syncScenario(const std::string&) {
  at::set_num_threads(1);
  auto comm = wbtest::joinFromEnvironment();
  if (!comm) return fail(comm.error().message);
  const int rank = (*comm)->rank();
  const std::string out = wbtest::workerEnv("WB_DIST_WORKDIR") + "/rank" + std::to_string(rank);

  torch::manual_seed(100 + static_cast<uint64_t>(rank));  // each rank initialises differently
  auto model = wb::model::createModel({"resnet18", 1, 10, 28});
  if (!model) return fail(model.error().message);
  (*model)->train(true);
  (*model)->forward(torch::randn({8, 1, 28, 28}));  // statistics that differ per rank before the sync exists
  wb::Config config;
  config.speedups.devices = 2;
  auto sync = wb::train::makeReplicaGroup(config, comm->get(), **model);
  if (!sync) return fail(sync.error().message);
  if ((*sync)->worldSize() != 2) return fail("not a group of two ranks");
  torch::save(floatBuffers(**model), out + "-created.pt");

  torch::manual_seed(200 + static_cast<uint64_t>(rank));  // each rank's own batch
  (*model)->forward(torch::randn({8, 1, 28, 28}));
  torch::save(floatBuffers(**model), out + "-forward.pt");

  (*sync)->syncBuffers();
  torch::save(floatBuffers(**model), out + "-synced.pt");
  return 0;
}

std::vector<torch::Tensor> load(const QString& path) {
  std::vector<torch::Tensor> t;
  torch::load(t, path.toStdString());
  return t;
}

double maxDiff(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, (a[i] - b[i]).abs().max().item<double>());
  return m;
}

}  // namespace

class TestReplicaGroup : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void aGroupOfOneIsOneProcess() {
    at::set_num_threads(1);
    wb::Config config;
    config.optim.name = "adam";
    torch::manual_seed(3);
    auto viaGroup = wb::model::createModel({"lenet", 1, 10, 28});
    torch::manual_seed(3);
    auto plain = wb::model::createModel({"lenet", 1, 10, 28});
    QVERIFY(viaGroup.ok() && plain.ok());
    auto group = wb::train::makeReplicaGroup(config, nullptr, **viaGroup);
    QVERIFY2(group.ok(), group.ok() ? "" : group.error().message.c_str());
    QCOMPARE((*group)->worldSize(), 1);
    QVERIFY((*group)->agreeOnStop(true, 3, 50));  // at once, not at the next 50th step
    QVERIFY(!(*group)->agreeOnStop(false, 50, 50));
    double sums[2] = {1.5, 2.0};
    (*group)->allReduceSum(sums, 2);
    QCOMPARE(sums[1], 2.0);
    QVERIFY(!(*group)->shardingStatus().active);

    auto groupOpt = (*group)->makeOptimizer();
    auto plainOpt = wb::train::makeOptimizer(config.optim, (*plain)->parameters());
    QVERIFY(groupOpt.ok() && plainOpt.ok());
    torch::manual_seed(4);
    const auto x = torch::randn({16, 1, 28, 28});
    const auto y = torch::randint(0, 10, {16});
    for (int step = 0; step < 3; ++step) {
      (*groupOpt)->zero_grad();
      (*group)->prepareBackward();
      torch::manual_seed(10 + step);  // the same dropout masks
      torch::nn::functional::cross_entropy((*viaGroup)->forward(x), y).backward();
      (*group)->finishBackward();
      (*groupOpt)->step();
      (*plainOpt)->zero_grad();
      torch::manual_seed(10 + step);
      torch::nn::functional::cross_entropy((*plain)->forward(x), y).backward();
      (*plainOpt)->step();
    }
    const auto a = (*viaGroup)->namedParameters(), b = (*plain)->namedParameters();
    for (size_t i = 0; i < a.size(); ++i) QVERIFY2(torch::equal(a[i].second, b[i].second), a[i].first.c_str());
    // Its optimiser state is a plain optimiser's: it loads into one and holds the same moments.
    auto reloaded = wb::train::makeOptimizer(config.optim, (*plain)->parameters());
    QVERIFY(reloaded.ok());
    QVERIFY(wb::train::loadOptimizerStateBytes(**reloaded, (*group)->consolidatedOptimizerState()).ok());
    const auto& want = (*plainOpt)->state();
    const auto& got = (*reloaded)->state();
    QCOMPARE(got.size(), want.size());
    for (const auto& p : (*plain)->parameters()) {
      const auto* w = dynamic_cast<const torch::optim::AdamParamState*>(
          want.at(wb::parallel::compat::optimizerStateKey(want, p)).get());
      const auto* g = dynamic_cast<const torch::optim::AdamParamState*>(
          got.at(wb::parallel::compat::optimizerStateKey(got, p)).get());
      QVERIFY(w && g);
      QCOMPARE(g->step(), w->step());
      QVERIFY(torch::equal(g->exp_avg(), w->exp_avg()) && torch::equal(g->exp_avg_sq(), w->exp_avg_sq()));
    }
  }

  void batchNormStatisticsFollowRankZero() {
    QTemporaryDir dir;
    auto port = wb::parallel::findFreePort();
    QVERIFY(port.ok());
    auto runs = wbtest::runRanks(QStringLiteral("sync"), {wbtest::rankEnv(0, 2, *port), wbtest::rankEnv(1, 2, *port)},
                                 120000, dir.path());
    for (const auto& r : runs) QVERIFY2(r.exit_code == 0, qPrintable(wbtest::describe(runs)));
    auto file = [&](int rank, const char* stage) {
      return load(dir.path() + QStringLiteral("/rank%1-%2.pt").arg(rank).arg(QLatin1String(stage)));
    };
    const auto created0 = file(0, "created"), created1 = file(1, "created");
    QVERIFY(created0.size() >= 40);  // resnet18: running mean and var of 20 BatchNorms
    QCOMPARE(maxDiff(created0, created1), 0.0);  // rank 0's from the start
    const auto forward0 = file(0, "forward"), forward1 = file(1, "forward");
    QVERIFY(maxDiff(forward0, forward1) > 1e-3);  // each rank's batch moved its statistics
    QVERIFY(maxDiff(forward0, created0) > 1e-3);
    QCOMPARE(maxDiff(file(1, "synced"), forward0), 0.0);  // rank 1 took rank 0's
    QCOMPARE(maxDiff(file(0, "synced"), forward0), 0.0);  // rank 0 kept its own
  }
};

WB_DIST_TEST_MAIN(TestReplicaGroup, syncScenario)
#include "test_replica_group.moc"
