// End to end: `workbench-cli probe workers` on a tiny real experiment (Fashion-MNIST, real loader
// threads, real lenet steps, short --seconds): its rows are consistent with its recommendation,
// the result is stored under its key beside the plot, another experiment gets its own file, and
// `ladder --dry-run` then takes its workers count from the stored result.
#include <QtTest/QtTest>
#include <QProcess>
#include <QTemporaryDir>

#include <algorithm>
#include <filesystem>

#include "wb/common/sysinfo.h"
#include "wb/proto/flops_record.h"
#include "wb/proto/rundir.h"
#include "wb/records/peak_store.h"
#include "wb/probe/record.h"

using nlohmann::json;

#include "../support/proc.h"
#include "../support/machine.h"

namespace {

using CliResult = wb::test::ProcResult;

CliResult runCli(const QStringList& args, const QString& probesDir) {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert(QStringLiteral("WB_PROBES_DIR"), probesDir);
  return wb::test::runProcess(QStringLiteral(WB_CLI_PATH), args, 300000, env);
}

using wb::test::haveFashionMnist;

// The tiny experiment's overrides, and the same as a Config (for its key).
const QStringList kTiny = {QStringLiteral("--set"), QStringLiteral("data.limit_train=256"), QStringLiteral("--set"),
                           QStringLiteral("train.batch_size=32")};
wb::Config tinyConfig() {
  wb::Config c;
  c.data.limit_train = 256;
  c.train.batch_size = 32;
  return c;
}

QStringList probeArgs(const QStringList& extra) {
  return QStringList{QStringLiteral("probe"), QStringLiteral("workers"), QStringLiteral("--candidates"),
                     QStringLiteral("0,1,2"), QStringLiteral("--seconds"), QStringLiteral("0.3"), QStringLiteral("--max-rounds"),
                     QStringLiteral("3"), QStringLiteral("--json")} +
         kTiny + extra;
}

}  // namespace

