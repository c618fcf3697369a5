// cmake/WorkbenchCuda.cmake's rules, run by `cmake -P` on files this test makes: the CUDA major
// version a LibTorch links (its NEEDED libcudart.so.N), nvcc's version, and the mismatch error
// that names both; and wb_cuda_prepare stops with a clear error when nvcc is missing.
#include <QtTest/QtTest>

#include <QTemporaryDir>

#include "../support/proc.h"

namespace {

void writeFile(const QString& path, const QByteArray& bytes, bool executable = false) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(bytes);
  f.close();
  if (executable) f.setPermissions(f.permissions() | QFileDevice::ExeOwner);
}

// Runs `script` (CMake code after including WorkbenchCuda.cmake) with cmake -P.
wb::test::ProcResult runCMake(const QTemporaryDir& dir, const QByteArray& script) {
  const QString path = dir.filePath(QStringLiteral("check.cmake"));
  writeFile(path, "include(\"" WB_SOURCE_DIR "/cmake/WorkbenchCuda.cmake\")\n" + script);
  return wb::test::runProcess(QStringLiteral(WB_CMAKE), {QStringLiteral("-P"), path}, 60000);
}

}  // namespace

class TestWorkbenchCuda : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void majorLinkedByALibrary_data() {
    QTest::addColumn<QByteArrayList>("needed");
    QTest::addColumn<QString>("major");
    QTest::newRow("CUDA 13 wheel") << QByteArrayList{"libc10.so", "libcudart.so.13", "libstdc++.so.6"} << QStringLiteral("13");
    QTest::newRow("Debian 13's CUDA 12") << QByteArrayList{"libcudart.so.12"} << QStringLiteral("12");
    QTest::newRow("a CPU LibTorch") << QByteArrayList{"libc10.so", "libgomp.so.1"} << QString();
  }
  void majorLinkedByALibrary() {
    QFETCH(QByteArrayList, needed);
    QFETCH(QString, major);
    QTemporaryDir dir;
    // An ELF's dynamic string table: the names between NUL bytes, amid binary data.
    const QByteArray dynstr = QByteArray(1, '\0') + needed.join('\0') + QByteArray(1, '\0');
    writeFile(dir.filePath(QStringLiteral("libc10_cuda.so")), QByteArray(64, '\x01') + dynstr + QByteArray(64, '\x02'));
    const auto r = runCMake(dir, "wb_cuda_major_linked_by(\"" + dir.filePath(QStringLiteral("libc10_cuda.so")).toUtf8() +
                                     "\" m)\nmessage(\"major=[${m}]\")\n");
    QVERIFY2(r.rc == 0, r.describe().constData());
    QVERIFY2(r.all().contains(QStringLiteral("major=[%1]").arg(major)), r.describe().constData());
  }

  void nvccVersionAndTheMismatchRule() {
    QTemporaryDir dir;
    const QString nvcc = dir.filePath(QStringLiteral("nvcc"));
    writeFile(nvcc, "#!/bin/sh\necho 'nvcc: NVIDIA (R) Cuda compiler driver'\necho 'Cuda compilation tools, release 12.4, V12.4.131'\n",
              true);
    const auto r = runCMake(dir, "wb_nvcc_version(\"" + nvcc.toUtf8() + "\" v)\nmessage(\"nvcc=[${v}]\")\n"
                                 "wb_cuda_mismatch(12 \"${v}\" same)\nmessage(\"same=[${same}]\")\n"
                                 "wb_cuda_mismatch(13 \"${v}\" other)\nmessage(\"other=[${other}]\")\n");
    QVERIFY2(r.rc == 0, r.describe().constData());
    const QString out = r.all();
    QVERIFY2(out.contains(QStringLiteral("nvcc=[12.4]")), r.describe().constData());
    QVERIFY2(out.contains(QStringLiteral("same=[]")), r.describe().constData());
    QVERIFY2(out.contains(QStringLiteral("links CUDA 13")) && out.contains(QStringLiteral("found is 12.4")), r.describe().constData());
  }

  void aCudaLibTorchWithoutNvccIsAClearError() {
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("torch/lib")));
    writeFile(dir.filePath(QStringLiteral("torch/lib/libc10_cuda.so")), QByteArray(1, '\0') + "libcudart.so.13" + QByteArray(1, '\0'));
    // Found only under the prefix (as a wheel's torch/share/cmake), with nvcc looked for nowhere.
    const auto r = runCMake(dir, "set(CMAKE_FIND_LIBRARY_PREFIXES lib)\nset(CMAKE_FIND_LIBRARY_SUFFIXES .so)\n"
                                 "set(CMAKE_PREFIX_PATH \"" + dir.filePath(QStringLiteral("torch/share/cmake")).toUtf8() +
                                 "\")\nset(WB_NVCC_HINTS \"" + dir.filePath(QStringLiteral("none")).toUtf8() +
                                 "\")\nset(CMAKE_FIND_USE_SYSTEM_ENVIRONMENT_PATH OFF)\n"
                                 "set(CMAKE_FIND_USE_CMAKE_SYSTEM_PATH OFF)\nwb_cuda_prepare()\n");
    QVERIFY2(r.rc != 0, r.describe().constData());
    QVERIFY2(r.all().contains(QStringLiteral("built with CUDA 13")) && r.all().contains(QStringLiteral("nvcc")),
             r.describe().constData());
  }
};

QTEST_GUILESS_MAIN(TestWorkbenchCuda)
#include "test_workbench_cuda.moc"
