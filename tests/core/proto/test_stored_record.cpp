// A record read back (wb/proto/rundir.h readRecordFile): missing, read, or unreadable with why in
// words, never taken one for another; keepAside moves an unreadable one beside it, never over a file.
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <fstream>

#include "wb/proto/rundir.h"

namespace fs = std::filesystem;

class TestStoredRecord : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void eachStateSaysWhy_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("why");  // "" : read
    QTest::newRow("a record") << R"({"a": 1})" << "";
    QTest::newRow("cut mid-file") << R"({"a": [1, 2)" << "it is cut mid-file: its JSON stops after 11 bytes";
    QTest::newRow("emptied") << "" << "it is empty";
    QTest::newRow("only blanks") << " \n" << "it is empty";
    QTest::newRow("not JSON") << "a: 1\n" << "it is not valid JSON (at byte 1 of 5 bytes)";
    QTest::newRow("a list") << "[1]" << "it holds a JSON array, not a record";
  }
  void eachStateSaysWhy() {
    QFETCH(QString, text);
    QFETCH(QString, why);
    QTemporaryDir dir;
    const fs::path file = dir.filePath(QStringLiteral("r.json")).toStdString();
    std::ofstream(file, std::ios::binary) << text.toStdString();
    const auto r = wb::proto::readRecordFile(file);
    QCOMPARE(r.read(), why.isEmpty());
    QCOMPARE(r.unreadable(), !why.isEmpty());
    QCOMPARE(QString::fromStdString(r.why), why);
    if (r.read()) QCOMPARE(r.doc["a"].get<int>(), 1);
  }

  void aMissingFileIsMissingAndAFolderIsUnreadable() {
    QTemporaryDir dir;
    QVERIFY(wb::proto::readRecordFile(dir.filePath(QStringLiteral("none.json")).toStdString()).missing());
    const auto folder = wb::proto::readRecordFile(dir.path().toStdString());
    QVERIFY(folder.unreadable());
    QCOMPARE(folder.why, std::string("it is not a file"));
  }

  void keptAsideNeverOverAFile() {
    QTemporaryDir dir;
    const fs::path file = dir.filePath(QStringLiteral("try.json")).toStdString();
    std::ofstream(file) << "{";
    std::ofstream(dir.filePath(QStringLiteral("try.unreadable-1.json")).toStdString()) << "earlier";
    auto line = wb::proto::keepUnreadableResult(file);
    QVERIFY(line.ok());
    QVERIFY2(line->find(file.string() + " is unreadable: it is cut mid-file") == 0, line->c_str());
    QVERIFY2(line->find("kept as try.unreadable-2.json") != std::string::npos, line->c_str());
    QVERIFY(!fs::exists(file));
    std::ifstream kept(dir.filePath(QStringLiteral("try.unreadable-2.json")).toStdString());
    QCOMPARE(std::string((std::istreambuf_iterator<char>(kept)), std::istreambuf_iterator<char>()), std::string("{"));
    std::ofstream(file) << R"({"a": 1})";
    QCOMPARE(*wb::proto::keepUnreadableResult(file), std::string());  // a record that reads stays
    QVERIFY(fs::exists(file));
  }
};

QTEST_APPLESS_MAIN(TestStoredRecord)
#include "test_stored_record.moc"