class TestCliProbe : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void probesStoresAndFeedsTheLadder() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir probes;
    auto r = runCli(probeArgs({}), probes.path());
    QVERIFY2(r.rc == 0, r.err.constData());
    const json doc = json::parse(r.out.toStdString(), nullptr, false);
    QVERIFY2(doc.is_object(), r.out.constData());
    auto parsed = wb::probe::probeFromJson(doc);
    QVERIFY(parsed.ok());
    const wb::probe::ProbeResult& p = *parsed;

    // (a) and (b) measured, (c) one row per candidate in the order asked, each really timed.
    QVERIFY(p.loader_batches_per_s > 0 && p.loader_samples_per_s > 0);
    QVERIFY(std::abs(p.loader_samples_per_s / p.loader_batches_per_s - 32.0) < 1e-6);  // full batches of 32
    QVERIFY(p.step_alone_ms > 0 && p.step_samples_per_s > 0);
    QCOMPARE(p.rows.size(), size_t{3});
    // Interleaved rounds: at least 2, at most --max-rounds, each count timed once a round.
    QVERIFY2(p.rounds >= 2 && p.rounds <= 3, r.err.constData());
    QCOMPARE(doc["noise"]["df"].get<int>(), 2 * (p.rounds - 1));
    for (int i = 0; i < 3; ++i) {
      const auto& row = p.rows[size_t(i)];
      QCOMPARE(row.workers, i);
      QVERIFY(row.steps >= 1 && row.seconds >= 0.3);
      QVERIFY(row.data_ms >= 0 && row.step_ms > 0);
      // samples/s is what the row's own clocks say: steps of 32 samples in its seconds.
      QVERIFY(std::abs(row.samples_per_s - row.steps * 32 / row.seconds) <= 1e-6 * row.samples_per_s);
      QVERIFY(std::abs((row.data_ms + row.step_ms) * row.steps - row.seconds * 1000) <= 1e-6 * row.seconds * 1000);
      QCOMPARE(row.round_rates.size(), size_t(p.rounds));
      if (i > 0) QVERIFY(doc["candidates"][i]["vs_reference"]["lo"].is_number());
    }
    // The recommendation follows from the rounds: the fastest count is clearly faster than every
    // smaller count, and not clearly faster than the one recommended.
    QCOMPARE(p.recommended, wb::probe::recommendWorkers(p));
    const wb::probe::ProbeRow* best = p.fastest();
    for (const auto& row : p.rows)
      if (row.workers < p.recommended) QCOMPARE(p.speedupOver(row, *best).verdict, wb::stats::Verdict::Faster);
    QVERIFY(p.speedupOver(*p.row(p.recommended), *best).verdict != wb::stats::Verdict::Faster);
    QCOMPARE(doc["verdict"].get<std::string>(), p.verdict());

    // Stored under this machine's and this experiment's key, with the plot beside it.
    const std::string key = wb::probe::probeKey(tinyConfig(), wb::records::thisMachine());
    QCOMPARE(p.key, key);
    const std::filesystem::path dir = probes.path().toStdString();
    QVERIFY(std::filesystem::exists(dir / (key + ".json")));
    QVERIFY(std::filesystem::file_size(dir / (key + ".svg")) > 0);
    QCOMPARE(QString::fromStdString(doc["files"]["json"].get<std::string>()), QString::fromStdString((dir / (key + ".json")).string()));
    auto stored = wb::probe::loadProbe(tinyConfig(), wb::records::thisMachine(), dir);
    QVERIFY(stored);
    QCOMPARE(stored->recommended, p.recommended);

    // Another experiment (mlp) gets its own file; lenet's stays.
    auto other = runCli(probeArgs({QStringLiteral("--set"), QStringLiteral("model.name=mlp"), QStringLiteral("--candidates"),
                                   QStringLiteral("0,1")}),
                        probes.path());
    QVERIFY2(other.rc == 0, other.err.constData());
    wb::Config mlp = tinyConfig();
    mlp.model.name = "mlp";
    auto mlpStored = wb::probe::loadProbe(mlp, wb::records::thisMachine(), dir);
    QVERIFY(mlpStored && mlpStored->key != key);
    QCOMPARE(mlpStored->rows.size(), size_t{2});
    QCOMPARE(wb::probe::loadProbe(tinyConfig(), wb::records::thisMachine(), dir)->rows.size(), size_t{3});

    // The ladder's workers step reads the stored result for this experiment.
    auto plan = runCli(QStringList{QStringLiteral("ladder"), QStringLiteral("--dry-run")} + kTiny, probes.path());
    QVERIFY2(plan.rc == 0, plan.err.constData());
    const QString text = QString::fromUtf8(plan.out);
    QVERIFY2(text.contains(QStringLiteral("probe of ")), qPrintable(text));
    if (p.recommended > 0)
      QVERIFY2(text.contains(QStringLiteral("loader workers 0 → %1").arg(p.recommended)), qPrintable(text));
    else
      QVERIFY2(text.contains(QStringLiteral("recommends 0 workers")), qPrintable(text));
  }

  void tableByDefault() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir probes;
    auto r = runCli(QStringList{QStringLiteral("probe"), QStringLiteral("workers"), QStringLiteral("--candidates"),
                                QStringLiteral("0,1"), QStringLiteral("--seconds"), QStringLiteral("0.2"),
                                QStringLiteral("--no-store")} +
                        kTiny,
                    probes.path());
    QVERIFY2(r.rc == 0, r.err.constData());
    const QString text = QString::fromUtf8(r.out);
    for (const char* heading : {"Workers", "Samples/s", "× vs 0 workers", "Data ms/step", "Step ms", "← recommended",
                                "Loader alone", "Training step alone"})
      QVERIFY2(text.contains(QString::fromUtf8(heading)), qPrintable(text));
    QVERIFY(QDir(probes.path()).isEmpty());  // --no-store wrote nothing
  }

  // `probe peak`: each precision this CPU runs natively timed to a steady rate and stored per
  // machine; `capabilities` shows it; a run then reports its GFLOP/s as % of it, with the
  // compute-only step beside the real one (and says how to get a peak when none is stored).
  void peakIsStoredShownAndUsed() {
    QTemporaryDir probes;
    auto r = runCli({QStringLiteral("probe"), QStringLiteral("peak"), QStringLiteral("--seconds"), QStringLiteral("0.2"),
                     QStringLiteral("--cpu-only"), QStringLiteral("--json")},
                    probes.path());
    QVERIFY2(r.rc == 0, r.err.constData());
    const json doc = json::parse(r.out.toStdString(), nullptr, false);
    auto peak = wb::records::peakFromJson(doc);
    QVERIFY2(peak.ok(), r.out.constData());
    const wb::records::PeakDevice* cpu = peak->device("cpu");
    QVERIFY(cpu);
    QCOMPARE(std::count_if(cpu->kernels.begin(), cpu->kernels.end(),
                           [](const wb::records::PeakKernel& k) { return k.kernel == "conv" && k.precision == "fp32"; }),
             2L);  // an early and a deep ResNet layer
    for (const char* kernel : {"matmul", "conv"}) {
      const auto* k = cpu->find(kernel, "fp32");
      QVERIFY2(k && k->gflop_per_s > 0 && k->calls >= 2 && k->flops_per_call > 0, kernel);
      QVERIFY(std::abs(k->gflop_per_s - k->flops_per_call * k->calls / k->seconds / 1e9) < 1e-6 * k->gflop_per_s);
    }
    const bool bf16 = wb::cpuHasFlag("avx512_bf16") || wb::cpuHasFlag("amx_bf16");
    QCOMPARE(cpu->find("matmul", "bf16") != nullptr, bf16);
    QCOMPARE(cpu->skipped.size(), size_t{bf16 ? 0u : 1u});
    QVERIFY(QFile::exists(QString::fromStdString(doc.value("file", std::string()))));
    QVERIFY(wb::records::loadPeak(wb::records::thisMachine(), peak->gpus, probes.path().toStdString()).has_value());

    auto caps = runCli({QStringLiteral("capabilities"), QStringLiteral("--json")}, probes.path());
    QVERIFY2(caps.rc == 0, caps.err.constData());
    const json capsDoc = json::parse(caps.out.toStdString(), nullptr, false);
    QCOMPARE(capsDoc["peak"].value("key", std::string()), peak->key);
    auto text = runCli({QStringLiteral("capabilities")}, probes.path());
    QVERIFY2(QString::fromUtf8(text.out).contains(QStringLiteral("fp32 matmul")), text.out.constData());

    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir runs;
    const QString dir = runs.path() + QStringLiteral("/run");
    auto run = runCli(QStringList{QStringLiteral("run"), QStringLiteral("--run-dir"), dir, QStringLiteral("--set"),
                                  QStringLiteral("train.max_steps=6"), QStringLiteral("--set"),
                                  QStringLiteral("train.log_every=3"), QStringLiteral("--set"),
                                  QStringLiteral("data.limit_val=64")} +
                          kTiny,
                      probes.path());
    QVERIFY2(run.rc == 0, run.err.constData());
    auto summary = wb::proto::readJsonFile((dir + QStringLiteral("/summary.json")).toStdString());
    QVERIFY(summary.ok());
    const auto f = wb::proto::readFlops(*summary);
    QVERIFY2(f.has_value(), summary->dump().c_str());
    QVERIFY(f->per_step > 0 && f->achieved_gflop_per_s > 0);
    QCOMPARE(f->per_sample * 32, f->per_step);
    // Set against the fastest fp32 kernel, which is named in the figure.
    const wb::records::PeakKernel* best = cpu->best("fp32");
    QVERIFY(best);
    for (const auto& k : cpu->kernels)
      if (k.precision == "fp32") QVERIFY(k.gflop_per_s <= best->gflop_per_s);
    QVERIFY(f->peak && f->peak->gflop_per_s == best->gflop_per_s);
    QVERIFY2(f->peak->what.rfind("fp32 " + best->kernel + " measured on this CPU", 0) == 0, f->peak->what.c_str());
    QVERIFY(f->pctOfPeak() && *f->pctOfPeak() > 0);
    QVERIFY(f->compute_only_step_ms && *f->compute_only_step_ms > 0 && f->step_ms);

    QTemporaryDir empty;
    auto bare = runCli(QStringList{QStringLiteral("run"), QStringLiteral("--run-dir"), dir, QStringLiteral("--overwrite"),
                                   QStringLiteral("--set"), QStringLiteral("train.max_steps=3"), QStringLiteral("--set"),
                                   QStringLiteral("data.limit_val=64")} +
                           kTiny,
                       empty.path());
    QVERIFY2(bare.rc == 0, bare.err.constData());
    auto bareSummary = wb::proto::readJsonFile((dir + QStringLiteral("/summary.json")).toStdString());
    QVERIFY(bareSummary.ok());
    const auto none = wb::proto::readFlops(*bareSummary);
    QVERIFY(none && !none->peak);
    QVERIFY2(QString::fromStdString(none->no_peak).contains(QStringLiteral("workbench-cli probe peak")), none->no_peak.c_str());
  }

  void refusesBadOptions_data() {
    QTest::addColumn<QStringList>("args");
    QTest::newRow("bad candidate") << QStringList{QStringLiteral("--candidates"), QStringLiteral("0,x")};
    QTest::newRow("negative candidate") << QStringList{QStringLiteral("--candidates"), QStringLiteral("-1")};
    QTest::newRow("seconds out of range") << QStringList{QStringLiteral("--seconds"), QStringLiteral("0")};
    QTest::newRow("bad config field") << QStringList{QStringLiteral("--set"), QStringLiteral("train.batch_size=0")};
    QTest::newRow("no rounds") << QStringList{QStringLiteral("--min-rounds"), QStringLiteral("0")};
    QTest::newRow("max rounds below min rounds")
        << QStringList{QStringLiteral("--min-rounds"), QStringLiteral("3"), QStringLiteral("--max-rounds"), QStringLiteral("2")};
  }
  void refusesBadOptions() {
    QFETCH(QStringList, args);
    QTemporaryDir probes;
    auto r = runCli(QStringList{QStringLiteral("probe"), QStringLiteral("workers")} + args, probes.path());
    QCOMPARE(r.rc, 2);
    QVERIFY(!r.err.isEmpty());
    // The error names the option it refuses.
    const QString option = args.size() > 2 ? args[2] : args[0];
    QVERIFY2(QString::fromUtf8(r.err).contains(option == QStringLiteral("--set") ? QStringLiteral("batch_size") : option),
             r.err.constData());
  }
};

QTEST_APPLESS_MAIN(TestCliProbe)
#include "test_cli_probe.moc"
