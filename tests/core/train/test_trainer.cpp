// The trainer's in-process speedups, end to end on real Fashion-MNIST (one thread, fixed seed):
//  - bf16 autocast on the CPU trains lenet to within 2 pp of fp32's accuracy;
//  - inference-mode evaluation changes how the model is evaluated, not what it scores: a probe
//    inside the model's forward sees InferenceMode on (and autograd off) in every evaluation
//    batch, and autograd on in the naive evaluation;
//  - early stopping stops at exactly best + patience and best.pt holds the best epoch's weights
//    (equal to a run that stopped there), while last.pt holds the later ones;
//  - a loss that goes non-finite ends the run `diverged`, naming the first bad step.
#include <QtTest/QtTest>

#include "../../support/machine.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include <torch/library.h>
#include <torch/script.h>
#include <torch/torch.h>

#include "wb/common/config.h"
#include "wb/common/paths.h"
#include "wb/model/model.h"
#include "wb/proto/event_types.h"
#include "wb/proto/events.h"
#include "wb/train/checkpoint.h"
#include "wb/train/trainer.h"
#include "trainer_test_util.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {


// What the model's forward saw, one record per call: a custom op the scripted model calls reads
// the autograd modes of the thread that runs it. C++'s TorchScript compiler resolves `torch.<op>`
// in the aten namespace only (it has no torch.ops), so the test's op is a fragment there.
struct ForwardMode {
  bool training, inference, grad;
};
std::vector<ForwardMode>& forwardModes() {
  static std::vector<ForwardMode> modes;
  return modes;
}
torch::Tensor probeModes(const torch::Tensor& x, bool training) {
  forwardModes().push_back({training, c10::InferenceMode::is_enabled(), torch::GradMode::is_enabled()});
  return x.clone();
}
TORCH_LIBRARY_FRAGMENT(aten, m) { m.def("wbtest_probe(Tensor x, bool training) -> Tensor", probeModes); }

// flatten -> probe -> linear 784 -> 10, as TorchScript (the trainer loads it through
// torchscript:<file>). Escaped on purpose (moc and raw strings with braces do not mix).
const char* const kProbeNetSource =
    "def forward(self, x):\n"
    "    x = torch.wbtest_probe(x.flatten(1), self.training)\n"
    "    return torch.matmul(x, self.weight.t()) + self.bias\n";

std::string saveProbeNet(const QString& path) {
  torch::manual_seed(11);
  torch::jit::Module net("ProbeNet");
  net.register_attribute("training", c10::BoolType::get(), true);
  net.register_parameter("weight", (torch::randn({10, 784}) * 0.01).requires_grad_(), false);
  net.register_parameter("bias", torch::zeros({10}).requires_grad_(), false);
  net.define(kProbeNetSource);
  net.save(path.toStdString());
  return wb::model::kTorchScriptPrefix + path.toStdString();
}

// The modes of the forward calls made in eval mode during a run (the model check at load, in
// eval mode without grad and outside InferenceMode, is told apart by its modes).
struct EvalModes {
  int inference = 0, gradOn = 0, trainingWithoutGrad = 0, trainingInference = 0;
};
EvalModes modesOf(const std::vector<ForwardMode>& calls) {
  EvalModes m;
  for (const auto& c : calls) {
    if (c.training) {
      m.trainingWithoutGrad += c.grad ? 0 : 1;
      m.trainingInference += c.inference ? 1 : 0;
    } else {
      m.inference += c.inference && !c.grad ? 1 : 0;
      m.gradOn += c.grad ? 1 : 0;
    }
  }
  return m;
}

bool sameParams(const wb::model::NamedTensors& a, const wb::model::NamedTensors& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].first != b[i].first || !torch::equal(a[i].second, b[i].second)) return false;
  return true;
}

}  // namespace

