// Checkpoints: a saved run loads back equal (params, buffers, optimiser state: a step after a
// load equals a step without, bit for bit); missing, truncated and foreign files are refused
// with the file named and what to do; a writer SIGKILLed mid-write leaves the previous
// checkpoint loadable under the final name.
#include <QtTest/QtTest>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include <torch/torch.h>

#include "wb/common/fs.h"
#include "wb/train/checkpoint.h"

namespace fs = std::filesystem;
using wb::train::CheckpointData;

namespace {

struct Net {
  torch::nn::Sequential seq{nullptr};
  std::unique_ptr<torch::optim::SGD> opt;
  torch::Tensor x, y;

  explicit Net(uint64_t seed) {
    torch::manual_seed(seed);
    seq = torch::nn::Sequential(torch::nn::Linear(6, 8), torch::nn::BatchNorm1d(8),
                                torch::nn::ReLU(), torch::nn::Linear(8, 3));
    opt = std::make_unique<torch::optim::SGD>(
        seq->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9).nesterov(true));
    torch::manual_seed(1234);  // same data for every Net
    x = torch::randn({16, 6});
    y = torch::randint(0, 3, {16});
  }
  void step() {
    opt->zero_grad();
    torch::nn::functional::cross_entropy(seq->forward(x), y).backward();
    opt->step();
  }
  wb::model::NamedTensors params() {
    wb::model::NamedTensors out;
    for (auto& item : seq->named_parameters()) out.emplace_back(item.key(), item.value());
    return out;
  }
  wb::model::NamedTensors buffers() {
    wb::model::NamedTensors out;
    for (auto& item : seq->named_buffers()) out.emplace_back(item.key(), item.value());
    return out;
  }
};

bool sameTensors(const wb::model::NamedTensors& a, const wb::model::NamedTensors& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].first != b[i].first || !torch::equal(a[i].second.cpu(), b[i].second.cpu())) return false;
  return true;
}

CheckpointData snapshot(Net& net, int epoch) {
  CheckpointData d;
  d.config_json = "{\"name\":\"ckpt-test\",\"seed\":7}";
  d.epoch = epoch;
  d.batch_in_epoch = 17;
  d.global_step = 1000 + epoch;
  d.samples_seen = 64000;
  d.params = net.params();
  d.buffers = net.buffers();
  d.optimizer_state = wb::train::optimizerStateBytes(*net.opt);
  d.scaler = {{"scale", 32768.0}, {"growth_tracker", 5.0}, {"skipped", 2.0}};
  d.early_stopping = {{"best", 0.25}, {"best_epoch", 3.0}, {"wait", 1.0}};
  d.extra = {{"best_metric", 0.25}, {"clock_s", 12.5}, {"neg_inf", -INFINITY}};
  d.rng_state = at::detail::getDefaultCPUGenerator().get_state();
  return d;
}

void verifyEqual(const CheckpointData& a, const CheckpointData& b) {
  QCOMPARE(b.format_version, a.format_version);
  QCOMPARE(b.config_json, a.config_json);
  QCOMPARE(b.epoch, a.epoch);
  QCOMPARE(b.batch_in_epoch, a.batch_in_epoch);
  QCOMPARE(b.global_step, a.global_step);
  QCOMPARE(b.samples_seen, a.samples_seen);
  QVERIFY(sameTensors(a.params, b.params));
  QVERIFY(sameTensors(a.buffers, b.buffers));
  QVERIFY(a.optimizer_state == b.optimizer_state);
  QVERIFY(a.scaler == b.scaler);
  QVERIFY(a.early_stopping == b.early_stopping);
  QVERIFY(a.extra == b.extra);
  QVERIFY(torch::equal(a.rng_state, b.rng_state));
}

void writeBytes(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string readBytes(const fs::path& path) {
  auto r = wb::readFile(path);
  return r ? *r : std::string();
}

// Temp files the atomic writer left next to `final` (a writer killed mid-write leaves one).
std::vector<fs::path> tempFilesOf(const fs::path& final) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(final.parent_path(), ec))
    if (e.path().filename().string().rfind(final.filename().string() + ".tmp", 0) == 0)
      out.push_back(e.path());
  return out;
}

bool tempFileHasData(const fs::path& final) {
  std::error_code ec;
  for (const auto& t : tempFilesOf(final))
    if (fs::file_size(t, ec) > 0 && !ec) return true;
  return false;
}

}  // namespace

class TestCheckpoint : public QObject {
  Q_OBJECT
  std::unique_ptr<QTemporaryDir> dir_;

  fs::path file(const char* name) { return fs::path(dir_->path().toStdString()) / name; }

