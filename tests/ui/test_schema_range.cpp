// The window's ranges are validation's: every spin box of the set-up panel that edits a config
// field takes its bounds from the option schema, so its ends are values validate() accepts, one
// step past a bounded end is one it refuses, and a field unbounded above is not clamped.
#include <QAbstractSpinBox>
#include <QDoubleSpinBox>
#include <QSpinBox>
#include <QtTest/QtTest>

#include <cmath>

#include <nlohmann/json.hpp>

#include "setup/schema_range.h"
#include "setup/setup_panel.h"
#include "wb/common/config_schema.h"
#include "wb/proto/config_json.h"

using nlohmann::json;

namespace {

// Whether the default config with `path` set to `value` validates (through the JSON reader).
bool valid(const QString& path, double value, bool integer) {
  json doc = wb::proto::configToJson(wb::Config{});
  std::string pointer = "/" + path.toStdString();
  for (auto& c : pointer)
    if (c == '.') c = '/';
  doc[json::json_pointer(pointer)] = integer ? json(static_cast<int64_t>(value)) : json(value);
  return wb::proto::configFromJson(doc).ok();
}

struct Box {
  double min, max, step;
  bool integer;
};

// In the field's units: a percentage box (schemaScale 100) of a fraction field.
Box boxOf(QAbstractSpinBox* w) {
  if (auto* s = qobject_cast<QSpinBox*>(w)) {
    const double scale = s->property("schemaScale").isValid() ? s->property("schemaScale").toDouble() : 1.0;
    return {s->minimum() / scale, s->maximum() / scale, 1 / scale, scale == 1.0};
  }
  auto* d = qobject_cast<QDoubleSpinBox*>(w);
  return {d->minimum(), d->maximum(), std::pow(10.0, -d->decimals()), false};
}

}  // namespace

class TestSchemaRange : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void everyConfigSpinBoxHasValidationsRange() {
    wb::ui::SetupPanel panel;
    int checked = 0;
    for (QAbstractSpinBox* w : panel.findChildren<QAbstractSpinBox*>()) {
      const wb::FieldSpec* spec = wb::findFieldSpec(w->objectName().toStdString());
      if (!spec) continue;  // not a config field's box
      const QByteArray name = w->objectName().toUtf8();
      QVERIFY2(spec->number, name.constData());
      const Box b = boxOf(w);
      QVERIFY2(valid(w->objectName(), b.min, b.integer), name.constData());
      QVERIFY2(valid(w->objectName(), b.max, b.integer), name.constData());
      if (std::isfinite(spec->range.min))
        QVERIFY2(!valid(w->objectName(), b.min - b.step, b.integer) || w->objectName() == QLatin1String("seed"), name.constData());
      if (spec->range.bounded())
        QVERIFY2(!valid(w->objectName(), b.max + b.step, b.integer), name.constData());
      else
        QVERIFY2(b.max >= (b.integer ? double(std::numeric_limits<int>::max()) : wb::ui::kDoubleBoxLimit), name.constData());
      ++checked;
    }
    // Seed, momentum, weight decay, warm-up, lr-scaling warm-up, batch, epochs, max steps, the two
    // limits, the hold-out share, workers, devices, patience, min delta.
    QVERIFY2(checked >= 15, qPrintable(QString::number(checked)));
  }

  // A valid config the window once clamped (weight decay 2, patience 5000) reads back unchanged.
  void aValidConfigIsNotClamped() {
    wb::ui::SetupPanel panel;
    json doc = wb::proto::configToJson(wb::Config{});
    doc["optim"]["weight_decay"] = 2.0;
    doc["speedups"]["early_stopping"]["patience"] = 5000;
    doc["speedups"]["early_stopping"]["min_delta"] = 25.0;
    doc["train"]["epochs"] = 200000;
    panel.setConfigJson(doc);
    const json back = panel.configJson();
    QCOMPARE(back["optim"]["weight_decay"].get<double>(), 2.0);
    QCOMPARE(back["speedups"]["early_stopping"]["patience"].get<int>(), 5000);
    QCOMPARE(back["speedups"]["early_stopping"]["min_delta"].get<double>(), 25.0);
    QCOMPARE(back["train"]["epochs"].get<int>(), 200000);
  }
};

QTEST_MAIN(TestSchemaRange)
#include "test_schema_range.moc"
