// The noise store (wb/report/noise.h): one file per machine, read back with its bands; another
// machine, a missing or unreadable file all read as the assumed band; a folder that cannot be
// made is an error naming it.
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <fstream>

#include "wb/report/noise.h"

using namespace wb::report;

class TestNoise : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void storedPerMachine() {
    QTemporaryDir tmp;
    const std::filesystem::path dir = tmp.path().toStdString();
    const MachineId here{"host-a", "Some CPU", 2}, there{"host-b", "Some CPU", 2};
    HostNoise n;
    n.machine = here;
    n.band = 0.14;
    n.bands = {{"train_samples_per_s", 0.14}, {"run_wall_s", 0.08}};
    n.measured = true;
    n.runs = 6;
    n.source = "A/A calibration: 6 runs of fashion-mnist-lenet";
    n.measured_at = "2026-12-02T04:00:00Z";
    QVERIFY(saveNoise(n, dir).ok());
    const HostNoise back = loadNoise(here, dir);
    QVERIFY(back.measured);
    QCOMPARE(back.band, 0.14);
    QCOMPARE(back.bandFor("run_wall_s"), 0.08);
    QCOMPARE(back.runs, 6);
    // Another machine, and an unreadable file, read as the assumed band.
    QVERIFY(!loadNoise(there, dir).measured);
    QCOMPARE(loadNoise(there, dir).band, kAssumedNoiseBand);
    std::ofstream(dir / (noiseKey(here) + ".json")) << "{ not json";
    QVERIFY(!loadNoise(here, dir).measured);
    // A folder that cannot be made: an error naming it, nothing written.
    const std::filesystem::path blocked = dir / "file";
    std::ofstream(blocked) << "x";
    const auto st = saveNoise(n, blocked / "noise");
    QVERIFY(!st.ok());
    QVERIFY2(st.error().message.find((blocked / "noise").string()) != std::string::npos, st.error().message.c_str());
  }
};

QTEST_APPLESS_MAIN(TestNoise)
#include "test_noise.moc"
