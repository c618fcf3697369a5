// Which changes are taken to need no fewer samples to the target (samplesNeverFewer): a larger
// global batch (more devices, a larger batch, more accumulation) at an effective lr scaled at most
// in proportion, and nothing else. The ladder answers such a variant by the bound this allows,
// without a run to the target, when its throughput is too slow for it to be faster; the bound's
// composition is tested in tests/core/stats/test_time_to_target.cpp, the whole path (try
// --only-faster) in tests/app/test_cli_try_parts.cpp.
#include <QtTest/QtTest>

#include "wb/experiment/composed_try.h"

using namespace wb::experiment;

namespace {

TryOptions change(void (*edit)(wb::Config&)) {
  TryOptions o;
  o.baseline.train.batch_size = 64;
  o.baseline.optim.lr = 0.01;
  o.variant = o.baseline;
  edit(o.variant);
  return o;
}

}  // namespace

class TestComposedTry : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void aLargerGlobalBatchNeedsNoFewerSamples() {
    QVERIFY(samplesNeverFewer(change([](wb::Config& c) { c.speedups.devices = 2; })));                        // lr as given
    QVERIFY(samplesNeverFewer(change([](wb::Config& c) { c.speedups.devices = 2, c.optim.lr = 0.02; })));     // linear, by hand
    QVERIFY(samplesNeverFewer(change([](wb::Config& c) { c.speedups.devices = 4, c.optim.lr_scaling = "linear"; })));
    QVERIFY(samplesNeverFewer(change([](wb::Config& c) { c.speedups.devices = 2, c.optim.lr_scaling = "sqrt"; })));
    QVERIFY(samplesNeverFewer(change([](wb::Config& c) { c.train.batch_size = 256, c.optim.lr = 0.04; })));
    QVERIFY(samplesNeverFewer(change([](wb::Config& c) { c.speedups.grad_accumulation = 4; })));
  }

  // An lr raised beyond the batch's growth may make each sample count for more; a smaller global
  // batch may need fewer samples; any other change of the math is not a batch at all.
  void anythingElseIsMeasured() {
    QVERIFY(!samplesNeverFewer(change([](wb::Config& c) { c.speedups.devices = 2, c.optim.lr = 0.03; })));
    QVERIFY(!samplesNeverFewer(change([](wb::Config& c) { c.train.batch_size = 32; })));
    QVERIFY(!samplesNeverFewer(change([](wb::Config& c) { c.speedups.devices = 2, c.speedups.precision = "bf16-mixed"; })));
    QVERIFY(!samplesNeverFewer(change([](wb::Config& c) { c.speedups.devices = 2, c.optim.weight_decay = 1e-3; })));
    QVERIFY(!samplesNeverFewer(change([](wb::Config& c) { c.speedups.workers = 2; })));  // keeps the math: nothing to bound
    QVERIFY(!samplesNeverFewer(change([](wb::Config& c) { c.speedups.devices = 2, c.train.epochs = 3; })));
  }
};

QTEST_MAIN(TestComposedTry)
#include "test_composed_try.moc"
