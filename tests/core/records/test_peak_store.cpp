// The peak calibration's record (wb/records/peak_store.h): stored per machine, the datasheet table and
// its name matching, and which peak a run is set against (and when there is none).
#include <QtTest/QtTest>

#include <fstream>

#include "wb/proto/capability_keys.h"
#include "wb/proto/flops_record.h"
#include "wb/records/peak_store.h"

using namespace wb::records;

namespace {

PeakResult sample(const MachineId& m, std::vector<std::string> gpus = {}) {
  PeakResult r;
  r.host = m.host;
  r.cpu = m.cpu;
  r.cores = m.cores;
  r.gpus = std::move(gpus);
  r.key = peakKey(m, r.gpus);
  r.measured_at = "2026-12-01T08:40:12Z";
  PeakDevice cpu;
  cpu.device = "cpu";
  cpu.name = m.cpu;
  cpu.threads = 2;
  cpu.kernels.push_back({"matmul", "fp32", "1024 x 1024 x 1024", 2.147e9, 40, 0.9, 95.4, 0.01});
  cpu.kernels.push_back({"conv", "fp32", "3x3 64->64, 16 x 56 x 56", 3.7e9, 20, 1.0, 74.0, 0.02});
  cpu.skipped.push_back({"bf16", "no AVX-512 BF16"});
  r.devices.push_back(cpu);
  if (!r.gpus.empty()) {
    PeakDevice gpu;
    gpu.device = "cuda:0";
    gpu.name = r.gpus.front();
    gpu.kernels.push_back({"matmul", "bf16", "8192 x 8192 x 8192", 1.1e12, 400, 1.0, 700000, 0.01});
    r.devices.push_back(gpu);
  }
  return r;
}

const MachineId kHere{"host-a", "Test CPU @ 2.0GHz", 2};

}  // namespace

