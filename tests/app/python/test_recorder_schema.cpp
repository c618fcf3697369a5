// The Python recorder's schema (app/python/workbench_recorder/schema.py) against core/proto's,
// which owns it: every record, each field's name and kind, the speedup keys and their off values,
// the statuses, the schema version and the contention threshold. A field added to, renamed in or
// retyped in a C++ field list (event_types.cpp, run_summary.cpp) fails here until the Python list
// follows.
#include <QtTest/QtTest>

#include <set>

#include <nlohmann/json.hpp>

#include "python_util.h"
#include "wb/proto/schema.h"

using nlohmann::json;

namespace {

// What differs between two records' {field: kind}, in words ("" when they agree).
QString recordDifference(const json& cpp, const json& python) {
  QStringList out;
  for (auto it = cpp.begin(); it != cpp.end(); ++it) {
    if (!python.contains(it.key()))
      out << QStringLiteral("Python lacks %1 (%2)").arg(QString::fromStdString(it.key()), QString::fromStdString(it->get<std::string>()));
    else if (python[it.key()] != *it)
      out << QStringLiteral("%1 is %2 in C++, %3 in Python")
                 .arg(QString::fromStdString(it.key()), QString::fromStdString(it->dump()),
                      QString::fromStdString(python[it.key()].dump()));
  }
  for (auto it = python.begin(); it != python.end(); ++it)
    if (!cpp.contains(it.key())) out << QStringLiteral("C++ has no field %1").arg(QString::fromStdString(it.key()));
  return out.join(QStringLiteral("; "));
}

}  // namespace

class TestRecorderSchema : public QObject {
  Q_OBJECT
  json cpp_ = wb::proto::runFolderSchema();
  json python_;

 private Q_SLOTS:
  void initTestCase() {
    WB_NEED(wb::test::missingPython3());
    const auto r = wb::test::runPython({QStringLiteral("-m"), QStringLiteral("workbench_recorder.schema")});
    QVERIFY2(r.rc == 0, r.describe().constData());
    python_ = json::parse(r.out.toStdString(), nullptr, false);
    QVERIFY2(python_.is_object(), r.out.left(500).constData());
  }

  void sameRecords_data() {
    QTest::addColumn<QString>("record");
    std::set<std::string> names;
    for (const json* side : {&cpp_["records"], &python_["records"]})
      for (auto it = side->begin(); it != side->end(); ++it) names.insert(it.key());
    for (const auto& n : names) QTest::newRow(n.c_str()) << QString::fromStdString(n);
  }
  void sameRecords() {
    QFETCH(QString, record);
    const std::string name = record.toStdString();
    QVERIFY2(cpp_["records"].contains(name), qPrintable(record + QStringLiteral(": Python has a record C++ does not")));
    QVERIFY2(python_["records"].contains(name), qPrintable(record + QStringLiteral(": schema.py lacks this record")));
    const QString diff = recordDifference(cpp_["records"][name], python_["records"][name]);
    QVERIFY2(diff.isEmpty(), qPrintable(record + QStringLiteral(": ") + diff));
  }

  void sameConstants_data() {
    QTest::addColumn<QString>("key");
    for (const char* k : {"version", "statuses", "speedup_keys", "speedups_off", "contended_other_cores"})
      QTest::newRow(k) << QString::fromLatin1(k);
  }
  void sameConstants() {
    QFETCH(QString, key);
    const std::string k = key.toStdString();
    QVERIFY2(cpp_.contains(k), qPrintable(key));
    QVERIFY2(python_[k] == cpp_[k], qPrintable(key + QStringLiteral(": C++ ") + QString::fromStdString(cpp_[k].dump()) +
                                               QStringLiteral(", Python ") + QString::fromStdString(python_[k].dump())));
  }

  // The comparison itself catches each kind of drift (a check that passes on anything proves nothing).
  void aDriftIsCaught() {
    json summary = python_["records"]["summary"];
    QVERIFY(recordDifference(cpp_["records"]["summary"], summary).isEmpty());
    json missing = summary;
    missing.erase("train_s");
    QVERIFY(recordDifference(cpp_["records"]["summary"], missing).contains(QLatin1String("Python lacks train_s")));
    json retyped = summary;
    retyped["steps"] = "number";
    QVERIFY(recordDifference(cpp_["records"]["summary"], retyped).contains(QLatin1String("steps is")));
    json extra = summary;
    extra["train_seconds"] = "number";
    QVERIFY(recordDifference(cpp_["records"]["summary"], extra).contains(QLatin1String("C++ has no field train_seconds")));
  }

  // The recorder refuses to write a field its list lacks (so a misspelling cannot read as absent).
  void recorderRefusesUnknownFields() {
    const auto r = wb::test::runPython(
        {QStringLiteral("-c"), QStringLiteral("from workbench_recorder import schema\n"
                                              "schema.check_fields('step', {'loss': 1.0, 'step_ms': 2.0})\n"
                                              "try:\n"
                                              "    schema.check_fields('step', {'los': 1.0})\n"
                                              "except schema.SchemaError as e:\n"
                                              "    print(e)\n")});
    QVERIFY2(r.rc == 0, r.describe().constData());
    QVERIFY2(r.out.contains("step: the schema has no field 'los'"), r.describe().constData());
  }
};

QTEST_APPLESS_MAIN(TestRecorderSchema)
#include "test_recorder_schema.moc"
