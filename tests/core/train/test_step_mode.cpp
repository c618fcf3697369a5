// How a step runs for a config, from one place (the trainer's and the in-process probes'): fp16
// and pinned memory only on CUDA, bf16 on either, channels-last as configured; an input batch
// takes the NHWC layout only when it is 4-D and channels-last is on.
#include <QtTest/QtTest>

#include "wb/train/step_mode.h"

using wb::train::StepMode;
using wb::train::stepModeOf;

class TestStepMode : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void theModeFollowsTheConfigAndTheDevice() {
    wb::Config c;
    c.speedups.precision = "16-mixed";
    c.speedups.pin_memory = true;
    c.speedups.channels_last = true;
    const StepMode cpu = stepModeOf(c, false), cuda = stepModeOf(c, true);
    QVERIFY(!cpu.fp16 && !cpu.pin && !cpu.bf16 && cpu.channels_last);  // no CUDA: fp16 and pinning do nothing
    QVERIFY(cuda.fp16 && cuda.pin && !cuda.bf16);
    c.speedups.precision = "bf16-mixed";
    QVERIFY(stepModeOf(c, false).bf16 && !stepModeOf(c, false).fp16);
    c.speedups.precision = "32-true";
    c.speedups.channels_last = false;
    const StepMode plain = stepModeOf(c, true);
    QVERIFY(!plain.bf16 && !plain.fp16 && !plain.channels_last);
  }

  void anInputBatchTakesTheStepsLayout() {
    const torch::Tensor images = torch::rand({2, 3, 4, 4}), flat = torch::rand({2, 8});
    QVERIFY(wb::train::inStepLayout(images, true).is_contiguous(at::MemoryFormat::ChannelsLast));
    QVERIFY(!wb::train::inStepLayout(images, true).is_contiguous());
    QVERIFY(wb::train::inStepLayout(images, false).is_contiguous());
    QCOMPARE(wb::train::inStepLayout(flat, true).dim(), int64_t(2));
    QVERIFY(torch::equal(wb::train::inStepLayout(images, true), images));  // the same values
  }
};

QTEST_APPLESS_MAIN(TestStepMode)
#include "test_step_mode.moc"