class TestPeakStore : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void storedPerMachine() {
    QTemporaryDir dir;
    const std::filesystem::path d = dir.path().toStdString();
    const PeakResult here = sample(kHere);
    QVERIFY(savePeak(here, d).ok());
    const MachineId other{"host-b", kHere.cpu, kHere.cores};
    QVERIFY(savePeak(sample(other), d).ok());
    auto back = loadPeak(kHere, {}, d);
    QVERIFY(back.has_value());
    QCOMPARE(back->host, std::string("host-a"));
    QCOMPARE(back->devices.size(), size_t{1});
    QCOMPARE(back->devices[0].find("matmul", "fp32")->gflop_per_s, 95.4);
    QCOMPARE(back->devices[0].skipped.at(0).precision, std::string("bf16"));
    QVERIFY(!loadPeak(kHere, {"NVIDIA H200"}, d).has_value());  // the GPUs are part of the key
    QVERIFY(loadPeak(other, {}, d).has_value());
    QVERIFY(!loadPeak({"host-c", kHere.cpu, kHere.cores}, {}, d).has_value());
  }

  void unreadableFileReadsAsNone() {
    QTemporaryDir dir;
    const std::filesystem::path d = dir.path().toStdString();
    std::ofstream(peakPath(peakKey(kHere, {}), d)) << "{ not json";
    QVERIFY(!loadPeak(kHere, {}, d).has_value());
    QVERIFY(!peakFromJson(nlohmann::json{{"kind", "probe-workers"}}).ok());
  }

  void datasheetNames_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("gpu");  // "" = not in the table
    QTest::addColumn<double>("bf16");
    QTest::newRow("H200") << "NVIDIA H200" << "NVIDIA H200 SXM" << 989.5;
    QTest::newRow("H200 NVL") << "NVIDIA H200 NVL" << "NVIDIA H200 NVL" << 835.5;
    QTest::newRow("H100 SXM") << "NVIDIA H100 80GB HBM3" << "NVIDIA H100 SXM5" << 989.5;
    QTest::newRow("H100 PCIe") << "NVIDIA H100 PCIe" << "NVIDIA H100 PCIe" << 756.5;
    QTest::newRow("A100 SXM") << "NVIDIA A100-SXM4-80GB" << "NVIDIA A100" << 312.0;
    QTest::newRow("L4, not L40S") << "NVIDIA L4" << "NVIDIA L4" << 121.0;
    QTest::newRow("L40S") << "NVIDIA L40S" << "NVIDIA L40S" << 362.05;
    QTest::newRow("RTX 4090") << "NVIDIA GeForce RTX 4090" << "NVIDIA GeForce RTX 4090" << 165.2;
    QTest::newRow("RTX 4090 D: other peaks") << "NVIDIA GeForce RTX 4090 D" << "" << 0.0;
    QTest::newRow("RTX 4080 SUPER") << "NVIDIA GeForce RTX 4080 SUPER" << "" << 0.0;
    QTest::newRow("GH200 is not H200") << "NVIDIA GH200 480GB" << "" << 0.0;
    QTest::newRow("T4") << "Tesla T4" << "" << 0.0;
  }
  void datasheetNames() {
    QFETCH(QString, name);
    QFETCH(QString, gpu);
    QFETCH(double, bf16);
    const DatasheetEntry* e = datasheetFor(name.toStdString());
    if (gpu.isEmpty()) {
      QVERIFY2(!e, e ? e->gpu.c_str() : "");
      return;
    }
    QVERIFY(e);
    QCOMPARE(QString::fromStdString(e->gpu), gpu);
    QCOMPARE(datasheetTflops(*e, "bf16"), bf16);
    QVERIFY(!e->source.empty());
  }

  // Every entry is dense: tensor-core bf16 at most 16x fp32 (sparse figures would be 2x more),
  // and TF32 about half of bf16 at most (L40S: 183 against 362.05).
  void datasheetIsDense() {
    for (const auto& e : datasheetTable()) {
      QVERIFY2(e.bf16 <= 16 * e.fp32, e.gpu.c_str());
      QVERIFY2(e.tf32 <= 0.51 * e.bf16 || e.tf32 <= e.fp32, e.gpu.c_str());
      QVERIFY2(e.source.find("datasheet") != std::string::npos || e.source.find("whitepaper") != std::string::npos,
               e.gpu.c_str());
    }
  }

  void cpuRunAgainstMeasuredPeak() {
    const PeakResult p = sample(kHere);
    wb::proto::FlopsFigures f;
    f.achieved_gflop_per_s = 9.54;
    setPeaks(f, &p, "cpu", "", "32-true", 2);  // two CPU processes share the one CPU
    QVERIFY(f.peak.has_value());
    QCOMPARE(f.peak->gflop_per_s, 95.4);
    QVERIFY(QString::fromStdString(f.peak->what).contains(QStringLiteral("fp32 matmul")));
    QVERIFY(std::abs(*f.pctOfPeak() - 10.0) < 1e-9);
    QVERIFY(!f.datasheet && f.no_datasheet.empty());  // no datasheet for a CPU
    wb::proto::FlopsFigures bf;
    setPeaks(bf, &p, "cpu", "", "bf16-mixed", 1);
    QVERIFY(!bf.peak);
    QVERIFY(QString::fromStdString(bf.no_peak).contains(QStringLiteral("bf16 was not measured")));
    wb::proto::FlopsFigures none;
    setPeaks(none, nullptr, "cpu", "", "32-true", 1);
    QVERIFY(QString::fromStdString(none.no_peak).contains(QStringLiteral("workbench-cli probe peak")));
    QVERIFY(!none.pctOfPeak());
    // The peak is the fastest kernel at the precision, whichever it is: a deep convolution that
    // oneDNN runs faster than the matrix product becomes the peak, named with its shape.
    PeakResult deep = sample(kHere);
    deep.devices[0].kernels.push_back({"conv", "fp32", "3x3 256->256, 32 x 14 x 14", 7.4e9, 40, 1.0, 296.0, 0.01});
    QCOMPARE(deep.devices[0].best("fp32")->gflop_per_s, 296.0);
    QVERIFY(!deep.devices[0].best("fp16"));
    wb::proto::FlopsFigures d;
    d.achieved_gflop_per_s = 148.0;
    setPeaks(d, &deep, "cpu", "", "32-true", 1);
    QCOMPARE(d.peak->gflop_per_s, 296.0);
    QCOMPARE(QString::fromStdString(d.peak->what),
             QStringLiteral("fp32 conv measured on this CPU (2 threads; 3x3 256->256, 32 x 14 x 14), 2026-12-01"));
    QVERIFY(std::abs(*d.pctOfPeak() - 50.0) < 1e-9);
  }

  void gpuRunAgainstDatasheet() {
    const PeakResult p = sample(kHere, {"NVIDIA H200"});
    wb::proto::FlopsFigures f;
    f.achieved_gflop_per_s = 197900;
    setPeaks(f, &p, "cuda:0", "NVIDIA H200", "bf16-mixed", 2);
    QCOMPARE(f.peak->gflop_per_s, 2 * 700000.0);
    QCOMPARE(f.datasheet->gflop_per_s, 2 * 989500.0);
    QVERIFY(QString::fromStdString(f.datasheet->what).contains(QStringLiteral("dense")));
    QVERIFY(std::abs(*f.pctOfDatasheet() - 10.0) < 1e-9);
    wb::proto::FlopsFigures unknown;
    setPeaks(unknown, &p, "cuda:0", "Tesla T4", "16-mixed", 1);
    QVERIFY(!unknown.datasheet);
    QVERIFY(QString::fromStdString(unknown.no_datasheet).contains(QStringLiteral("not in the datasheet table")));
  }

  void flopsObjectRoundTrip() {
    const PeakResult p = sample(kHere);
    wb::proto::FlopsFigures f;
    f.per_step = 5.8e7;
    f.per_sample = 9.1e5;
    f.achieved_gflop_per_s = 1.9;
    f.compute_only_step_ms = 1.0;
    f.step_ms = 4.0;
    setPeaks(f, &p, "cpu", "", "32-true", 1);
    const nlohmann::json ev = {{"type", "step"}, {wb::proto::kFlopsKey, wb::proto::flopsJson(f)}};
    const auto back = wb::proto::readFlops(ev);
    QVERIFY(back.has_value());
    QCOMPARE(back->per_step, 5.8e7);
    QCOMPARE(back->peak->gflop_per_s, 95.4);
    QCOMPARE(*back->dataPathShare(), 0.75);
    QVERIFY(!wb::proto::readFlops(nlohmann::json{{"type", "step"}}).has_value());  // an older run
  }

  void capabilitiesCarryIt() {
    nlohmann::json caps = nlohmann::json::object();
    attachPeak(caps, std::nullopt);
    QCOMPARE(caps[wb::proto::caps::kPeak]["measured"].get<bool>(), false);
    attachPeak(caps, sample(kHere));
    QCOMPARE(caps[wb::proto::caps::kPeak]["date"].get<std::string>(), std::string("2026-12-01"));
    QVERIFY(peakFromJson(caps[wb::proto::caps::kPeak]).ok());
  }
};

QTEST_APPLESS_MAIN(TestPeakStore)
#include "test_peak_store.moc"
