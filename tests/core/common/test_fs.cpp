// wb/common/fs.h: a refusal names what a folder holds.
#include <QtTest/QtTest>

#include <chrono>
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
  // A dataset's fingerprint: the same while nothing under it changes; another when a file is
  // added, resized or rewritten (its time); none for a folder that is missing or empty.
  void aFolderFingerprintChangesWithItsFiles() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    QCOMPARE(QString::fromStdString(wb::folderFingerprint(dir)), QString());
    QCOMPARE(QString::fromStdString(wb::folderFingerprint(dir / "missing")), QString());
    fs::create_directory(dir / "train");
    std::ofstream(dir / "train" / "a.bin") << "1234";
    const std::string first = wb::folderFingerprint(dir);
    QCOMPARE(int(first.size()), 16);
    QCOMPARE(wb::folderFingerprint(dir), first);
    std::ofstream(dir / "train" / "b.bin") << "x";
    const std::string added = wb::folderFingerprint(dir);
    QVERIFY(added != first);
    std::ofstream(dir / "train" / "b.bin") << "xy";  // resized
    QVERIFY(wb::folderFingerprint(dir) != added);
    const std::string resized = wb::folderFingerprint(dir);
    fs::last_write_time(dir / "train" / "a.bin", fs::last_write_time(dir / "train" / "a.bin") - std::chrono::hours(1));
    QVERIFY(wb::folderFingerprint(dir) != resized);  // rewritten at another time
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
