// A recorder's run folder read by core/records (what compare, export, whatif and the window use),
// as this recorder writes it and as an older or newer writer would: fields and event types the
// reader does not know, records of a newer schema version, figures an older writer lacked. Each
// loads with what the reader understands, and the reader says what it skipped.
#include <QtTest/QtTest>

#include <cmath>
#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "python_util.h"
#include "wb/proto/event_types.h"
#include "wb/proto/events.h"
#include "wb/proto/rundir.h"
#include "wb/records/run_record.h"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::vector<json> readLines(const fs::path& p) { return wb::proto::readEventsFile(p.string()); }

void writeLines(const fs::path& p, const std::vector<json>& events) {
  std::ofstream out(p, std::ios::trunc);
  for (const auto& e : events) out << wb::proto::encodeEvent(e) << "\n";
}

void rewriteSummary(const fs::path& p, const std::function<void(json&)>& change) {
  json s = wb::proto::readJsonFile(p).value();
  change(s);
  QVERIFY(wb::proto::writeJsonAtomic(p, s).ok());
}

QString joined(const std::vector<std::string>& lines) {
  QStringList out;
  for (const auto& l : lines) out << QString::fromStdString(l);
  return out.join(QLatin1Char('\n'));
}

}  // namespace

class TestRecorderCompat : public QObject {
  Q_OBJECT
  QTemporaryDir scratch_;
  fs::path run_;

  // A copy of the recorder's run, to change.
  fs::path copyOfRun(const char* name) {
    const fs::path to = fs::path(scratch_.path().toStdString()) / name;
    fs::copy(run_, to, fs::copy_options::recursive);
    return to;
  }

 private Q_SLOTS:
  void initTestCase() {
    WB_NEED(wb::test::missingPython3());
    QVERIFY(scratch_.isValid());
    run_ = fs::path(scratch_.path().toStdString()) / "recorded";
    const auto r = wb::test::runPython({wb::test::pythonTestsDir() + QStringLiteral("/fake_loop.py"),
                                        QString::fromStdString(run_.string()), QStringLiteral("--epochs"),
                                        QStringLiteral("3"), QStringLiteral("--steps"), QStringLiteral("20")});
    QVERIFY2(r.rc == 0, r.describe().constData());
  }

  void loadsWithNothingSkipped() {
    auto rec = wb::records::loadRun(run_);
    QVERIFY2(rec.ok(), rec.ok() ? "" : rec.error().message.c_str());
    QVERIFY2(rec->problems.empty(), qPrintable(joined(rec->problems)));  // every field is one the reader knows
    QCOMPARE(rec->status, std::string("ok"));
    QCOMPARE(int(rec->steps.size()), 12);  // 60 steps, a step event every 5
    QCOMPARE(int(rec->evals.size()), 3);
    QCOMPARE(int(rec->epochs.size()), 3);
    QCOMPARE(rec->summary.steps.value_or(0), int64_t(60));
    QCOMPARE(rec->summary.train_samples.value_or(0), int64_t(60 * 32));
    QCOMPARE(rec->summary.best_val_acc.value_or(0), 0.8);
    QVERIFY(rec->summary.cpu && rec->summary.cpu->contended.has_value());
    // The step split: the data wait and the timed forward, the rest as other; it adds up to the step.
    const auto& ms = rec->steps.back().ms;
    QVERIFY(ms.has_value());
    QVERIFY2(ms->data >= 1.5 && ms->fwd >= 2.5, qPrintable(QStringLiteral("data %1 fwd %2").arg(ms->data).arg(ms->fwd)));
    json lastStep;
    for (const auto& e : readLines(run_ / "events.jsonl"))
      if (e["type"] == "step") lastStep = e;
    const auto s = wb::proto::readStepEvent(lastStep);
    QVERIFY(s.ms && s.ms->other.has_value());
    const double sum = s.ms->data + s.ms->h2d + s.ms->fwd + s.ms->bwd + s.ms->comm + s.ms->opt + *s.ms->other;
    QVERIFY2(std::abs(sum - s.step_ms) < 1e-6, qPrintable(QStringLiteral("phases %1 ms, step %2 ms").arg(sum).arg(s.step_ms)));
  }

  void newerWriterLoadsWithWhatTheReaderKnows() {
    const fs::path dir = copyOfRun("newer");
    std::vector<json> events = readLines(dir / "events.jsonl");
    for (auto& e : events) {
      if (e["type"] == "step") e["gpu_temp_c"] = 61.5, e["v"] = 2;
    }
    events.insert(events.begin() + 2, wb::proto::makeEvent("hologram", 0, 1.0));
    writeLines(dir / "events.jsonl", events);
    rewriteSummary(dir / "summary.json", [](json& s) {
      s["energy_j"] = 1234.5;
      s["cpu"]["turbo"] = true;
    });

    auto base = wb::records::loadRun(run_);
    auto rec = wb::records::loadRun(dir);
    QVERIFY(rec.ok());
    QCOMPARE(rec->steps.size(), base->steps.size());
    QCOMPARE(rec->steps.back().loss, base->steps.back().loss);
    QCOMPARE(rec->summary.train_samples_per_s, base->summary.train_samples_per_s);
    QCOMPARE(rec->summary.best_val_acc, base->summary.best_val_acc);
    const QString said = joined(rec->problems);
    QVERIFY2(said.contains(QLatin1String("skipped what this reader does not know: 1 event(s) of type 'hologram'")), qPrintable(said));
    QVERIFY2(said.contains(QLatin1String("fields step.gpu_temp_c")), qPrintable(said));
    QVERIFY2(said.contains(QLatin1String("12 record(s) of schema version 2, newer than this reader's 1")), qPrintable(said));
    QVERIFY2(said.contains(QLatin1String("summary.json: skipped fields this reader does not know: cpu.turbo, energy_j")) ||
                 said.contains(QLatin1String("skipped fields this reader does not know: energy_j, cpu.turbo")),
             qPrintable(said));
  }

  void olderWriterLoadsWhatItHas() {
    const fs::path dir = copyOfRun("older");
    std::vector<json> events = readLines(dir / "events.jsonl");
    for (auto& e : events) {
      e.erase("wall");
      if (e["type"] == "step") e.erase("ms"), e.erase("cpu"), e.erase("mem");
    }
    writeLines(dir / "events.jsonl", events);
    rewriteSummary(dir / "summary.json", [](json& s) {
      for (const char* k : {"train_s", "train_samples_per_s", "cpu", "time_to_first_step_s", "run_wall_s"}) s.erase(k);
    });
    auto rec = wb::records::loadRun(dir);
    QVERIFY(rec.ok());
    QVERIFY2(rec->problems.empty(), qPrintable(joined(rec->problems)));
    QCOMPARE(int(rec->steps.size()), 12);
    QVERIFY(!rec->steps.back().ms.has_value());
    QVERIFY(!rec->summary.train_samples_per_s.has_value());
    QVERIFY(!rec->summary.cpu.has_value());
    QCOMPARE(rec->summary.best_val_acc.value_or(0), 0.8);
    QCOMPARE(rec->status, std::string("ok"));
  }
};

QTEST_APPLESS_MAIN(TestRecorderCompat)
#include "test_recorder_compat.moc"
