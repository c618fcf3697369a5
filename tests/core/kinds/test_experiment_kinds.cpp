// The registry of experiment kinds: each kind is found by its record file in a folder written by
// that kind's own writer (a ladder's outputs, a search's outputs, a try's record), and its answer
// is the sentence that writer stored; a folder without a record is no kind, and a record without
// an answer (or one that cannot be read) gives none, for the caller to say why.
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <filesystem>
#include <set>

#include "wb/common/fs.h"
#include "wb/experiment/try.h"
#include "wb/kinds/experiment_kinds.h"
#include "wb/ladder/ladder.h"
#include "wb/ladder/ladder_run.h"
#include "wb/proto/try_record.h"
#include "wb/proto/tune_record.h"
#include "wb/stats/estimate_json.h"
#include "wb/tune/tune.h"

namespace fs = std::filesystem;
using namespace wb;

namespace {

stats::SpeedupEstimate faster() {
  stats::SpeedupEstimate e;
  e.point = 1.10, e.lo = 1.04, e.hi = 1.17, e.verdict = stats::Verdict::Faster, e.pairs = 3;
  return e;
}

// A greedy ladder that kept channels-last, 1.10× faster.
ladder::Ladder keptChannelsLast() {
  ladder::Ladder l;
  l.greedy = true;
  l.target_acc = 0.714;
  const Config base = ladder::ladderBaseline(Config{});
  Config cl = base;
  cl.speedups.channels_last = true;
  ladder::LadderRow baseline, step, kept;
  baseline.step.key = "baseline", baseline.step.config = base;
  step.step.key = "channels_last", step.step.config = cl, step.estimates.to_target = faster(), step.decision = "kept: 1.10× faster";
  kept.step.key = ladder::kKeptStep, kept.step.config = cl, kept.estimates.to_target = faster();
  for (ladder::LadderRow* r : {&baseline, &step, &kept}) r->repeats = 1, r->target_s = 10, r->settled = "by parts";
  l.rows = {baseline, step, kept};
  l.answer = ladder::ladderAnswer(l);
  return l;
}

// A try of channels-last by parts, its answer made as the try makes it.
proto::TryRecord channelsLastTry() {
  proto::TryRecord r;
  r.status = "ok";
  r.variant.config.speedups.channels_last = true;
  r.setting = "speedups.channels_last=true";
  r.method = "composed";
  r.math = {{"keeps_math", true}, {"checked", true}};
  r.target_acc = 0.714;
  r.reached = true;
  r.estimate = {{"to_target", stats::estimateJson(faster())}, {"throughput", stats::estimateJson(faster())}};
  r.answer = experiment::tryAnswer(r);
  return r;
}

// A search that kept the config as given.
proto::TuneRecord keptAsGiven() {
  proto::TuneRecord r;
  r.status = "ok";
  r.best = "baseline";
  r.target_acc = 0.714;
  r.answer = tune::tuneAnswer(r);
  return r;
}

const kinds::ExperimentKind& kind(const char* id) {
  const kinds::ExperimentKind* k = kinds::findKind(id);
  if (!k) qFatal("no kind %s", id);
  return *k;
}

}  // namespace

class TestExperimentKinds : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // Ids (the commands) and names (the window's words) are each one kind's; records differ.
  void eachKindIsOneEntry() {
    std::set<std::string> ids, records;
    for (const kinds::ExperimentKind& k : kinds::experimentKinds()) {
      ids.insert(k.id);
      records.insert(k.record);
      QCOMPARE(kinds::findKind(k.id), &k);
      QCOMPARE(kinds::findKind(k.name), &k);
    }
    QCOMPARE(ids, (std::set<std::string>{"try", "ladder", "tune"}));
    QCOMPARE(records, (std::set<std::string>{"try.json", "ladder.json", "tune.json"}));
    QCOMPARE(std::string(kind("tune").name), std::string("search"));
    QVERIFY(kinds::findKind("noise") == nullptr);
  }

  // The ladder's outputs, the search's outputs and the try's record, each in a folder of its
  // own: the folder's kind is found by its record and the answer read is the one written.
  void eachKindReadsTheAnswerItsWriterStored_data() {
    QTest::addColumn<QString>("id");
    QTest::addColumn<QString>("file");
    QTest::newRow("ladder") << QStringLiteral("ladder") << QStringLiteral("ladder.json");
    QTest::newRow("try") << QStringLiteral("try") << QStringLiteral("try.json");
    QTest::newRow("tune") << QStringLiteral("tune") << QStringLiteral("tune.json");
  }
  void eachKindReadsTheAnswerItsWriterStored() {
    QFETCH(QString, id);
    QFETCH(QString, file);
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    std::string written;
    if (id == QLatin1String("ladder")) {
      const ladder::Ladder l = keptChannelsLast();
      QVERIFY(ladder::writeLadderOutputs(dir, l, {}, nullptr).ok());
      written = l.answer;
    } else if (id == QLatin1String("try")) {
      const proto::TryRecord r = channelsLastTry();
      QVERIFY(writeFileAtomic(dir / "try.json", proto::tryRecordJson(r).dump(2) + "\n").ok());
      written = r.answer;
    } else {
      const proto::TuneRecord r = keptAsGiven();
      QVERIFY(tune::writeTuneOutputs(dir, r).ok());
      written = r.answer;
    }
    QVERIFY(!written.empty());
    QVERIFY(fs::is_regular_file(dir / file.toStdString()));
    const kinds::ExperimentKind* found = kinds::kindOfFolder(dir);
    QVERIFY(found);
    QCOMPARE(QString::fromLatin1(found->id), id);
    QCOMPARE(kinds::recordIn(*found, dir), dir / file.toStdString());
    QCOMPARE(QString::fromStdString(kinds::answerIn(*found, dir)), QString::fromStdString(written));
  }

  // No record: no kind. A record cut mid-file, or one written before answers were: no answer (the
  // window says what it shows instead), though the ladder's own reader fills an older one in.
  void noRecordOrNoAnswerGivesNone() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    QVERIFY(kinds::kindOfFolder(dir) == nullptr);
    ladder::Ladder older = keptChannelsLast();
    older.answer.clear();
    QVERIFY(writeFileAtomic(dir / "ladder.json", ladder::ladderJson(older).dump(2)).ok());
    QCOMPARE(kinds::kindOfFolder(dir), &kind("ladder"));
    QCOMPARE(kinds::answerIn(kind("ladder"), dir), std::string());
    QVERIFY(!ladder::loadLadder(dir.string())->answer.empty());
    QVERIFY(writeFileAtomic(dir / "ladder.json", "{\"answer\": \"Turn on").ok());
    QCOMPARE(kinds::answerIn(kind("ladder"), dir), std::string());
    QCOMPARE(kinds::answerIn(kind("try"), dir), std::string());  // no try.json here
  }
};

QTEST_APPLESS_MAIN(TestExperimentKinds)
#include "test_experiment_kinds.moc"
