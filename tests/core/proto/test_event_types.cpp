// The typed events: what the trainer writes (writeFields) is what core/report reads back
// (read*Event), through the JSON Lines encoding; readers tolerate what older or partial writers
// leave out, and a non-finite number (written as null) reads back as unknown (NaN).
#include <QtTest/QtTest>

#include <cmath>

#include "wb/proto/event_types.h"
#include "wb/proto/events.h"

using nlohmann::json;

namespace {

json throughTheWire(const json& ev) {
  auto back = wb::proto::decodeEvent(wb::proto::encodeEvent(ev));
  return back ? *back : json();
}

}  // namespace

class TestEventTypes : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void stepRoundTrips() {
    wb::proto::StepEvent s;
    s.epoch = 2;
    s.step = 150;
    s.samples = 9600;
    s.loss = 0.42;
    s.lr = 0.01;
    s.samples_per_s = 1234.5;
    s.step_ms = 51.8;
    s.ms = wb::proto::StepPhases{1, 2, 3, 4, 5, 6};
    s.mem = {{"device", "cpu"}, {"peak", 1000}};
    s.progress = 0.5;
    s.eta_s = 12;
    json ev = wb::proto::makeEvent("step", 0, 1.0);
    wb::proto::writeFields(s, ev);
    QVERIFY(!ev.contains("comm") && !ev.contains("amp"));  // absent parts stay absent
    const auto r = wb::proto::readStepEvent(throughTheWire(ev));
    QCOMPARE(r.epoch, 2);
    QCOMPARE(r.step, int64_t{150});
    QCOMPARE(r.samples, int64_t{9600});
    QCOMPARE(r.loss, 0.42);
    QCOMPARE(r.samples_per_s, 1234.5);
    QVERIFY(r.ms.has_value());
    QCOMPARE(r.ms->data, 1.0);
    QCOMPARE(r.ms->opt, 6.0);
    QCOMPARE(r.mem.value("peak", 0), 1000);
    QVERIFY(r.comm.is_null());
    QCOMPARE(r.eta_s, 12.0);
  }

  void aNonFiniteLossReadsBackAsUnknown() {
    wb::proto::StepEvent s;
    s.loss = std::nan("");
    json ev = wb::proto::makeEvent("step", 0, 1.0);
    wb::proto::writeFields(s, ev);
    const json wire = throughTheWire(ev);
    QVERIFY(wire["loss"].is_null());
    QVERIFY(std::isnan(wb::proto::readStepEvent(wire).loss));
  }

  void missingFieldsKeepTheDefaults() {
    const auto step = wb::proto::readStepEvent(json{{"type", "step"}, {"epoch", "one"}});
    QCOMPARE(step.epoch, 0);  // another type: the default
    QVERIFY(!step.ms.has_value());
    QVERIFY(std::isnan(step.lr));
    const auto eval = wb::proto::readEvalEvent(json{{"type", "eval"}, {"val_acc", 0.9}});
    QCOMPARE(eval.val_acc, 0.9);
    QVERIFY(std::isnan(eval.val_loss));
    const auto epoch = wb::proto::readEpochEvent(json{{"type", "epoch"}, {"samples_per_s", 10.0}});
    QCOMPARE(epoch.samples_per_s, 10.0);
    QCOMPARE(epoch.train_samples_per_s, 0.0);  // an older writer's epoch
    QVERIFY(epoch.complete);
  }

  void evalAndEpochRoundTrip() {
    wb::proto::EvalEvent e;
    e.epoch = 3;
    e.val_loss = 0.3;
    e.val_acc = 0.88;
    e.eval_samples = 1000;
    e.inference_mode = true;
    json ev = wb::proto::makeEvent("eval", 0, 2.0);
    wb::proto::writeFields(e, ev);
    const auto r = wb::proto::readEvalEvent(throughTheWire(ev));
    QCOMPARE(r.epoch, 3);
    QCOMPARE(r.val_acc, 0.88);
    QCOMPARE(r.eval_samples, int64_t{1000});
    QVERIFY(r.inference_mode);

    wb::proto::EpochEvent p;
    p.epoch = 3;
    p.train_seconds = 2.5;
    p.samples = 5000;
    p.train_samples_per_s = 2000;
    p.samples_per_s = 2000;
    p.complete = false;
    json ep = wb::proto::makeEvent("epoch", 0, 3.0);
    wb::proto::writeFields(p, ep);
    const auto q = wb::proto::readEpochEvent(throughTheWire(ep));
    QCOMPARE(q.train_samples_per_s, 2000.0);
    QCOMPARE(q.samples, int64_t{5000});
    QVERIFY(!q.complete);
  }
};

QTEST_APPLESS_MAIN(TestEventTypes)
#include "test_event_types.moc"
