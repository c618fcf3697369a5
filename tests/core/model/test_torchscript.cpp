// torchscript:<file.pt>: a scripted model made here is saved, loaded through createModel and
// trained on real Fashion-MNIST images; broken files give the documented errors.
#include <QtTest/QtTest>

#include <fstream>

#include <torch/script.h>
#include <zlib.h>

#include "wb/model/model.h"

namespace {

const char* const kFashionDir = "/usr/share/datasets/fashion-mnist";

// Head: a linear layer with a buffer; Net: flatten -> head -> dropout(0.5) while training.
// Escaped strings on purpose (moc and raw strings with braces do not mix).
const char* const kHeadSource =
    "def forward(self, x):\n"
    "    return (torch.matmul(x, self.weight.t()) + self.bias) * self.scale\n";
const char* const kNetSource =
    "def forward(self, x):\n"
    "    y = self.head.forward(x.flatten(1))\n"
    "    return torch.dropout(y, 0.5, self.training)\n";

// Writes a scripted classifier over [B, channels, size, size] inputs with `classes` outputs.
void saveScripted(const QString& path, int64_t features, int64_t classes) {
  auto cu = std::make_shared<torch::jit::CompilationUnit>();
  torch::jit::Module head("Head", cu);
  head.register_attribute("training", c10::BoolType::get(), true);
  head.register_parameter("weight", (torch::randn({classes, features}) * 0.01).requires_grad_(), false);
  head.register_parameter("bias", torch::zeros({classes}).requires_grad_(), false);
  head.register_buffer("scale", torch::ones({1}));
  head.define(kHeadSource);
  torch::jit::Module net("Net", cu);
  net.register_attribute("training", c10::BoolType::get(), true);
  net.register_module("head", head);
  net.define(kNetSource);
  net.save(path.toStdString());
}

// The first n bytes of a gzip file after skipping `header` bytes.
std::vector<uint8_t> gunzip(const std::string& path, size_t header, size_t n) {
  std::vector<uint8_t> buf(header + n);
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) return {};
  const int got = gzread(f, buf.data(), static_cast<unsigned>(buf.size()));
  gzclose(f);
  if (got != static_cast<int>(buf.size())) return {};
  return {buf.begin() + static_cast<std::ptrdiff_t>(header), buf.end()};
}

wb::Result<std::unique_ptr<wb::model::Model>> load(const QString& path, int channels = 1,
                                                   int classes = 10, int size = 28) {
  return wb::model::createModel(
      {wb::model::kTorchScriptPrefix + path.toStdString(), channels, classes, size});
}

}  // namespace

class TestTorchScript : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void init() { torch::manual_seed(3); }

  void trainsOnFashionMnist() {
    const std::string dir = kFashionDir;
    const int64_t n = 64;
    const auto pixels = gunzip(dir + "/train-images-idx3-ubyte.gz", 16, n * 28 * 28);
    const auto labels = gunzip(dir + "/train-labels-idx1-ubyte.gz", 8, n);
    QVERIFY2(!pixels.empty() && !labels.empty(),
             "Fashion-MNIST not found: run packaging/setup.sh");
    const auto x = torch::tensor(std::vector<uint8_t>(pixels))
                       .to(torch::kFloat)
                       .div_(255.0)
                       .view({n, 1, 28, 28});
    const auto y = torch::tensor(std::vector<uint8_t>(labels)).to(torch::kLong);

    QTemporaryDir tmp;
    const QString file = tmp.filePath(QStringLiteral("net.pt"));
    saveScripted(file, 28 * 28, 10);
    auto created = load(file);
    QVERIFY2(created.ok(), created.ok() ? "" : created.error().message.c_str());
    auto& model = *created.value();
    QCOMPARE(QString::fromStdString(model.name()), QStringLiteral("torchscript:") + file);
    model.to(torch::kCPU);

    // Recursive names, parameters and buffers straight from the module.
    std::vector<std::string> names;
    for (const auto& [name, t] : model.namedParameters()) names.push_back(name);
    QCOMPARE(names, (std::vector<std::string>{"head.weight", "head.bias"}));
    QCOMPARE(model.namedBuffers().size(), size_t{1});
    QCOMPARE(model.namedBuffers()[0].first, std::string("head.scale"));
    QCOMPARE(model.parameterCount(), int64_t{28 * 28 * 10 + 10});

    // train() reaches the module: dropout only while training.
    model.train(false);
    QVERIFY(torch::equal(model.forward(x), model.forward(x)));
    model.train(true);
    QVERIFY(!torch::equal(model.forward(x), model.forward(x)));

    auto evalLoss = [&] {
      model.train(false);
      torch::NoGradGuard no_grad;
      return torch::nn::functional::cross_entropy(model.forward(x), y).item<double>();
    };
    const double before = evalLoss();
    torch::optim::SGD sgd(model.parameters(), torch::optim::SGDOptions(0.05));
    for (int step = 0; step < 20; ++step) {
      model.train(true);
      sgd.zero_grad();
      torch::nn::functional::cross_entropy(model.forward(x), y).backward();
      sgd.step();
    }
    const double after = evalLoss();
    QVERIFY2(after < 0.8 * before, qPrintable(QStringLiteral("loss %1 -> %2").arg(before).arg(after)));
  }

  void brokenFilesGiveDocumentedErrors_data() {
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("expected");
    QTest::newRow("missing file") << "missing" << "does not exist";
    QTest::newRow("corrupt file") << "corrupt" << "is not a TorchScript archive";
    QTest::newRow("wrong output shape") << "classes" << "returned shape [2, 5]";
    QTest::newRow("forward fails on the dataset's shape") << "input" << "failed in forward";
  }

  void brokenFilesGiveDocumentedErrors() {
    QFETCH(QString, kind);
    QFETCH(QString, expected);
    QTemporaryDir tmp;
    const QString file = tmp.filePath(QStringLiteral("model.pt"));
    if (kind == QLatin1String("corrupt")) {
      std::ofstream(file.toStdString(), std::ios::binary) << "PK\x03\x04 this is not a zip archive";
    } else if (kind == QLatin1String("classes")) {
      saveScripted(file, 28 * 28, 5);
    } else if (kind == QLatin1String("input")) {
      saveScripted(file, 3 * 32 * 32, 10);  // made for CIFAR, loaded for 1x28x28
    }
    auto r = load(file);
    QVERIFY(!r.ok());
    QCOMPARE(r.error().code, wb::Errc::Model);
    const QString msg = QString::fromStdString(r.error().message);
    QVERIFY2(msg.contains(expected), qPrintable(msg));
    QVERIFY2(msg.contains(file), qPrintable(msg));      // names the file
    QVERIFY2(msg.contains(QStringLiteral(" — ")), qPrintable(msg));  // says what to do
  }

  void emptyPathIsAnError() {
    auto r = wb::model::createModel({"torchscript:", 1, 10, 28});
    QVERIFY(!r.ok());
    QVERIFY(QString::fromStdString(r.error().message).contains(QStringLiteral("torchscript:<file.pt>")));
  }
};

QTEST_APPLESS_MAIN(TestTorchScript)
#include "test_torchscript.moc"
