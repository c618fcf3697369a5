// Which changes are taken to need no fewer samples to the target (samplesNeverFewer): a larger
// global batch (more devices, a larger batch, more accumulation) at an effective lr scaled at most
// in proportion, and nothing else. The ladder answers such a variant by the bound this allows,
// without a run to the target, when its throughput is too slow for it to be faster; the bound's
// composition is tested in tests/core/stats/test_time_to_target.cpp, the whole path (try
// --only-faster) in tests/app/test_cli_try_parts.cpp. A try continued from a folder whose kept
// records (the configs, math.json, segments.json, trials.json) cannot be read, or hold another
// record, is refused naming the file before anything is measured again over it; an unreadable
// try.json (the result, written again) is kept aside and said.
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <cstdio>
#include <fstream>

#include "wb/experiment/composed_try.h"
#include "wb/records/math_record.h"

using namespace wb::experiment;

namespace {

TryOptions change(void (*edit)(wb::Config&)) {
  TryOptions o;
  o.baseline.train.batch_size = 64;
  o.baseline.optim.lr = 0.01;
  o.variant = o.baseline;
  edit(o.variant);
  return o;
}

namespace fs = std::filesystem;

std::string readText(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

class TestComposedTry : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void aLargerGlobalBatchNeedsNoFewerSamples() {
    QVERIFY(samplesNeverFewer(change([](wb::Config& c) { c.speedups.devices = 2; })));                        // lr as given
    QVERIFY(samplesNeverFewer(change([](wb::Config& c) { c.speedups.devices = 2, c.optim.lr = 0.02; })));     // linear, by hand
    QVERIFY(samplesNeverFewer(change([](wb::Config& c) { c.speedups.devices = 4, c.optim.lr_scaling = "linear"; })));
    QVERIFY(samplesNeverFewer(change([](wb::Config& c) { c.speedups.devices = 2, c.optim.lr_scaling = "sqrt"; })));
    QVERIFY(samplesNeverFewer(change([](wb::Config& c) { c.train.batch_size = 256, c.optim.lr = 0.04; })));
    QVERIFY(samplesNeverFewer(change([](wb::Config& c) { c.speedups.grad_accumulation = 4; })));
  }

  // An lr raised beyond the batch's growth may make each sample count for more; a smaller global
  // batch may need fewer samples; any other change of the math is not a batch at all.
  void anythingElseIsMeasured() {
    QVERIFY(!samplesNeverFewer(change([](wb::Config& c) { c.speedups.devices = 2, c.optim.lr = 0.03; })));
    QVERIFY(!samplesNeverFewer(change([](wb::Config& c) { c.train.batch_size = 32; })));
    QVERIFY(!samplesNeverFewer(change([](wb::Config& c) { c.speedups.devices = 2, c.speedups.precision = "bf16-mixed"; })));
    QVERIFY(!samplesNeverFewer(change([](wb::Config& c) { c.speedups.devices = 2, c.optim.weight_decay = 1e-3; })));
    QVERIFY(!samplesNeverFewer(change([](wb::Config& c) { c.speedups.workers = 2; })));  // keeps the math: nothing to bound
    QVERIFY(!samplesNeverFewer(change([](wb::Config& c) { c.speedups.devices = 2, c.train.epochs = 3; })));
  }

  void aKeptRecordThatCannotBeReadIsNamed_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("damage");
    QTest::addColumn<bool>("batch");  // the change is timed by trials (else by segments)
    QTest::addColumn<QString>("named");
    QTest::newRow("segments.json cut mid-file") << "segments.json" << R"({"kind": "segments", "rounds")" << false << "is unreadable: it is cut mid-file";
    QTest::newRow("segments.json emptied") << "segments.json" << "" << false << "is unreadable: it is empty";
    QTest::newRow("math.json cut mid-file") << "math.json" << R"({"kind": "math-check")" << false << "is unreadable: it is cut mid-file";
    QTest::newRow("math.json emptied") << "math.json" << "" << false << "is unreadable: it is empty";
    QTest::newRow("math.json another record") << "math.json" << R"({"kind": "segments"})" << false
                                              << "holds a segments record, not the try's math-check record";
    QTest::newRow("trials.json cut mid-file") << "trials.json" << "{" << true << "is unreadable: it is cut mid-file";
    QTest::newRow("trials.json another record") << "trials.json" << R"({"pairs": []})" << true << "holds no trials record";
    QTest::newRow("a config cut mid-file") << "parts/baseline.json" << R"({"model": )" << false << "is unreadable: it is cut mid-file";
  }
  void aKeptRecordThatCannotBeReadIsNamed() {
    QFETCH(QString, file);
    QFETCH(QString, damage);
    QFETCH(bool, batch);
    QFETCH(QString, named);
    QTemporaryDir dir;
    TryOptions o = change(batch ? +[](wb::Config& c) { c.train.batch_size = 128; } : +[](wb::Config& c) { c.speedups.workers = 2; });
    o.out = dir.path().toStdString();
    fs::create_directories(o.out / "parts");
    if (batch) std::ofstream(o.out / "math.json") << wb::records::mathCheckJson(wb::records::MathCheckRecord{}).dump();
    const fs::path record = o.out / file.toStdString();
    std::ofstream(record, std::ios::binary) << damage.toStdString();
    Hooks h;
    h.log = nullptr;  // h.cli_path "": nothing could be measured again
    ComposedOptions c;
    c.references = o.out / "references";
    auto r = runComposedTry(o, c, h);
    QVERIFY(!r.ok());
    const QString m = QString::fromStdString(r.error().message);
    QVERIFY2(m.contains(QString::fromStdString(record.string())) && m.contains(named), qPrintable(m));
    QCOMPARE(int(r.error().code), int(wb::Errc::InvalidConfig));
    QCOMPARE(readText(record), damage.toStdString());
  }

  void anUnreadableResultIsKeptAsideAndSaid() {
    QTemporaryDir dir;
    TryOptions o = change([](wb::Config& c) { c.speedups.workers = 2; });
    o.out = dir.path().toStdString();
    std::ofstream(o.out / "try.json") << R"({"status": "running")";
    std::FILE* log = std::tmpfile();
    Hooks h;
    h.log = log;
    ComposedOptions c;
    c.references = o.out / "references";
    (void)runComposedTry(o, c, h);  // nothing can be measured here: only what became of try.json matters
    std::fflush(log), std::rewind(log);
    std::string said;
    for (int ch; (ch = std::fgetc(log)) != EOF;) said += char(ch);
    std::fclose(log);
    QVERIFY2(said.find((o.out / "try.json").string() + " is unreadable: it is cut mid-file") != std::string::npos, said.c_str());
    QVERIFY2(said.find("kept as try.unreadable-1.json") != std::string::npos, said.c_str());
    QCOMPARE(readText(o.out / "try.unreadable-1.json"), std::string(R"({"status": "running")"));
  }
};

QTEST_MAIN(TestComposedTry)
#include "test_composed_try.moc"
