// The math check's record (wb/records/math_record.h), as math.json holds it: one field list writes
// and reads it; the validation row is written "eval", no divergence is null, each row says whether
// it is within its tolerance, and keys it does not know pass through.
#include <QtTest/QtTest>

#include "wb/records/math_record.h"

using namespace wb::records;
using nlohmann::json;

namespace {

MathCheckRecord checked() {
  MathCheckRecord r;
  r.changed = "speedups.precision 32-true → bf16-mixed";
  r.speedup = "precision";
  r.device = "cpu";
  r.train_samples = 60000;
  r.dataset_id = "8e2551f9892f8bfd";
  r.checked = true;
  r.steps = 2;
  r.tolerance_per_step = 2e-6;
  r.tolerance_rule = "0.0002 % x step";
  r.rows.push_back({1, 2.30, 2.31, 2.30, 0.0043, 2e-6});
  r.rows.push_back({2, 2.29, 2.30, std::nullopt, 0.0044, 4e-6});
  r.rows.push_back({0, 2.28, 2.29, 2.28, 0.0044, 4e-6});
  r.diverged_at_step = 1;
  r.verdict = "losses differ by 0.43 % at step 1 (tolerance 0.0002 %): treated as changing the math";
  r.total_s = 1.2;
  return r;
}

}  // namespace

class TestMathRecord : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void roundTrips() {
    const json doc = mathCheckJson(checked());
    QCOMPARE(doc["kind"].get<std::string>(), std::string("math-check"));
    QCOMPARE(doc["rows"][2]["step"].get<std::string>(), std::string("eval"));
    QCOMPARE(doc["rows"][0]["step"].get<int>(), 1);
    QVERIFY(doc["rows"][1]["repeat"].is_null());
    QCOMPARE(doc["rows"][0]["within"].get<bool>(), false);
    QCOMPARE(doc["diverged_at_step"].get<int>(), 1);
    QCOMPARE(doc["tolerance"].get<std::string>(), std::string("0.0002 % x step"));
    const MathCheckRecord back = mathCheckFromJson(doc);
    QCOMPARE(back.rows.size(), size_t(3));
    QCOMPARE(back.rows[2].step, int64_t(0));
    QVERIFY(back.rows[0].repeat && !back.rows[1].repeat);
    QCOMPARE(back.train_samples, int64_t(60000));
    QCOMPARE(mathCheckJson(back), doc);
  }

  void unsetPartsAreNull() {
    MathCheckRecord r;
    r.verdict = "not checked in one process";
    const json doc = mathCheckJson(r);
    QVERIFY(doc["diverged_at_step"].is_null() && doc["speedup"].is_null());
    QCOMPARE(mathCheckFromJson(doc).speedup, std::string());
    QVERIFY(!mathCheckFromJson(json()).checked);
  }

  void unknownKeysPassThrough() {
    json doc = mathCheckJson(checked());
    doc["written_later"] = 7;
    QCOMPARE(mathCheckJson(mathCheckFromJson(doc))["written_later"].get<int>(), 7);
  }
};

QTEST_APPLESS_MAIN(TestMathRecord)
#include "test_math_record.moc"
