// The enum-like config values as data, and the resume rules: every value a table lists is one
// the validator accepts (and one just outside it is refused, naming the table's values), and
// each resume rule says what to change in one wording.
#include <QtTest/QtTest>

#include <functional>

#include "wb/common/choices.h"
#include "wb/common/config.h"
#include "wb/common/resume_rules.h"
#include "wb/common/speedups.h"

using Setter = std::function<void(wb::Config&, const std::string&)>;
Q_DECLARE_METATYPE(Setter)

namespace {

struct Field {
  const char* path;
  const std::vector<wb::Choice>* choices;
  Setter set;
};

std::vector<Field> fields() {
  return {
      {"model.name", &wb::modelChoices(), [](wb::Config& c, const std::string& v) { c.model.name = v; }},
      {"optim.name", &wb::optimizerChoices(), [](wb::Config& c, const std::string& v) { c.optim.name = v; }},
      {"optim.schedule", &wb::scheduleChoices(), [](wb::Config& c, const std::string& v) { c.optim.schedule = v; }},
      {"speedups.precision", &wb::precisionChoices(),
       [](wb::Config& c, const std::string& v) { c.speedups.precision = v; }},
      {"speedups.sharding", &wb::shardingChoices(),
       [](wb::Config& c, const std::string& v) {
         c.speedups.sharding = v;
         c.speedups.devices = 2;
       }},
      {"speedups.early_stopping.monitor", &wb::monitorChoices(),
       [](wb::Config& c, const std::string& v) { c.speedups.early_stopping.monitor = v; }},
      {"speedups.early_stopping.mode", &wb::modeChoices(),
       [](wb::Config& c, const std::string& v) { c.speedups.early_stopping.mode = v; }},
  };
}

std::string errorsOf(const wb::Config& c) { return wb::formatFieldErrors(wb::validate(c)); }

}  // namespace

class TestChoices : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void everyListedValueIsValid_data() {
    QTest::addColumn<Setter>("set");
    QTest::addColumn<QString>("value");
    for (const auto& f : fields())
      for (const auto& c : *f.choices)
        QTest::newRow((std::string(f.path) + "=" + c.value).c_str()) << f.set << QString::fromUtf8(c.value);
  }
  void everyListedValueIsValid() {
    QFETCH(Setter, set);
    QFETCH(QString, value);
    wb::Config c;
    set(c, value.toStdString());
    QCOMPARE(QString::fromStdString(errorsOf(c)), QString());
  }

  void anUnlistedValueIsRefusedNamingTheList_data() {
    QTest::addColumn<Setter>("set");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("values");
    for (const auto& f : fields())
      QTest::newRow(f.path) << f.set << QString::fromUtf8(f.path) << QString::fromStdString(wb::choiceValues(*f.choices));
  }
  void anUnlistedValueIsRefusedNamingTheList() {
    QFETCH(Setter, set);
    QFETCH(QString, path);
    QFETCH(QString, values);
    wb::Config c;
    set(c, "no-such-value");
    const QString errors = QString::fromStdString(errorsOf(c));
    // Named by its label, then its key: "Optimiser (optim.name): "no-such-value" — one of ...".
    QVERIFY2(errors.contains(QStringLiteral("(") + path + QStringLiteral("): \"no-such-value\"")), qPrintable(errors));
    QVERIFY2(errors.contains(values), qPrintable(errors));
  }

  void datasetKindsAreSpecs() {
    wb::Config c;
    for (const auto& k : wb::datasetKinds()) {
      const std::string kind = k.value;
      c.data.dataset = kind == "fashion-mnist" ? kind : kind + ":/some/dir";
      QCOMPARE(QString::fromStdString(errorsOf(c)), QString());
      if (kind == "fashion-mnist") continue;
      c.data.dataset = kind + ":";  // a kind without its folder
      const QString errors = QString::fromStdString(errorsOf(c));
      QVERIFY2(errors.contains(QStringLiteral("(data.dataset)")), qPrintable(errors));
    }
  }

  void whatNeedsCudaSaysWhatToDoInstead() {
    const wb::Choice* fp16 = wb::findChoice(wb::precisionChoices(), "16-mixed");
    QVERIFY(fp16 && fp16->needs_cuda);
    QCOMPARE(QString::fromStdString(wb::needsCuda(fp16->without_cuda)),
             QStringLiteral("needs CUDA; use bf16-mixed on CPU"));
    QVERIFY(!wb::findChoice(wb::precisionChoices(), "bf16-mixed")->needs_cuda);
    const wb::Speedup* pin = wb::findSpeedup("pin_memory");
    QVERIFY(pin && pin->availability == wb::Availability::NeedsCuda);
    QCOMPARE(QString::fromStdString(wb::withoutWhatItNeeds(*pin)),
             QStringLiteral("needs CUDA; copies stay in pageable memory (no effect on CPU)"));
    QVERIFY(wb::withoutWhatItNeeds(*wb::findSpeedup("workers")).empty());
  }

  void resumeRules() {
    QVERIFY(wb::checkResumeFrom("last").ok() && wb::checkResumeFrom("best").ok());
    auto from = wb::checkResumeFrom("first");
    QVERIFY(!from.ok() && from.error().code == wb::Errc::InvalidConfig);
    QVERIFY(QString::fromStdString(from.error().message).contains(QStringLiteral("--from last or --from best")));

    QVERIFY(wb::checkEpochsLeft("runs/x", 2, 3).ok());
    auto done = wb::checkEpochsLeft("runs/x", 2, 2);
    QVERIFY(!done.ok());
    QCOMPARE(QString::fromStdString(done.error().message),
             QStringLiteral("train.epochs: runs/x has already trained 2 epoch(s) and this run asks for 2; resume "
                            "with --set train.epochs=N (N > 2) to train further"));

    QVERIFY(wb::checkSameOptimizer("last.pt", "", "adam").ok());  // unknown writer: allowed
    QVERIFY(wb::checkSameOptimizer("last.pt", "adam", "adam").ok());
    auto other = wb::checkSameOptimizer("last.pt", "sgd", "adam");
    QVERIFY(!other.ok());
    QVERIFY(QString::fromStdString(other.error().message).startsWith(QStringLiteral("optim.name: last.pt was trained with sgd")));
    QVERIFY(QString::fromStdString(other.error().message).contains(QStringLiteral("--set optim.name=sgd")));
  }
};

QTEST_APPLESS_MAIN(TestChoices)
#include "test_choices.moc"
