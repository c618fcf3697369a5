// One field list drives a record's writer and its tolerant reader (wb/proto/fields.h): members,
// groups of members written as an object of their own, enums as words, records with their own
// reader, derived fields, optionals written as null, non-finite numbers as null, and keys a newer writer added kept.
#include <QtTest/QtTest>

#include <cmath>
#include <limits>

#include "wb/proto/fields.h"

namespace demo {

enum class Colour { Red, Blue };
std::string colourWord(Colour c) { return c == Colour::Red ? "red" : "blue"; }
Colour colourOf(const std::string& w) { return w == "blue" ? Colour::Blue : Colour::Red; }

struct Inner {
  int n = 0;
};
nlohmann::json innerJson(const Inner& i) { return {{"count", i.n}}; }
Inner innerOf(const nlohmann::json& j) { return Inner{j.is_object() ? j.value("count", -1) : -1}; }

struct Record {
  std::string name = "none";
  double rate = 1.5;
  std::optional<double> lo, hi, best;
  Colour colour = Colour::Red;
  Inner inner;
  std::vector<std::string> dirs;
  nlohmann::json unknown;
};

WB_FIELDS(Record) {
  f("name", e.name), f("rate", e.rate);
  f("range", wb::proto::group([&](auto&& g) { g("lo", e.lo), g("hi", e.hi); }));
  f("colour", wb::proto::words(e.colour, colourWord, colourOf));
  f("inner", wb::proto::via(e.inner, innerJson, innerOf));
  f("dirs", e.dirs), f("best", wb::proto::orNull(e.best));
  f("dir_count", wb::proto::derived(int(e.dirs.size())));
}

}  // namespace demo

using nlohmann::json;

class TestFields : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void writesTheFileShape() {
    demo::Record r;
    r.name = "a", r.lo = 1, r.colour = demo::Colour::Blue, r.inner.n = 7, r.dirs = {"x", "y"};
    json out = json::object();
    wb::proto::fieldsToJson(r, out);
    QCOMPARE(out["range"]["lo"].get<double>(), 1.0);
    QVERIFY(!out["range"].contains("hi"));  // an absent optional stays absent
    QCOMPARE(out["colour"].get<std::string>(), std::string("blue"));
    QCOMPARE(out["inner"]["count"].get<int>(), 7);
    QCOMPARE(out["dir_count"].get<int>(), 2);
    QVERIFY(out.contains("best") && out["best"].is_null());  // orNull: null, not absent
    r.best = 0.5;
    wb::proto::fieldsToJson(r, out);
    QCOMPARE(out["best"].get<double>(), 0.5);
    QCOMPARE(*wb::proto::readAs<demo::Record>(out).best, 0.5);
  }

  void notFiniteIsNull() {
    demo::Record r;
    r.rate = std::numeric_limits<double>::quiet_NaN();
    json out = json::object();
    wb::proto::fieldsToJson(r, out);
    QVERIFY(out["rate"].is_null());
    QCOMPARE(wb::proto::readAs<demo::Record>(json{{"rate", nullptr}}).rate, 1.5);  // null keeps the default
  }

  void readsBackWhatItWrote() {
    demo::Record r;
    r.name = "b", r.hi = 3, r.colour = demo::Colour::Blue, r.inner.n = 4, r.dirs = {"d"};
    json out = json::object();
    wb::proto::fieldsToJson(r, out);
    const auto back = wb::proto::readAs<demo::Record>(out);
    QCOMPARE(back.name, r.name);
    QVERIFY(!back.lo && back.hi && *back.hi == 3.0);
    QVERIFY(back.colour == demo::Colour::Blue);
    QCOMPARE(back.inner.n, 4);
    QCOMPARE(back.dirs, r.dirs);
  }

  void wrongTypesKeepDefaults() {
    const json bad = {{"name", 3}, {"rate", "fast"}, {"range", "wide"}, {"colour", 2}, {"dirs", "d"}, {"dir_count", 9}};
    const auto r = wb::proto::readAs<demo::Record>(bad);
    QCOMPARE(r.name, std::string("none"));
    QCOMPARE(r.rate, 1.5);
    QVERIFY(!r.lo && !r.hi);
    QVERIFY(r.colour == demo::Colour::Red);
    QVERIFY(r.dirs.empty());
    QVERIFY(!r.unknown.contains("dir_count"));  // a derived field is the list's own, not passed on
  }

  void keysANewerWriterAddedPassThrough() {
    const json newer = {{"name", "c"}, {"added_later", {{"k", 1}}}, {"range", {{"lo", 2}}}};
    const auto r = wb::proto::readAs<demo::Record>(newer);
    QVERIFY(r.unknown.contains("added_later"));
    json out = json::object();
    wb::proto::fieldsToJson(r, out);
    QCOMPARE(out["added_later"], newer["added_later"]);
    QCOMPARE(out["name"].get<std::string>(), std::string("c"));
  }

  void kindsForTheSchema() {
    const json kinds = wb::proto::fieldKinds<demo::Record>();
    QCOMPARE(kinds["colour"].get<std::string>(), std::string("string"));
    QCOMPARE(kinds["range"].get<std::string>(), std::string("object"));
    QCOMPARE(kinds["dir_count"].get<std::string>(), std::string("integer"));
  }
};

QTEST_APPLESS_MAIN(TestFields)
#include "test_fields.moc"
