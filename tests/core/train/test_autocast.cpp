// AutocastGuard: bf16 autocast on CPU runs a Linear in bf16, nests, restores the previous state
// (flag and dtype) on exit; enabled=false changes nothing.
#include <QtTest/QtTest>

#include <torch/torch.h>

#include "wb/train/compat.h"

using wb::compat::AutocastGuard;

class TestAutocast : public QObject {
  Q_OBJECT
  torch::nn::Linear linear_{nullptr};
  torch::Tensor x_;

 private Q_SLOTS:
  void initTestCase() {
    at::set_num_threads(1);
    torch::manual_seed(11);
    linear_ = torch::nn::Linear(16, 4);
    x_ = torch::randn({3, 16});
  }

  void bf16OnCpu() {
    QVERIFY(!wb::compat::autocastEnabled(c10::kCPU));
    const auto dtype_before = wb::compat::autocastDtype(c10::kCPU);
    QCOMPARE(linear_->forward(x_).scalar_type(), at::kFloat);
    {
      AutocastGuard guard(c10::kCPU, at::kBFloat16, true);
      QVERIFY(wb::compat::autocastEnabled(c10::kCPU));
      QCOMPARE(wb::compat::autocastDtype(c10::kCPU), at::kBFloat16);
      auto y = linear_->forward(x_);
      QCOMPARE(y.scalar_type(), at::kBFloat16);
      {
        // A disabled guard inside an enabled one leaves autocast on.
        AutocastGuard off(c10::kCPU, at::kBFloat16, false);
        QCOMPARE(linear_->forward(x_).scalar_type(), at::kBFloat16);
      }
      QVERIFY(wb::compat::autocastEnabled(c10::kCPU));
    }
    QVERIFY(!wb::compat::autocastEnabled(c10::kCPU));
    QCOMPARE(wb::compat::autocastDtype(c10::kCPU), dtype_before);
    QCOMPARE(linear_->forward(x_).scalar_type(), at::kFloat);
  }

  void bf16ResultIsClose() {
    auto fp32 = linear_->forward(x_);
    torch::Tensor bf16;
    {
      AutocastGuard guard(c10::kCPU, at::kBFloat16, true);
      bf16 = linear_->forward(x_);
    }
    QVERIFY(!torch::equal(bf16.to(at::kFloat), fp32));  // it did round
    QVERIFY(torch::allclose(bf16.to(at::kFloat), fp32, /*rtol=*/3e-2, /*atol=*/3e-2));
  }

  // An inner guard closing must not switch off the outer one's autocast.
  void nestedGuardKeepsOuterEnabled() {
    AutocastGuard outer(c10::kCPU, at::kBFloat16, true);
    {
      AutocastGuard inner(c10::kCPU, at::kBFloat16, true);
      QCOMPARE(linear_->forward(x_).scalar_type(), at::kBFloat16);
    }
    QVERIFY(wb::compat::autocastEnabled(c10::kCPU));
    QCOMPARE(linear_->forward(x_).scalar_type(), at::kBFloat16);
  }

  // LibTorch 1.13's CPU autocast takes bf16 only, so the dtype restore is checked on the CUDA
  // state, which is plain thread-local state and settable without a GPU.
  void nestedGuardRestoresDtype() {
    const auto dtype_before = wb::compat::autocastDtype(c10::kCUDA);
    QVERIFY(!wb::compat::autocastEnabled(c10::kCUDA));
    {
      AutocastGuard outer(c10::kCUDA, at::kHalf, true);
      {
        AutocastGuard inner(c10::kCUDA, at::kBFloat16, true);
        QCOMPARE(wb::compat::autocastDtype(c10::kCUDA), at::kBFloat16);
      }
      QVERIFY(wb::compat::autocastEnabled(c10::kCUDA));
      QCOMPARE(wb::compat::autocastDtype(c10::kCUDA), at::kHalf);
    }
    QVERIFY(!wb::compat::autocastEnabled(c10::kCUDA));
    QCOMPARE(wb::compat::autocastDtype(c10::kCUDA), dtype_before);
    QVERIFY(!wb::compat::autocastEnabled(c10::kCPU));  // the CPU state was never touched
  }

  void disabledIsNoOp() {
    {
      AutocastGuard guard(c10::kCPU, at::kBFloat16, false);
      QVERIFY(!wb::compat::autocastEnabled(c10::kCPU));
      QCOMPARE(linear_->forward(x_).scalar_type(), at::kFloat);
    }
    QVERIFY(!wb::compat::autocastEnabled(c10::kCPU));
  }

  // Weights changed in place between guarded forwards (an optimiser step) must be seen: the
  // outermost guard's exit drops autocast's cached casts.
  void weightUpdatesAreSeenAfterTheGuard() {
    torch::Tensor before, after;
    {
      AutocastGuard guard(c10::kCPU, at::kBFloat16, true);
      before = linear_->forward(x_);
    }
    {
      torch::NoGradGuard no_grad;
      linear_->weight.add_(1.0);
    }
    {
      AutocastGuard guard(c10::kCPU, at::kBFloat16, true);
      after = linear_->forward(x_);
    }
    {
      torch::NoGradGuard no_grad;
      linear_->weight.sub_(1.0);
    }
    QVERIFY(!torch::allclose(before.to(at::kFloat), after.to(at::kFloat)));
  }

  void otherDeviceTypeIsRejected() {
    QVERIFY_THROWS_EXCEPTION(c10::Error, AutocastGuard(c10::kMeta, at::kBFloat16, true));
  }
};

QTEST_APPLESS_MAIN(TestAutocast)
#include "test_autocast.moc"