 private Q_SLOTS:
  void initTestCase() {
    at::set_num_threads(1);
    // On the build tree's disk rather than /tmp, which may be RAM: fsync really writes there.
    const QString root = QStringLiteral(WB_BINARY_DIR "/test-runs");
    QVERIFY(QDir().mkpath(root));
    dir_ = std::make_unique<QTemporaryDir>(root + QStringLiteral("/checkpoint-XXXXXX"));
    QVERIFY2(dir_->isValid(), qPrintable(dir_->errorString()));
  }

  void saveLoadRoundTrip() {
    Net net(1);
    net.step();
    net.step();  // momentum buffers exist now
    const auto saved = snapshot(net, 4);
    const auto path = file("last.pt").string();
    auto st = wb::train::saveCheckpoint(path, saved);
    QVERIFY2(st.ok(), st.ok() ? "" : st.error().message.c_str());
    QVERIFY(tempFilesOf(path).empty());
    auto loaded = wb::train::loadCheckpoint(path);
    QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().message.c_str());
    verifyEqual(saved, *loaded);
  }

  // Restoring into a fresh model and optimiser must continue exactly: wrong momentum buffers,
  // BatchNorm running stats or params make the next step differ.
  void stepAfterLoadEqualsStepWithout() {
    Net original(1);
    for (int i = 0; i < 3; ++i) original.step();
    const auto path = file("resume.pt").string();
    QVERIFY(wb::train::saveCheckpoint(path, snapshot(original, 1)).ok());

    auto ckpt = wb::train::loadCheckpoint(path);
    QVERIFY(ckpt.ok());
    Net resumed(99);  // different initial weights
    QVERIFY(!sameTensors(resumed.params(), original.params()));
    {
      torch::NoGradGuard no_grad;
      auto p = resumed.params();
      auto b = resumed.buffers();
      for (size_t i = 0; i < p.size(); ++i) p[i].second.copy_(ckpt->params[i].second);
      for (size_t i = 0; i < b.size(); ++i) b[i].second.copy_(ckpt->buffers[i].second);
    }
    auto st = wb::train::loadOptimizerStateBytes(*resumed.opt, ckpt->optimizer_state);
    QVERIFY2(st.ok(), st.ok() ? "" : st.error().message.c_str());

    for (int i = 0; i < 2; ++i) {
      original.step();
      resumed.step();
      QVERIFY(sameTensors(resumed.params(), original.params()));
      QVERIFY(sameTensors(resumed.buffers(), original.buffers()));
    }
  }

  void badFileIsRefused_data() {
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("says");
    QTest::newRow("missing") << "missing" << "does not exist";
    QTest::newRow("empty") << "empty" << "is empty";
    QTest::newRow("truncated to half") << "half" << "truncated or corrupt";
    QTest::newRow("last byte cut") << "minus1" << "truncated or corrupt";
    QTest::newRow("random bytes") << "random" << "truncated or corrupt";
    QTest::newRow("a torch archive, not a checkpoint") << "foreign" << "not a Speedup Workbench checkpoint";
  }
  void badFileIsRefused() {
    QFETCH(QString, kind);
    QFETCH(QString, says);
    Net net(2);
    const auto good = file("good.pt");
    QVERIFY(wb::train::saveCheckpoint(good.string(), snapshot(net, 0)).ok());
    const std::string bytes = readBytes(good);
    QVERIFY(bytes.size() > 1000);

    const auto bad = file("bad.pt");
    fs::remove(bad);
    if (kind == QLatin1String("empty")) writeBytes(bad, "");
    if (kind == QLatin1String("half")) writeBytes(bad, bytes.substr(0, bytes.size() / 2));
    if (kind == QLatin1String("minus1")) writeBytes(bad, bytes.substr(0, bytes.size() - 1));
    if (kind == QLatin1String("random")) {
      std::mt19937 rng(5);
      std::string noise(bytes.size(), '\0');
      for (auto& c : noise) c = static_cast<char>(rng());
      writeBytes(bad, noise);
    }
    if (kind == QLatin1String("foreign")) {
      torch::serialize::OutputArchive out;
      out.write("weights", c10::IValue(torch::ones({3})));
      out.save_to(bad.string());
    }

    auto r = wb::train::loadCheckpoint(bad.string());
    QVERIFY(!r.ok());
    QCOMPARE(r.error().code, wb::Errc::Checkpoint);
    const QString msg = QString::fromStdString(r.error().message);
    QVERIFY2(msg.contains(QString::fromStdString(bad.string())), qPrintable(msg));
    QVERIFY2(msg.contains(says), qPrintable(msg));
    if (kind != QLatin1String("missing"))
      QVERIFY2(msg.contains(QLatin1String("--from best")), qPrintable(msg));
  }

  // LibTorch does not check the zip CRCs on load: flipped bytes inside tensor data must still
  // be refused before any state is restored.
  void flippedTensorBytesAreRefused() {
    Net net(5);
    auto data = snapshot(net, 1);
    data.params.emplace_back("ballast", torch::rand({1 << 20}));  // 4 MiB: the file's middle is tensor data
    const auto path = file("flipped.pt");
    QVERIFY(wb::train::saveCheckpoint(path.string(), data).ok());
    QVERIFY(wb::train::loadCheckpoint(path.string()).ok());
    std::string bytes = readBytes(path);
    QVERIFY(bytes.size() > (4u << 20));
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x5A);
    writeBytes(path, bytes);

    auto r = wb::train::loadCheckpoint(path.string());
    QVERIFY2(!r.ok(), "a checkpoint with flipped tensor bytes loaded silently");
    QCOMPARE(r.error().code, wb::Errc::Checkpoint);
    const QString msg = QString::fromStdString(r.error().message);
    QVERIFY2(msg.contains(QString::fromStdString(path.string())), qPrintable(msg));
    QVERIFY2(msg.contains(QLatin1String("CRC-32")), qPrintable(msg));
    QVERIFY2(msg.contains(QLatin1String("resume from best.pt")), qPrintable(msg));
  }

  void staleTemporariesAreRemoved() {
    const fs::path dir = file("stale");
    fs::create_directories(dir);
    const pid_t dead = ::fork();
    QVERIFY(dead >= 0);
    if (dead == 0) ::_exit(0);
    int status = 0;
    QCOMPARE(::waitpid(dead, &status, 0), dead);  // reaped: its pid names no process now
    const fs::path stale = dir / ("last.pt.tmp-" + std::to_string(dead));
    const fs::path live = dir / ("best.pt.tmp-" + std::to_string(::getpid()));
    const fs::path other = dir / "notes.tmp-x";
    for (const auto& p : {stale, live, other}) writeBytes(p, "partial");
    QCOMPARE(wb::train::removeStaleTemporaries(dir.string()), 1);
    QVERIFY(!fs::exists(stale));
    QVERIFY(fs::exists(live));   // a writer still running keeps its temp file
    QVERIFY(fs::exists(other));  // not a writer's temp name
    QCOMPARE(wb::train::removeStaleTemporaries((dir / "missing").string()), 0);
  }

  void badOptimizerBytesAreRefused() {
    Net net(3);
    auto st = wb::train::loadOptimizerStateBytes(*net.opt, "not an archive");
    QVERIFY(!st.ok());
    QCOMPARE(st.error().code, wb::Errc::Checkpoint);
    QVERIFY2(QString::fromStdString(st.error().message).contains(QLatin1String("optimiser")),
             st.error().message.c_str());
  }

  // A child writes a large checkpoint over a valid one and is SIGKILLed while its temp file is
  // being written; the file under the final name must still be the previous checkpoint.
  void killedWriterLeavesPreviousCheckpoint() {
    Net net(4);
    const auto path = file("atomic.pt");
    const auto previous = snapshot(net, 2);
    QVERIFY(wb::train::saveCheckpoint(path.string(), previous).ok());

    bool killed_mid_write = false;
    for (int attempt = 0; attempt < 6 && !killed_mid_write; ++attempt) {
      auto big = snapshot(net, 3);
      big.params.emplace_back("ballast", torch::rand({(int64_t{8} << 20) << attempt}));  // 32 MB, 64 MB, ...
      for (auto& t : tempFilesOf(path)) fs::remove(t);

      const pid_t child = ::fork();
      QVERIFY(child >= 0);
      if (child == 0) {
        auto st = wb::train::saveCheckpoint(path.string(), big);
        ::_exit(st.ok() ? 0 : 3);
      }
      // Kill once the temp file holds data: from then until the rename it is mid-write.
      int status = 0;
      bool exited = false;
      for (;;) {
        if (tempFileHasData(path)) {
          ::kill(child, SIGKILL);
          break;
        }
        if (::waitpid(child, &status, WNOHANG) == child) {
          exited = true;
          break;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
      if (!exited) QCOMPARE(::waitpid(child, &status, 0), child);
      // Mid-write for sure only if it died by our signal with its temp file still there.
      killed_mid_write = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && !tempFilesOf(path).empty();
      if (!killed_mid_write) {
        qInfo("attempt %d: the writer finished before the kill; retrying larger", attempt);
        QVERIFY(wb::train::saveCheckpoint(path.string(), previous).ok());
      }
    }
    QVERIFY2(killed_mid_write, "never managed to kill the writer mid-write");

    auto loaded = wb::train::loadCheckpoint(path.string());
    QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().message.c_str());
    verifyEqual(previous, *loaded);
    // The next checkpoint written to the folder sweeps the dead writer's temp file away.
    QVERIFY(!tempFilesOf(path).empty());
    QVERIFY(wb::train::saveCheckpoint(path.string(), previous).ok());
    QVERIFY(tempFilesOf(path).empty());
  }
};

QTEST_APPLESS_MAIN(TestCheckpoint)
#include "test_checkpoint.moc"