class TestTrainer : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    WB_NEED(wb::test::missingFashionMnist());
  }

  void bf16TrainsWithinTwoPointsOfFp32() {
    wb::Config c = smallConfig();
    c.data.limit_train = 6000;
    c.data.limit_val = 2000;
    c.train.epochs = 2;
    const Ran fp32 = train(c);
    c.speedups.precision = "bf16-mixed";
    const Ran bf16 = train(c);
    QCOMPARE(QString::fromStdString(fp32.outcome.status), QStringLiteral("ok"));
    QCOMPARE(QString::fromStdString(bf16.outcome.status), QStringLiteral("ok"));
    // The start event says bf16 autocast is active (never silently ignored).
    // Read back through the typed reader the report and the window use.
    QVERIFY(wb::proto::readStartEvent(bf16.of("start").at(0)).speedups.at("precision").active);
    QVERIFY(!wb::proto::readStartEvent(fp32.of("start").at(0)).speedups.at("precision").active);
    const double a32 = fp32.outcome.summary.best_val_acc.value_or(0);
    const double a16 = bf16.outcome.summary.best_val_acc.value_or(0);
    qInfo("fp32 %.4f, bf16 %.4f", a32, a16);
    QVERIFY2(a32 >= 0.65, qPrintable(QString::number(a32)));
    QVERIFY2(std::abs(a32 - a16) <= 0.02, qPrintable(QStringLiteral("fp32 %1 vs bf16 %2").arg(a32).arg(a16)));
    // bf16 really changed the arithmetic: the losses are not bit-identical.
    QVERIFY(fp32.of("step").at(0)["loss"].get<double>() != bf16.of("step").at(0)["loss"].get<double>());
  }

  void inferenceEvalChangesHowNotWhat() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    wb::Config c = smallConfig();
    c.model.name = saveProbeNet(dir.filePath(QStringLiteral("probe.pt")));
    c.speedups.inference_eval = false;
    forwardModes().clear();
    const Ran naive = train(c);
    const EvalModes naiveModes = modesOf(forwardModes());
    c.speedups.inference_eval = true;
    c.train.eval_batch_size = 500;
    forwardModes().clear();
    const Ran infer = train(c);
    const EvalModes inferModes = modesOf(forwardModes());
    const auto e0 = naive.of("eval").at(0);
    const auto e1 = infer.of("eval").at(0);
    QCOMPARE(e0["inference_mode"].get<bool>(), false);
    QCOMPARE(e1["inference_mode"].get<bool>(), true);
    QCOMPARE(e0["eval_samples"].get<int64_t>(), int64_t{1000});
    QCOMPARE(e1["eval_samples"].get<int64_t>(), int64_t{1000});
    // Inside the forward: every evaluation batch (1000 samples in batches of 500) ran under
    // InferenceMode; the naive evaluation (batches of 64) kept autograd on, as a naive loop does.
    QCOMPARE(inferModes.inference, 2);
    QCOMPARE(inferModes.gradOn, 0);
    QCOMPARE(naiveModes.inference, 0);
    QCOMPARE(naiveModes.gradOn, 16);
    // Training itself is untouched by the toggle: autograd on, never InferenceMode.
    for (const EvalModes& m : {naiveModes, inferModes}) {
      QCOMPARE(m.trainingWithoutGrad, 0);
      QCOMPARE(m.trainingInference, 0);
    }
    // Same weights (training is identical), so the same score; only the summation order differs.
    QCOMPARE(e0["val_acc"].get<double>(), e1["val_acc"].get<double>());
    QVERIFY(std::abs(e0["val_loss"].get<double>() - e1["val_loss"].get<double>()) < 1e-5);
    QVERIFY(e0.contains("eval_ms") && e0["mem"].contains("peak"));
    QVERIFY(wb::proto::readStartEvent(infer.of("start").at(0)).speedups.at("inference_eval").active);
  }

  void earlyStoppingStopsAtBestPlusPatienceWithBestWeights() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string stopped = dir.filePath(QStringLiteral("stopped")).toStdString();
    const std::string oneEpoch = dir.filePath(QStringLiteral("one")).toStdString();
    wb::Config c = smallConfig();
    c.data.limit_train = 1000;
    c.data.limit_val = 500;
    c.train.epochs = 6;
    c.speedups.early_stopping.patience = 2;
    c.speedups.early_stopping.monitor = "val_acc";
    c.speedups.early_stopping.mode = "max";
    c.speedups.early_stopping.min_delta = 0.9;  // nothing after epoch 1 counts as better
    const Ran r = train(c, stopped);
    QCOMPARE(QString::fromStdString(r.outcome.status), QStringLiteral("early-stopped"));
    QCOMPARE(r.outcome.summary.epochs, std::optional<int>(3));  // best (1) + patience (2)
    QCOMPARE(r.outcome.summary.best_weights_restored, std::optional<bool>(true));
    QCOMPARE(r.of("eval").size(), size_t{3});
    const auto es = r.of("early_stop");
    QCOMPARE(es.size(), size_t{1});
    const wb::proto::EarlyStopEvent stop = wb::proto::readEarlyStopEvent(es[0]);
    QCOMPARE(stop.best_epoch, 1);
    QCOMPARE(stop.epochs_saved, 3);
    QVERIFY(!stop.reason.empty());

    // best.pt = the weights after epoch 1, bit for bit: a run of exactly one epoch ends there.
    c.train.epochs = 1;
    c.speedups.early_stopping.patience = 0;
    (void)train(c, oneEpoch);
    auto best = wb::train::loadCheckpoint(stopped + "/checkpoints/best.pt");
    auto last = wb::train::loadCheckpoint(stopped + "/checkpoints/last.pt");
    auto ref = wb::train::loadCheckpoint(oneEpoch + "/checkpoints/last.pt");
    QVERIFY(best.ok() && last.ok() && ref.ok());
    QCOMPARE(best->epoch, 1);
    QCOMPARE(last->epoch, 3);
    QVERIFY(sameParams(best->params, ref->params));
    QVERIFY(!sameParams(last->params, ref->params));
  }

  // best.pt unreadable when early stopping restores it: a warning names the file, and the
  // summary says the best weights were not restored (the run still ends early-stopped).
  void bestWeightsNotRestoredAreReported() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string runDir = dir.path().toStdString();
    const std::string bestPt = runDir + "/checkpoints/best.pt";
    wb::Config c = smallConfig();
    c.data.limit_train = 256;
    c.data.limit_val = 128;
    c.train.epochs = 4;
    c.speedups.early_stopping.patience = 1;
    c.speedups.early_stopping.monitor = "val_acc";
    c.speedups.early_stopping.mode = "max";
    c.speedups.early_stopping.min_delta = 0.9;  // stops after epoch 2
    const Ran r = train(c, runDir, [&](const json& e) {
      if (e.value("type", "") != "early_stop") return;
      std::ofstream(bestPt, std::ios::binary | std::ios::trunc) << "not a checkpoint";
    });
    QCOMPARE(QString::fromStdString(r.outcome.status), QStringLiteral("early-stopped"));
    QCOMPARE(r.outcome.summary.best_weights_restored, std::optional<bool>(false));
    QVERIFY(r.outcome.summary.best_weights_note.value_or("").find(bestPt) != std::string::npos);
    bool warned = false;
    for (const auto& w : r.of("warning")) warned = warned || w.value("path", "") == bestPt;
    QVERIFY(warned);
  }

  void nonFiniteLossDivergesNamingTheStep() {
    wb::Config c = smallConfig();
    c.optim.name = "sgd";
    c.optim.lr = 1e6;
    c.optim.momentum = 0.9;
    c.train.log_every = 5;
    const Ran r = train(c);
    QCOMPARE(QString::fromStdString(r.outcome.status), QStringLiteral("diverged"));
    const QString msg = QString::fromStdString(r.outcome.message);
    QVERIFY2(msg.contains(QStringLiteral("non-finite at step ")), qPrintable(msg));
    QVERIFY2(msg.contains(QStringLiteral("optim.lr")), qPrintable(msg));
    // It stops at the first log interval that saw it, not at the end of the epoch.
    QVERIFY(r.outcome.summary.steps.value_or(47) < 47);
    QVERIFY(r.of("eval").empty());
  }
};

QTEST_APPLESS_MAIN(TestTrainer)
#include "test_trainer.moc"
