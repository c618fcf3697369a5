// The recorder's refusals: a bad run_dir, a folder it cannot write or that another run holds, a
// config that is not JSON, a value out of its meaning: each a RecorderError that names the
// argument, field or file, raised before anything is written.
#include <QtTest/QtTest>

#include "python_util.h"

class TestRecorderErrors : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() {
    WB_NEED(wb::test::missingPython3());
  }

  void refusals_data() {
    QTest::addColumn<QString>("code");      // runs with d: a fresh empty folder
    QTest::addColumn<QString>("expected");  // in the RecorderError's message
    QTest::newRow("run_dir not a path") << "Recorder(42, {})" << "run_dir: expected a folder path";
    QTest::newRow("run_dir a file") << "open(d + '/f', 'w').close(); Recorder(d + '/f', {})" << "/f: is a file, not a folder";
    QTest::newRow("cannot create") << "Recorder('/etc/hostname/run', {})" << "run_dir /etc/hostname/run: cannot create the folder";
    QTest::newRow("holds a run") << "Recorder(d, {}).end(); Recorder(d, {})" << "already holds a run";
    QTest::newRow("another run holds it") << "r = Recorder(d, {}); Recorder(d, {}, overwrite=True)" << "another run is using it";
    QTest::newRow("config not a dict") << "Recorder(d, [1, 2])" << "config: expected a dict";
    QTest::newRow("not JSON") << "Recorder(d, {'optim': {'lr': object()}})"
                              << "config['optim']['lr']: a object is not JSON-serialisable";
    QTest::newRow("NaN") << "Recorder(d, {'train': {'lr': float('nan')}})" << "config['train']['lr']: nan is not a JSON number";
    QTest::newRow("key not a string") << "Recorder(d, {'data': {1: 2}})" << "config['data']: key 1 is not a string";
    QTest::newRow("speedups not an object") << "Recorder(d, {'speedups': 4})" << "config['speedups']: must be an object";
    QTest::newRow("accuracy in percent") << "r = Recorder(d, {}); r.eval(val_acc=87.0)" << "val_acc: 87.0 is not a fraction";
    QTest::newRow("unknown status") << "r = Recorder(d, {}); r.end('done')" << "status: 'done' is not one of";
    QTest::newRow("unknown phase") << "r = Recorder(d, {}); r.add_phase('loading', 1.0)" << "phase: 'loading' is not one of";
  }
  void refusals() {
    QFETCH(QString, code);
    QFETCH(QString, expected);
    const QString script = QStringLiteral(
        "import os, tempfile\n"
        "from workbench_recorder import Recorder, RecorderError\n"
        "d = tempfile.mkdtemp()\n"
        "try:\n"
        "    %1\n"
        "    print('no error')\n"
        "except RecorderError as e:\n"
        "    print('RecorderError:', e)\n")
                               .arg(code);
    const auto r = wb::test::runPython({QStringLiteral("-c"), script});
    QVERIFY2(r.rc == 0, r.describe().constData());
    QVERIFY2(r.out.contains("RecorderError: "), r.describe().constData());
    QVERIFY2(r.out.contains(expected.toUtf8()), r.describe().constData());
  }

  // A config refused at the start leaves the folder without a run: no config, events or lock.
  void refusedConfigWritesNothing() {
    const auto r = wb::test::runPython(
        {QStringLiteral("-c"), QStringLiteral("import os, tempfile\n"
                                              "from workbench_recorder import Recorder, RecorderError\n"
                                              "d = tempfile.mkdtemp()\n"
                                              "try:\n"
                                              "    Recorder(d, {'seed': {1, 2}})\n"
                                              "except RecorderError as e:\n"
                                              "    print(sorted(os.listdir(d)), e)\n")});
    QVERIFY2(r.rc == 0, r.describe().constData());
    QVERIFY2(r.out.startsWith("[] config['seed']: a set is not JSON-serialisable"), r.describe().constData());
  }
};

QTEST_APPLESS_MAIN(TestRecorderErrors)
#include "test_recorder_errors.moc"
