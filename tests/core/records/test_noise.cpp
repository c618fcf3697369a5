// The noise store (wb/records/noise.h): one file per machine, read back with its bands; another
// machine, a missing or unreadable file all read as the assumed band; a folder that cannot be
// made is an error naming it.
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <cmath>
#include <fstream>

#include "wb/records/noise.h"
#include "wb/stats/stats.h"

using namespace wb::records;

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

  // The host speed check's own threshold: the kernel's A/A spread around 0 at a 0.1 % per-run
  // false-alarm rate, never below 3 %; assumed ±10 % until measured.
  void kernelBandFromAaRuns() {
    QVERIFY(std::isnan(kernelBandOfRuns({{2.7, 2.8}})));
    QCOMPARE(kernelBandOfRuns({{2.7, 2.7}, {2.8, 2.8}, {2.9, 2.9}}), kMinKernelBand);
    const double b = kernelBandOfRuns({{2.70, 2.75}, {2.75, 2.70}, {5.40, 5.50}, {5.50, 5.40}});
    const double sigma = std::log(2.75 / 2.70) * std::sqrt(4.0 / 3.0);  // |changes| equal: ss around 0 over n − 1
    QVERIFY(std::fabs(b - std::expm1(kKernelAlarmZ * sigma)) < 1e-12);
    HostNoise n;
    QCOMPARE(n.hostKernelBand(), wb::stats::kAssumedKernelBand);
    QVERIFY(!n.hostKernelMeasured());
    n.measured = true;
    n.bands["host_kernel"] = b;
    QCOMPARE(n.hostKernelBand(), b);
    QCOMPARE(n.floorFor("train_samples_per_s"), n.band);
  }

  // The accuracy's chance spread is stored per experiment: another seed or speedup is the same
  // experiment, another model is not.
  void accuracySpreadPerExperiment() {
    QTemporaryDir tmp;
    const std::filesystem::path dir = tmp.path().toStdString();
    const nlohmann::json config = {{"name", "a"}, {"seed", 1}, {"model", {{"name", "lenet"}}}, {"speedups", {{"workers", 0}}}};
    AccuracySpread s;
    s.sd_pp = 0.21, s.runs = 6, s.source = "A/A calibration";
    QVERIFY(saveAccuracySpread(config, s, dir).ok());
    nlohmann::json repeat = config;
    repeat["seed"] = 7, repeat["name"] = "b", repeat["speedups"]["workers"] = 2;
    const auto back = loadAccuracySpread(repeat, dir);
    QVERIFY(back.has_value());
    QCOMPARE(back->sd_pp, 0.21);
    QCOMPARE(back->runs, 6);
    nlohmann::json other = config;
    other["model"]["name"] = "mnist-cnn";
    QVERIFY(!loadAccuracySpread(other, dir).has_value());
  }
};

QTEST_APPLESS_MAIN(TestNoise)
#include "test_noise.moc"
