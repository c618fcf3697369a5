// The built-in model registry: shapes, reference parameter counts, gradients, size limits,
// unknown names, loadState.
#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>

#include "wb/common/choices.h"
#include "wb/model/model.h"

using wb::model::createModel;
using wb::model::Model;
using wb::model::ModelSpec;

namespace {

std::unique_ptr<Model> make(const ModelSpec& spec) {
  auto created = createModel(spec);
  if (!created.ok()) qFatal("createModel(%s) failed: %s", spec.name.c_str(), created.error().message.c_str());
  return std::move(created).value();
}

torch::Tensor param(Model& model, const std::string& name) {
  for (const auto& [n, t] : model.namedParameters()) {
    if (n == name) return t;
  }
  return {};
}

}  // namespace

class TestModels : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void init() { torch::manual_seed(7); }

  void builtinShapesCountsGrads_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<int>("channels");
    QTest::addColumn<int>("size");
    QTest::addColumn<int>("classes");
    QTest::addColumn<qint64>("params");  // -1: no reference count for this shape
    // Reference counts: LibTorch's MNIST example net, PyTorch's examples/mnist net, the CIFAR
    // ResNet-18 (3x3 stem) and torchvision's resnet18 with a 10-class head.
    const struct {
      const char* name;
      int channels, size, classes;
      qint64 params;
    } rows[] = {
        {"mlp", 1, 28, 10, 784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10},
        {"mlp", 3, 32, 10, -1},
        {"mlp", 3, 64, 5, -1},
        {"lenet", 1, 28, 10, 21840},
        {"lenet", 3, 32, 10, -1},
        {"lenet", 3, 64, 7, -1},
        {"mnist-cnn", 1, 28, 10, 1199882},
        {"mnist-cnn", 3, 32, 10, -1},
        {"mnist-cnn", 3, 64, 100, -1},
        {"resnet18", 1, 28, 10, -1},
        {"resnet18", 3, 32, 10, 11173962},
        {"resnet18", 3, 64, 10, 11181642},
    };
    for (const auto& r : rows) {
      const QByteArray tag = QByteArray(r.name) + " " + QByteArray::number(r.channels) + "x" +
                             QByteArray::number(r.size) + " " + QByteArray::number(r.classes) +
                             " classes";
      QTest::newRow(tag.constData()) << QString::fromLatin1(r.name) << r.channels << r.size
                                     << r.classes << r.params;
    }
  }

  void builtinShapesCountsGrads() {
    QFETCH(QString, name);
    QFETCH(int, channels);
    QFETCH(int, size);
    QFETCH(int, classes);
    QFETCH(qint64, params);
    auto model = make({name.toStdString(), channels, classes, size});
    QCOMPARE(QString::fromStdString(model->name()), name);
    if (params >= 0) QCOMPARE(static_cast<qint64>(model->parameterCount()), params);

    int64_t counted = 0;
    for (const auto& p : model->parameters()) counted += p.numel();
    QCOMPARE(model->parameterCount(), counted);
    QCOMPARE(model->namedParameters().size(), model->parameters().size());

    model->train(true);
    const int64_t batch = 2;
    auto x = torch::randn({batch, channels, size, size});
    auto y = torch::randint(classes, {batch}, torch::kLong);
    auto out = model->forward(x);
    QCOMPARE(out.sizes().vec(), (std::vector<int64_t>{batch, classes}));

    torch::nn::functional::cross_entropy(out, y).backward();
    bool any_nonzero = false;
    for (const auto& [pname, p] : model->namedParameters()) {
      QVERIFY2(p.grad().defined(), pname.c_str());
      QVERIFY2(torch::isfinite(p.grad()).all().item<bool>(), pname.c_str());
      any_nonzero = any_nonzero || p.grad().abs().sum().item<double>() > 0.0;
    }
    QVERIFY(any_nonzero);
  }

  void resnetStemSwitchesAt64px_data() {
    QTest::addColumn<int>("size");
    QTest::addColumn<int>("kernel");
    QTest::newRow("32 px: CIFAR stem") << 32 << 3;
    QTest::newRow("63 px: CIFAR stem") << 63 << 3;
    QTest::newRow("64 px: ImageNet stem") << 64 << 7;
  }

  void resnetStemSwitchesAt64px() {
    QFETCH(int, size);
    QFETCH(int, kernel);
    auto model = make({"resnet18", 3, 10, size});
    const auto w = param(*model, "conv1.weight");
    QVERIFY(w.defined());
    QCOMPARE(w.sizes().vec(), (std::vector<int64_t>{64, 3, kernel, kernel}));
    // torchvision's parameter and buffer names.
    QVERIFY(param(*model, "layer2.0.downsample.0.weight").defined());
    QVERIFY(param(*model, "fc.weight").defined());
    bool has_running_mean = false;
    for (const auto& [n, b] : model->namedBuffers()) has_running_mean |= n == "bn1.running_mean";
    QVERIFY(has_running_mean);
    model->train(false);
    QCOMPARE(model->forward(torch::randn({1, 3, size, size})).sizes().vec(),
             (std::vector<int64_t>{1, 10}));
  }

  void tooSmallImage_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<int>("minimum");
    QTest::newRow("lenet") << "lenet" << 16;
    QTest::newRow("mnist-cnn") << "mnist-cnn" << 6;
    QTest::newRow("resnet18") << "resnet18" << 8;
    QTest::newRow("mlp") << "mlp" << 1;
  }

  void tooSmallImage() {
    QFETCH(QString, name);
    QFETCH(int, minimum);
    const std::string n = name.toStdString();
    QCOMPARE(wb::model::minImageSize(n), minimum);

    // The minimum itself builds and runs.
    auto ok = make({n, 1, 10, minimum});
    ok->train(true);
    QCOMPARE(ok->forward(torch::randn({2, 1, minimum, minimum})).sizes().vec(),
             (std::vector<int64_t>{2, 10}));

    auto small = createModel({n, 1, 10, minimum - 1});
    QVERIFY(!small.ok());
    QCOMPARE(small.error().code, wb::Errc::Model);
    const QString msg = QString::fromStdString(small.error().message);
    if (minimum > 1) {
      QVERIFY2(msg.contains(name), qPrintable(msg));
      QVERIFY2(msg.contains(QStringLiteral("at least %1 px").arg(minimum)), qPrintable(msg));
      QVERIFY2(msg.contains(QStringLiteral("data.image_size")), qPrintable(msg));
    } else {
      QVERIFY2(msg.contains(QStringLiteral("image_size 0")), qPrintable(msg));
    }
  }

  void unknownNameListsKnownOnes() {
    auto r = createModel({"vgg16", 1, 10, 28});
    QVERIFY(!r.ok());
    QCOMPARE(r.error().code, wb::Errc::Model);
    const QString msg = QString::fromStdString(r.error().message);
    QVERIFY2(msg.contains(QStringLiteral("'vgg16'")), qPrintable(msg));
    QVERIFY2(msg.contains(QStringLiteral("model.name")), qPrintable(msg));
    for (const auto& known : wb::model::builtinModels()) {
      QVERIFY2(msg.contains(QString::fromStdString(known)), qPrintable(msg));
    }
    QVERIFY2(msg.contains(QStringLiteral("torchscript:<file.pt>")), qPrintable(msg));
    QCOMPARE(wb::model::builtinModels(),
             (std::vector<std::string>{"mlp", "lenet", "mnist-cnn", "resnet18"}));
    QCOMPARE(wb::model::minImageSize("vgg16"), 0);
  }

  // The config's table of models (validator, combo box, help, capabilities) is the registry's.
  void choicesTableIsTheRegistry() {
    std::vector<std::string> listed;
    for (const auto& c : wb::modelChoices()) listed.push_back(c.value);
    std::vector<std::string> built = wb::model::builtinModels();
    std::sort(listed.begin(), listed.end());
    std::sort(built.begin(), built.end());
    QCOMPARE(listed, built);
  }

  void loadStateCopiesEveryTensor() {
    auto a = make({"resnet18", 3, 10, 32});
    auto b = make({"resnet18", 3, 10, 32});
    // Make the running stats differ too: one training-mode forward through a.
    a->train(true);
    {
      torch::NoGradGuard no_grad;
      a->forward(torch::randn({4, 3, 32, 32}));
    }
    a->train(false);
    b->train(false);
    const auto x = torch::randn({2, 3, 32, 32});
    QVERIFY(!torch::allclose(a->forward(x), b->forward(x)));
    const auto status = b->loadState(a->namedParameters(), a->namedBuffers());
    QVERIFY2(status.ok(), status.ok() ? "" : status.error().message.c_str());
    QVERIFY(torch::equal(a->forward(x), b->forward(x)));
    // Copied in place: b's tensors are still its own, not a's.
    QVERIFY(param(*a, "fc.weight").data_ptr() != param(*b, "fc.weight").data_ptr());
  }

  void loadStateRefusesMismatchAndChangesNothing_data() {
    QTest::addColumn<QString>("source");
    QTest::addColumn<int>("classes");
    QTest::addColumn<QString>("expected");
    QTest::newRow("other model") << "mnist-cnn" << 10 << "conv1.weight";
    QTest::newRow("other class count") << "lenet" << 7 << "fc2.weight";
  }

  void loadStateRefusesMismatchAndChangesNothing() {
    QFETCH(QString, source);
    QFETCH(int, classes);
    QFETCH(QString, expected);
    auto target = make({"lenet", 1, 10, 28});
    auto other = make({source.toStdString(), 1, classes, 28});
    const auto before = param(*target, "conv1.bias").clone();
    const auto status = target->loadState(other->namedParameters(), other->namedBuffers());
    QVERIFY(!status.ok());
    QCOMPARE(status.error().code, wb::Errc::Model);
    const QString msg = QString::fromStdString(status.error().message);
    QVERIFY2(msg.contains(expected), qPrintable(msg));
    QVERIFY(torch::equal(before, param(*target, "conv1.bias")));
  }
};

QTEST_APPLESS_MAIN(TestModels)
#include "test_models.moc"
