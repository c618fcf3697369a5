// The user's command template (try/ladder --command): which settings it reads, the command of
// one run, and which changes it cannot be told of.
#include <QtTest/QtTest>

#include "wb/proto/command_template.h"

using wb::Config;
namespace proto = wb::proto;

class TestCommandTemplate : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void aSpeedupsKeyReadsItsField() {
    auto fields = proto::commandFields("python3 train.py --p {precision} --w {workers} --b {train.batch_size} --w2 {workers} {run_dir}");
    QVERIFY(fields.ok());
    QCOMPARE(*fields, (std::vector<std::string>{"speedups.precision", "speedups.workers", "train.batch_size"}));
  }

  void theCommandTakesTheArmsValuesQuoted() {
    Config c;
    c.speedups.precision = "bf16-mixed";
    c.speedups.workers = 3;
    c.speedups.pin_memory = true;
    auto cmd = proto::expandCommand("x {precision} {workers} {pin_memory} --out {run_dir}", c, "/tmp/it's here");
    QVERIFY(cmd.ok());
    QCOMPARE(*cmd, std::string("x 'bf16-mixed' '3' 'true' --out '/tmp/it'\\''s here'"));
  }

  void doubledBracesAreLiteral() {
    auto cmd = proto::expandCommand("awk '{{print $1}}' {workers}", Config{}, "/r");
    QVERIFY2(cmd.ok(), cmd.ok() ? "" : cmd.error().message.c_str());
    QCOMPARE(*cmd, std::string("awk '{print $1}' '0'"));
    QVERIFY(proto::commandFields("awk '{{print}}'")->empty());
  }

  void anUnknownOrUnclosedPlaceholderIsRefusedByName() {
    auto bad = proto::commandFields("train.py --p {precison}");
    QVERIFY(!bad.ok());
    QVERIFY2(bad.error().message.find("{precison} is not a placeholder") != std::string::npos, bad.error().message.c_str());
    QVERIFY(bad.error().message.find("{precision}") != std::string::npos);  // the ones there are
    auto open = proto::commandFields("train.py --p {precision");
    QVERIFY(!open.ok());
    QVERIFY2(open.error().message.find("never closed") != std::string::npos, open.error().message.c_str());
    QVERIFY(!proto::commandFields("x {a~b}").ok());
  }

  // A change the command has no placeholder for cannot be measured: named, never guessed.
  void aChangeTheCommandCannotSayIsNotMeasurable() {
    Config a, b = a;
    b.speedups.precision = "bf16-mixed";
    b.name = "another name";  // names say nothing about what runs
    const std::string tmpl = "train.py --workers {workers} {run_dir}";
    QCOMPARE(proto::unreadChanges(tmpl, a, b), std::vector<std::string>{"speedups.precision"});
    const std::string why = proto::notMeasurableWith(tmpl, a, b);
    QVERIFY2(why.find("speedups.precision") != std::string::npos && why.find("{speedups.precision}") != std::string::npos,
             why.c_str());
    QVERIFY(proto::notMeasurableWith("train.py --precision {precision}", a, b).empty());
    b.speedups.early_stopping.patience = 2;  // read through its speedup's key
    QVERIFY(proto::notMeasurableWith("t {precision} {early_stopping}", a, b).empty());
    b.speedups.early_stopping.monitor = "val_acc";
    QCOMPARE(proto::unreadChanges("t {precision} {early_stopping}", a, b),
             std::vector<std::string>{"speedups.early_stopping.monitor"});
    QVERIFY(proto::notMeasurableWith("t {precision} {speedups.early_stopping}", a, b).empty());  // a section reads all of it
  }
};

QTEST_GUILESS_MAIN(TestCommandTemplate)
#include "test_command_template.moc"
