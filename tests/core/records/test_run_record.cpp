// RunRecord reads what runs write about themselves (summary.json / the end event's summary, step
// events' cpu, epoch events' train_samples_per_s) and shrugs off absent, null or mistyped values.
#include <QtTest/QtTest>
#include <QTemporaryDir>

#include <cmath>
#include <fstream>
#include <map>

#include "report_fixture.h"
#include "wb/compare/compare.h"

using fixture::FakeRun;
using nlohmann::json;
using namespace wb::records;
using namespace wb::compare;

namespace {

json fullSummary() {
  return json::parse(R"({"status":"ok","wall_s":30.5,"train_samples_per_s":812.5,"train_s":24.0,"train_samples":19500,
    "eval_s":4.25,"checkpoint_s":0.75,"time_to_first_step_s":3.5,"run_wall_s":36.0,
    "cpu":{"cores":2,"asked_cores":2,"used_cores":1.8,"other_load_cores":0.9,"contended":true,
           "note":"another process used 0.9 of 2 cores"}})");
}

}  // namespace

class TestRunRecord : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // A live stream fed one event at a time gives the record the whole file gives; out-of-order
  // ranks are put back in time order; a step's memory is kept for the plots.
  void eventByEventEqualsTheWholeStream() {
    FakeRun run;
    run.start().step(1, 10, 640, 1, 1.0).step(1, 20, 1280, 2, 0.9).eval(1, 2.5, 0.7).epoch(1, 3, 3).end("ok", 4);
    run.events.insert(run.events.begin() + 2, run.events[2]);  // a late copy of the second step...
    run.events[2]["t"] = 0.5;                                   // ...stamped earlier
    RunRecord streamed;
    for (const auto& ev : run.events) addEvent(streamed, ev);
    QCOMPARE(streamed.steps[1].t, 0.5);  // arrival order until finished
    finishRecord(streamed);
    const RunRecord whole = recordFromEvents(run.events);
    QCOMPARE(streamed.steps.size(), size_t{3});
    QCOMPARE(streamed.steps.front().t, 0.5);
    for (size_t i = 0; i < whole.steps.size(); ++i) QCOMPARE(streamed.steps[i].t, whole.steps[i].t);
    QCOMPARE(streamed.evals.size(), whole.evals.size());
    QCOMPARE(streamed.status, whole.status);
    QCOMPARE(streamed.rss_peak, whole.rss_peak);
    const StepSample& s = whole.steps.back();
    QVERIFY(s.mem.has_value());
    QCOMPARE(QString::fromStdString(s.mem->device), QStringLiteral("cpu"));
    QCOMPARE(s.mem->rss, double(50 << 20));
    QVERIFY(std::isnan(s.mem->alloc));  // not written on the CPU
  }

  void readsTheNewSummaryFields() {
    QTemporaryDir dir;
    FakeRun run;
    run.start().step(1, 10, 640, 1, 1.0).stepCpu(0.95, 1.9, 2).step(1, 20, 1280, 2, 0.9);
    run.epoch(1, 3, 3, 700).end("ok", 30.5);
    run.summary = wb::proto::readRunSummary(fullSummary());
    auto r = loadRun(run.write(dir.path(), QStringLiteral("r")));
    QVERIFY(r.ok());
    const wb::proto::RunSummary& s = r->summary;
    QCOMPARE(*s.train_samples_per_s, 812.5);
    QCOMPARE(*s.train_s, 24.0);
    QCOMPARE(*s.train_samples, int64_t(19500));
    QCOMPARE(*s.eval_s, 4.25);
    QCOMPARE(*s.checkpoint_s, 0.75);
    QCOMPARE(*s.time_to_first_step_s, 3.5);
    QCOMPARE(*s.run_wall_s, 36.0);
    QCOMPARE(*s.wall_s, 30.5);
    const std::optional<CpuUse> cpu = cpuUse(s);
    QVERIFY(cpu);
    QCOMPARE(cpu->cores, 2);
    QCOMPARE(*cpu->used_cores, 1.8);
    QCOMPARE(*cpu->asked_cores, 2.0);
    QCOMPARE(*cpu->other_load_cores, 0.9);
    QVERIFY(cpu->contended);
    QCOMPARE(QString::fromStdString(cpu->note), QStringLiteral("another process used 0.9 of 2 cores"));
    // Step events' CPU, epoch events' training throughput.
    QVERIFY(r->steps[0].cpu);
    QCOMPARE(r->steps[0].cpu->process_cores, 0.95);
    QCOMPARE(r->steps[0].cpu->machine_busy_cores, 1.9);
    QCOMPARE(r->steps[0].cpu->cores, 2);
    QVERIFY(!r->steps[1].cpu);
    QCOMPARE(r->epochs[0].train_samples_per_s, 700.0);
  }

  void endEventSummaryWithoutSummaryFile() {
    FakeRun run;
    run.start().step(1, 10, 640, 1, 1.0).end("ok", 9);
    run.events.back()["summary"] = fullSummary();
    const RunRecord r = wb::records::recordFromEvents(run.events);
    QVERIFY(r.finished);
    QCOMPARE(*r.summary.train_samples_per_s, 812.5);
  }

  void survivesNullMissingAndMistyped_data() {
    QTest::addColumn<QString>("patch");  // JSON merged into the full summary
    QTest::newRow("numbers null") << R"({"train_samples_per_s":null,"train_s":null,"train_samples":null,"eval_s":null,
      "checkpoint_s":null,"time_to_first_step_s":null,"run_wall_s":null,"wall_s":null})";
    QTest::newRow("numbers as strings") << R"({"train_samples_per_s":"fast","eval_s":"4","run_wall_s":[1]})";
    QTest::newRow("cpu null") << R"({"cpu":null})";
    QTest::newRow("cpu not an object") << R"({"cpu":[1,2]})";
    QTest::newRow("cpu numbers null") << R"({"cpu":{"cores":null,"asked_cores":null,"used_cores":null,
      "other_load_cores":null,"contended":null,"note":null}})";
  }
  void survivesNullMissingAndMistyped() {
    QFETCH(QString, patch);
    const json fields = json::parse(patch.toStdString());
    FakeRun run;
    run.start().step(1, 10, 640, 1, 1.0).step(1, 20, 1280, 2, 1.0).end("ok", 9);
    RunRecord r = run.record();
    json onDisk = fullSummary();
    for (const auto& [key, value] : fields.items()) onDisk[key] = value;  // nulls stay null
    r.summary = wb::proto::readRunSummary(onDisk);
    const wb::proto::RunSummary& s = r.summary;
    const std::optional<CpuUse> cpu = cpuUse(s);
    const std::map<std::string, const std::optional<double>*> numbers{
        {"train_samples_per_s", &s.train_samples_per_s}, {"train_s", &s.train_s},
        {"eval_s", &s.eval_s},                           {"checkpoint_s", &s.checkpoint_s},
        {"time_to_first_step_s", &s.time_to_first_step_s}, {"run_wall_s", &s.run_wall_s},
        {"wall_s", &s.wall_s}};
    for (const auto& [key, value] : fields.items())
      if (auto it = numbers.find(key); it != numbers.end()) QVERIFY2(!it->second->has_value(), key.c_str());
    if (fields.contains("cpu")) {
      QCOMPARE(cpu.has_value(), fields["cpu"].is_object());
      if (cpu) QVERIFY(!cpu->contended && !cpu->other_load_cores && cpu->cores == 0);  // no verdict, no load
    }
    // The metrics fall back instead of throwing: the step events still give the throughput.
    const RunMetrics m = computeMetrics(r, 0.5);
    QVERIFY(m.train_samples_per_s.has_value());
    QCOMPARE(m.contention.contended, cpu && cpu->contended);
    QVERIFY(!cpuUse(wb::proto::readRunSummary(json("not an object"))));
  }

  void contendedWithoutTheWritersVerdict() {
    // A writer that gave the load but not the flag: the load decides, at 0.3 cores.
    json summary = fullSummary();
    summary["cpu"].erase("contended");
    QVERIFY(cpuUse(wb::proto::readRunSummary(summary))->contended);
    summary["cpu"]["other_load_cores"] = 0.2;
    QVERIFY(!cpuUse(wb::proto::readRunSummary(summary))->contended);
  }

  void olderRunsKeepTheirFallbacks() {
    // A summary from before this contract: launcher_wall_s is the command's wall time.
    const auto s = wb::proto::readRunSummary(json::parse(R"({"wall_s":10,"samples_per_s":300,"launcher_wall_s":12.5})"));
    QCOMPARE(*wb::proto::runWallSeconds(s), 12.5);
    QVERIFY(!s.train_samples_per_s);  // samples_per_s is not training throughput
    QVERIFY(!cpuUse(s));
  }

  // A run folder an earlier version wrote (summary.json as a literal: launcher_wall_s, no
  // train_* clocks, a cpu without the contended verdict, a field since dropped) loads, and its
  // figures reach the comparison.
  void anOldRunFolderLoads() {
    QTemporaryDir dir;
    FakeRun run;
    run.start().step(1, 10, 640, 1, 1.0).step(1, 20, 1280, 2, 0.9).eval(1, 3, 0.81).epoch(1, 3, 3);
    const std::string folder = run.write(dir.path(), QStringLiteral("old"));
    std::ofstream(wb::proto::RunDir{folder}.summary()) << R"({
      "status": "ok", "run_id": "old", "name": "fmnist", "epochs": 1, "steps": 20, "samples": 1280,
      "wall_s": 3.2, "best_val_acc": 0.81, "final_val_acc": 0.81, "peak_mem": 104857600,
      "device": "cpu", "world_size": 1, "launcher_wall_s": 5.5, "samples_per_s": 400.0,
      "cpu": {"cores": 2, "asked_cores": 2, "used_cores": 1.9, "other_load_cores": 0.6}
    })";
    auto r = loadRun(folder);
    QVERIFY(r.ok());
    QCOMPARE(int(r->problems.size()), 1);  // the field since dropped: loaded without it, and said
    QVERIFY2(r->problems[0].find("samples_per_s") != std::string::npos, r->problems[0].c_str());
    QCOMPARE(r->status, std::string("ok"));
    QVERIFY(r->finished);
    const RunMetrics m = computeMetrics(*r, 0.8);
    QCOMPARE(*m.run_wall_s, 5.5);
    QVERIFY(m.throughput_source != ThroughputSource::Summary);  // samples_per_s is not training throughput
    QVERIFY(m.contention.contended);                             // judged by its load: 0.6 cores
    QCOMPARE(r->summary.unknown, (json{{"samples_per_s", 400.0}}));
  }
};

QTEST_APPLESS_MAIN(TestRunRecord)
#include "test_run_record.moc"
