// wb/common/fs.h: a refusal names what a folder holds.
#include <QtTest/QtTest>

#include <filesystem>
#include <fstream>

#include "wb/common/fs.h"

namespace fs = std::filesystem;

class TestFs : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void aFolderIsDescribedByWhatItHolds() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    QCOMPARE(QString::fromStdString(wb::describeFolder(dir)), QStringLiteral("it is empty"));
    std::ofstream(dir / "notes.txt") << "x";
    fs::create_directory(dir / "data");
    QCOMPARE(QString::fromStdString(wb::describeFolder(dir)), QStringLiteral("it holds data/ and notes.txt"));
    for (const char* f : {"a", "b", "c"}) std::ofstream(dir / f) << "x";
    QCOMPARE(QString::fromStdString(wb::describeFolder(dir)), QStringLiteral("it holds a, b, c and 2 more"));
    QCOMPARE(QString::fromStdString(wb::describeFolder(dir / "notes.txt")), QStringLiteral("it is a file"));
  }
  void writesAreAtomicAndReadBack() {
    QTemporaryDir tmp;
    const fs::path file = fs::path(tmp.path().toStdString()) / "x.json";
    QVERIFY(wb::writeFileAtomic(file, "{}").ok());
    QVERIFY(wb::writeFileAtomic(file, "[1]").ok());
    auto back = wb::readFile(file);
    QVERIFY(back.ok());
    QCOMPARE(QString::fromStdString(*back), QStringLiteral("[1]"));
    QCOMPARE(int(std::distance(fs::directory_iterator(tmp.path().toStdString()), fs::directory_iterator())), 1);  // no temp left
  }
};

QTEST_APPLESS_MAIN(TestFs)
#include "test_fs.moc"
