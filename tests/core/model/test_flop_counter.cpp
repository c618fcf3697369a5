// FLOPs per operation from the shapes a forward sees (wb/model/flop_counter.h): known figures for the
// built-in nets (resnet18 on 224 x 224 is 1.82 G multiply-accumulates; lenet by hand), the
// training rule, and a TorchScript model with an operation the table does not know.
#include <QtTest/QtTest>

#include <torch/script.h>

#include "wb/model/flop_counter.h"
#include "wb/model/model.h"

using wb::model::FlopCount;

namespace {


FlopCount countOf(const std::string& name, int channels, int classes, int size, int64_t batch) {
  auto m = wb::model::createModel({name, channels, classes, size});
  if (!m.ok()) qFatal("%s", m.error().message.c_str());
  auto c = wb::model::countForwardFlops(**m, torch::zeros({batch, channels, size, size}));
  if (!c.ok()) qFatal("%s", c.error().message.c_str());
  return *c;
}

// lenet on 1 x 28 x 28, by hand (multiply-accumulates x 2, biases not counted):
//   conv1 10 x 24 x 24 outputs x 25  = 144000     conv2 20 x 8 x 8 x (10 x 25) = 320000
//   fc1   320 x 50                   = 16000      fc2   50 x 10                = 500
constexpr double kLeNetMacs = 144000 + 320000 + 16000 + 500;

const char* const kScriptSource =
    "def forward(self, x):\n"
    "    y = torch.matmul(x.flatten(1), self.weight.t())\n"
    "    return torch.cumsum(y, 1)\n";

}  // namespace

class TestFlopCounter : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void knownFigures_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<int>("channels");
    QTest::addColumn<int>("size");
    QTest::addColumn<double>("matmulGflops");  // per image, forward
    QTest::addColumn<double>("tolerance");     // relative
    // torchvision's resnet18: 1.814 G multiply-accumulates in its convolutions and fc at 224 px.
    QTest::newRow("resnet18 224 px") << "resnet18" << 3 << 224 << 2 * 1.8186 << 0.01;
    QTest::newRow("lenet 28 px") << "lenet" << 1 << 28 << 2 * kLeNetMacs / 1e9 << 1e-9;
    // mnist-cnn: conv1 32 x 26 x 26 x 9, conv2 64 x 24 x 24 x 288, fc1 9216 x 128, fc2 128 x 10.
    QTest::newRow("mnist-cnn 28 px") << "mnist-cnn" << 1 << 28
                                     << 2 * (32.0 * 676 * 9 + 64.0 * 576 * 288 + 9216.0 * 128 + 1280) / 1e9 << 1e-9;
    // mlp: 784 x 256 + 256 x 128 + 128 x 10.
    QTest::newRow("mlp 28 px") << "mlp" << 1 << 28 << 2 * (784.0 * 256 + 256 * 128 + 1280) / 1e9 << 1e-9;
  }
  void knownFigures() {
    QFETCH(QString, model);
    QFETCH(int, channels);
    QFETCH(int, size);
    QFETCH(double, matmulGflops);
    QFETCH(double, tolerance);
    const FlopCount c = countOf(model.toStdString(), channels, model == QLatin1String("resnet18") ? 1000 : 10, size, 1);
    QVERIFY2(std::abs(c.matmul / 1e9 - matmulGflops) <= tolerance * matmulGflops,
             qPrintable(QStringLiteral("%1: %2 GFLOPs in convolutions and matrix products, expected %3")
                            .arg(model).arg(c.matmul / 1e9, 0, 'f', 6).arg(matmulGflops, 0, 'f', 6)));
    // Pooling, normalisation and activations come on top, and are a small share.
    QVERIFY(c.forward > c.matmul);
    QVERIFY(c.forward < 1.05 * c.matmul);
    QVERIFY2(c.uncounted.empty(), c.uncountedNote().c_str());
  }

  // Linear in the batch; training = 3 x forward; the model comes back in training mode.
  void batchAndTrainingRule() {
    const FlopCount one = countOf("lenet", 1, 10, 28, 1);
    const FlopCount many = countOf("lenet", 1, 10, 28, 64);
    QCOMPARE(many.batch, int64_t{64});
    QVERIFY(std::abs(many.forward - 64 * one.forward) < 1e-6 * many.forward);
    QCOMPARE(many.trainingStep(), 3 * many.forward);
    QVERIFY(std::abs(many.trainingPerSample() - 3 * one.forward) < 1e-6 * one.forward);
  }

  // Neither BatchNorm statistics nor the random generator move (dropout is off while counting).
  void leavesTheModelAsItWas() {
    auto m = wb::model::createModel({"resnet18", 3, 10, 32});
    QVERIFY(m.ok());
    std::vector<torch::Tensor> copies;
    for (const auto& [name, t] : (*m)->namedBuffers()) copies.push_back(t.clone());
    auto lenet = wb::model::createModel({"lenet", 1, 10, 28});
    QVERIFY(lenet.ok());
    torch::manual_seed(7);
    const auto expected = torch::rand({4});
    torch::manual_seed(7);
    QVERIFY(wb::model::countForwardFlops(**m, torch::ones({4, 3, 32, 32})).ok());
    QVERIFY(wb::model::countForwardFlops(**lenet, torch::ones({4, 1, 28, 28})).ok());
    QVERIFY(torch::equal(torch::rand({4}), expected));
    const auto after = (*m)->namedBuffers();
    for (size_t i = 0; i < after.size(); ++i) QVERIFY2(torch::equal(after[i].second, copies[i]), after[i].first.c_str());
  }

  // A TorchScript model: its matmul is counted from the graph, cumsum is named as not counted.
  void torchScriptNamesWhatItCannotCount() {
    QTemporaryDir dir;
    const std::string path = (dir.path() + QStringLiteral("/net.pt")).toStdString();
    auto cu = std::make_shared<torch::jit::CompilationUnit>();
    torch::jit::Module net("Net", cu);
    net.register_attribute("training", c10::BoolType::get(), true);
    net.register_parameter("weight", torch::randn({10, 784}), false);
    net.define(kScriptSource);
    net.save(path);
    auto m = wb::model::createModel({wb::model::kTorchScriptPrefix + path, 1, 10, 28});
    QVERIFY2(m.ok(), m.ok() ? "" : m.error().message.c_str());
    auto c = wb::model::countForwardFlops(**m, torch::zeros({8, 1, 28, 28}));
    QVERIFY(c.ok());
    QCOMPARE(c->matmul, 2.0 * 8 * 784 * 10);
    QCOMPARE(c->uncounted.count("aten::cumsum"), size_t{1});
    QVERIFY(QString::fromStdString(c->uncountedNote()).contains(QStringLiteral("aten::cumsum (1 call)")));
  }
};

QTEST_APPLESS_MAIN(TestFlopCounter)
#include "test_flop_counter.moc"
