// The option schema (wb/common/config_schema.h): one spec for every config field, in the field
// list's order; validate() accepts a number field's range ends and refuses just past them, in the
// schema's words; --print-schema's document carries each field's default and bounds.
#include <QtTest/QtTest>

#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "wb/common/config_schema.h"
#include "wb/common/speedups.h"
#include "wb/proto/config_json.h"

using nlohmann::json;

namespace {

// The errors of the default config with one field set to `value` (through the JSON reader, as a
// file or --set gives it).
std::string errorFor(const std::string& path, double value, bool integer) {
  json doc = wb::proto::configToJson(wb::Config{});
  std::string pointer = "/" + path;
  for (auto& c : pointer)
    if (c == '.') c = '/';
  doc[json::json_pointer(pointer)] = integer ? json(static_cast<int64_t>(value)) : json(value);
  auto r = wb::proto::configFromJson(doc);
  return r.ok() ? std::string() : r.error().message;
}

}  // namespace

class TestConfigSchema : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void everyFieldHasOneSpecInOrder() {
    std::vector<std::string> fields;
    const wb::Config defaults;
    wb::visitFields(defaults, [&](const char* path, const auto&) { fields.push_back(path); });
    const auto& schema = wb::configSchema();
    QCOMPARE(schema.size(), fields.size());
    for (size_t i = 0; i < fields.size(); ++i) {
      QCOMPARE(std::string(schema[i].path), fields[i]);
      QVERIFY2(*schema[i].label && *schema[i].help, schema[i].path);
    }
  }

  // A number field has a range; a bool or string field has none.
  void numbersAndOnlyNumbersHaveRanges() {
    const wb::Config defaults;
    wb::visitFields(defaults, [&](const char* path, const auto& member) {
      using T = std::decay_t<decltype(member)>;
      const bool isNumber = std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;
      QVERIFY2(wb::findFieldSpec(path)->number == isNumber, path);
    });
  }

  // Each bounded end is accepted; one step past it, or far past it (past what the field's C++ type
  // holds: 4294967297 epochs, a seed of -1), is refused naming the field's label, its key and its
  // range, never cut to fit.
  void validationFollowsTheRanges() {
    int checked = 0;
    for (const wb::FieldSpec& f : wb::configSchema()) {
      if (!f.number) continue;
      const wb::Range& r = f.range;
      const double step = r.integer ? 1 : 1e-6;
      const std::string named = std::string(f.label) + " (" + f.path + "): ";
      // The schema's range, or past the type of a field unbounded above, from its least to the type's most.
      const std::string least =
          std::isfinite(r.min) ? "in " + std::to_string(static_cast<long long>(r.min + (r.min_included ? 0 : 1))) + ".." : "";
      const auto refused = [&](double value, const char* where, bool asInteger) {
        const std::string bad = errorFor(f.path, value, asInteger);
        const bool ranged = bad.find(r.text()) != std::string::npos || (!least.empty() && bad.find(least) != std::string::npos);
        QVERIFY2(bad.find(named) != std::string::npos && ranged, (std::string(f.path) + " " + where + ": " + bad).c_str());
      };
      const auto accepted = [&](double value, const char* where) {
        const std::string ok = errorFor(f.path, value, r.integer);
        QVERIFY2(ok.find("(" + std::string(f.path) + ")") == std::string::npos, (std::string(f.path) + " " + where + ": " + ok).c_str());
      };
      if (std::isfinite(r.min)) {
        refused(r.min_included ? r.min - step : r.min, "below", r.integer);
        if (r.integer) refused(-1e12, "far below", true);
        accepted(r.min_included ? r.min : r.min + step, "at min");
        ++checked;
      }
      if (r.bounded()) {
        refused(r.max_included ? r.max + step : r.max, "above", r.integer);
        if (r.integer) refused(1e12, "far above", true);
        accepted(r.max_included ? r.max : r.max - step, "at max");
      }
      if (r.integer) refused(1e30, "past any integer type", false);
    }
    QVERIFY(checked >= 20);
  }

  // An enum-like field's values are its choices table's: anything else is refused, naming them.
  void choicesComeFromTheirTables() {
    QVERIFY(wb::findFieldSpec("speedups.precision")->choices == &wb::precisionChoices);
    json doc = wb::proto::configToJson(wb::Config{});
    doc["optim"]["schedule"] = "sometimes";
    doc["speedups"]["early_stopping"]["mode"] = "both";
    auto r = wb::proto::configFromJson(doc);
    QVERIFY(!r.ok());
    QVERIFY2(r.error().message.find("Schedule (optim.schedule): \"sometimes\" \u2014 one of " + wb::choiceValues(wb::scheduleChoices())) !=
                 std::string::npos, r.error().message.c_str());
    QVERIFY2(r.error().message.find("Mode (speedups.early_stopping.mode): \"both\"") != std::string::npos, r.error().message.c_str());
  }

  // A speedup's field speaks in the speedup table's words.
  void speedupFieldsUseTheTablesWords() {
    for (const wb::Speedup& s : wb::speedupTable()) {
      const wb::FieldSpec* f = wb::findFieldSpec(s.config_path);
      QVERIFY2(f && std::string(f->label) == s.label && std::string(f->help) == s.help, s.config_path);
    }
  }

  void rangesInWords() {
    QCOMPARE(wb::findFieldSpec("optim.momentum")->range.text(), std::string("in [0, 1)"));
    QCOMPARE(wb::findFieldSpec("optim.gamma")->range.text(), std::string("in (0, 1]"));
    QCOMPARE(wb::findFieldSpec("optim.lr")->range.text(), std::string("> 0"));
    QCOMPARE(wb::findFieldSpec("train.batch_size")->range.text(), std::string("in 1..65536"));
    QCOMPARE(wb::findFieldSpec("train.epochs")->range.text(), std::string("in 1..1000000"));
    QCOMPARE(wb::findFieldSpec("train.log_every")->range.text(), std::string(">= 1"));
    QCOMPARE(wb::findFieldSpec("speedups.early_stopping.stopping_threshold")->range.text(), std::string("finite"));
    QCOMPARE(wb::findFieldSpec("train.stop_at_accuracy")->range.text(), std::string("in [0, 1]"));  // a fraction
    QCOMPARE(wb::findFieldSpec("train.eval_every_steps")->range.text(), std::string(">= 0"));
    QVERIFY(errorFor("train.stop_at_accuracy", 85, false).find("Stop at accuracy (train.stop_at_accuracy): 85") != std::string::npos);
    // A value the window once clamped is valid.
    QCOMPARE(errorFor("optim.weight_decay", 2.0, false), std::string());
  }

  void printedSchemaHasDefaultsAndBounds() {
    const json schema = wb::proto::schemaJson();
    QCOMPARE(schema.size(), wb::configSchema().size());
    const json defaults = wb::proto::configToJson(wb::Config{});
    for (const json& f : schema)
      QVERIFY2(wb::proto::valueAt(defaults, f["path"]) == f["default"], f.dump().c_str());
    const auto at = [&](const char* path) {
      for (const json& f : schema)
        if (f["path"] == path) return f;
      return json();
    };
    QCOMPARE(at("train.batch_size")["max"], json(65536.0));
    QVERIFY(at("optim.weight_decay")["max"].is_null());
    QCOMPARE(at("optim.momentum")["max_included"], json(false));
    QCOMPARE(at("speedups.precision")["type"], json("string"));
    QVERIFY(!at("speedups.precision").contains("min"));
    QCOMPARE(at("optim.name")["choices"].size(), wb::optimizerChoices().size());
    QCOMPARE(at("optim.name")["choices"][0]["value"], json("sgd"));
    QVERIFY(!at("model.name").contains("choices"));  // a built-in or torchscript:<file>: checked on its own
  }
};

QTEST_APPLESS_MAIN(TestConfigSchema)
#include "test_config_schema.moc"
