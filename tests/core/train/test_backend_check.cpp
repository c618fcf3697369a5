// The start-up self-check of the LibTorch build: passes on a build that computes right, and a
// build that computes wrong (made so by the check's tamper hook, which changes the library's real
// results before they meet the reference) is caught: cured by switching oneDNN off when only
// oneDNN's results are wrong, a clear error naming the version when wrong either way.
#include <QtTest/QtTest>

#include <ATen/Context.h>
#include <torch/torch.h>
#include <torch/version.h>

#include "wb/train/backend_check.h"

using wb::train::BackendCheckHooks;
using wb::train::checkBackend;

namespace {
enum Fault { None, NoiseBelowTolerance, NanWithOneDnn, OffWithOneDnn, NanAlways, OffAlways };

BackendCheckHooks hooksFor(Fault fault) {
  BackendCheckHooks h;
  h.tamper = [fault](std::vector<torch::Tensor>& got, bool mkldnn) {
    const bool hit = fault == NanAlways || fault == OffAlways || fault == NoiseBelowTolerance ||
                     ((fault == NanWithOneDnn || fault == OffWithOneDnn) && mkldnn);
    if (!hit) return;
    torch::Tensor& g = got.at(1);  // the first conv's grad weight
    if (fault == NanWithOneDnn || fault == NanAlways)
      g.view(-1)[3] = std::nan("");
    else if (fault == NoiseBelowTolerance)
      g.mul_(1.0 + 1e-5);
    else
      g.add_(g.abs().max() * 0.05);
  };
  return h;
}
// Independently of the check: LeNet's second convolution backward (batch 64, 10 -> 20 channels,
// 5 x 5 on 12 x 12, one thread) with oneDNN on and off; whether their input gradients differ by
// more than 1e-3 of the largest.
bool oneDnnDisagreesHere() {
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  torch::manual_seed(0);
  const auto x = torch::randn({64, 10, 12, 12}), w = torch::randn({20, 10, 5, 5});
  auto gradInput = [&](bool mkldnn) {
    at::globalContext().setUserEnabledMkldnn(mkldnn);
    auto xi = x.clone().requires_grad_(true);
    torch::conv2d(xi, w).sum().backward();
    return xi.grad();
  };
  const auto on = gradInput(true), off = gradInput(false);
  at::globalContext().setUserEnabledMkldnn(true);
  at::set_num_threads(threads);
  return ((on - off).abs().max() / off.abs().max()).item<double>() > 1e-3;
}
}  // namespace

class TestBackendCheck : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void cleanup() { at::globalContext().setUserEnabledMkldnn(true); }

  void passesOnThisBuild() {
    auto r = checkBackend();
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QVERIFY(r->ok);
    // A build whose oneDNN is broken (Debian 13's 2.6 on AVX-512) passes with oneDNN off, saying so.
    if (r->mkldnn_disabled) {
      QVERIFY2(r->detail.find("oneDNN is switched off") != std::string::npos, r->detail.c_str());
      // Never on a build whose oneDNN computes right: here its results really differ.
      QVERIFY2(oneDnnDisagreesHere(), r->detail.c_str());
    }
    else
      QVERIFY2(r->detail.find("matches") != std::string::npos, r->detail.c_str());
    const auto j = r->toJson();
    QCOMPARE(QString::fromStdString(j["versions"]["libtorch"].get<std::string>()), QStringLiteral(TORCH_VERSION));
    QCOMPARE(j["ok"].get<bool>(), true);
    QVERIFY(j.contains("mkldnn_disabled") && j.contains("detail"));
    if (at::hasMKLDNN()) QVERIFY(j["versions"]["onednn"].is_string());
  }

  void detectsAWrongBuild_data() {
    QTest::addColumn<int>("fault");
    QTest::addColumn<bool>("needsOneDnn");
    QTest::addColumn<bool>("runs");            // the check lets the run go on
    QTest::addColumn<bool>("mkldnnDisabled");  // ... with oneDNN switched off
    QTest::addColumn<QString>("says");         // in the detail or the error
    QTest::newRow("float rounding is not a fault") << int(NoiseBelowTolerance) << false << true << false << "matches";
    QTest::newRow("NaN from oneDNN only: oneDNN off")
        << int(NanWithOneDnn) << true << true << true << "non-finite value(s)";
    QTest::newRow("5% off from oneDNN only: oneDNN off") << int(OffWithOneDnn) << true << true << true << "off by";
    QTest::newRow("NaN either way: the run fails") << int(NanAlways) << false << false << false << "non-finite value(s)";
    QTest::newRow("5% off either way: the run fails") << int(OffAlways) << false << false << false << "off by";
  }
  void detectsAWrongBuild() {
    QFETCH(int, fault);
    QFETCH(bool, needsOneDnn);
    QFETCH(bool, runs);
    QFETCH(bool, mkldnnDisabled);
    QFETCH(QString, says);
    if (needsOneDnn && !at::hasMKLDNN()) QSKIP("this LibTorch has no oneDNN to switch off");
    if (fault == NoiseBelowTolerance) {
      // Rounding below the tolerance changes nothing: the outcome is this build's own. oneDNN
      // stays on where it computes right; a build whose oneDNN is wrong (Debian 13's 2.6 on
      // AVX-512) has it switched off either way.
      at::globalContext().setUserEnabledMkldnn(true);
      auto untampered = checkBackend();
      QVERIFY2(untampered.ok(), untampered.ok() ? "" : untampered.error().message.c_str());
      mkldnnDisabled = untampered->mkldnn_disabled;
      if (mkldnnDisabled) says = QStringLiteral("oneDNN is switched off");
    }
    at::globalContext().setUserEnabledMkldnn(true);
    auto r = checkBackend(nullptr, hooksFor(static_cast<Fault>(fault)));
    QCOMPARE(r.ok(), runs);
    const std::string text = r.ok() ? r->detail : r.error().message;
    QVERIFY2(text.find(says.toStdString()) != std::string::npos, text.c_str());
    if (runs) {
      QVERIFY(r->ok);
      QCOMPARE(r->mkldnn_disabled, mkldnnDisabled);
      QCOMPARE(at::globalContext().userEnabledMkldnn(), !mkldnnDisabled);
      if (mkldnnDisabled) QVERIFY2(text.find("LibTorch " TORCH_VERSION) != std::string::npos, text.c_str());
    } else {
      QCOMPARE(r.error().code, wb::Errc::Internal);
      QVERIFY2(text.find("LibTorch " TORCH_VERSION) != std::string::npos, text.c_str());
      QVERIFY2(text.find("use another LibTorch build") != std::string::npos, text.c_str());
    }
  }
};

QTEST_APPLESS_MAIN(TestBackendCheck)
#include "test_backend_check.moc"
