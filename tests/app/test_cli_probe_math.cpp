// End to end: `workbench-cli probe math` on a tiny real experiment (Fashion-MNIST, real lenet
// steps): a lever that keeps the math is said to keep it with its per-step table and the stated
// tolerance, bf16 is said to change it with the step and why (exit 0 either way), and bad input
// names the field (exit 2).
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include "../support/machine.h"
#include "../support/proc.h"

using nlohmann::json;

namespace {

wb::test::ProcResult runCli(const QStringList& args) {
  return wb::test::runProcess(QStringLiteral(WB_CLI_PATH), args, 300000, QProcessEnvironment::systemEnvironment());
}

QStringList probeMath(const QString& vary, const QStringList& more = {}) {
  return QStringList{QStringLiteral("probe"), QStringLiteral("math"), QStringLiteral("--vary"), vary,
                     QStringLiteral("--steps"), QStringLiteral("5"), QStringLiteral("--set"),
                     QStringLiteral("data.limit_train=512"), QStringLiteral("--set"), QStringLiteral("train.batch_size=32"),
                     QStringLiteral("--set"), QStringLiteral("data.limit_val=256")} +
         more;
}

}  // namespace

class TestCliProbeMath : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void workersKeepTheMath() {
    WB_NEED(wb::test::missingFashionMnist());
    const auto r = runCli(probeMath(QStringLiteral("speedups.workers=2"), {QStringLiteral("--json")}));
    QVERIFY2(r.rc == 0, r.err.constData());
    const json doc = json::parse(r.out.toStdString(), nullptr, false);
    QVERIFY2(doc.is_object(), r.out.constData());
    QCOMPARE(doc["keeps_math"].get<bool>(), true);
    QCOMPARE(doc["checked"].get<bool>(), true);
    QCOMPARE(doc["speedup"].get<std::string>(), std::string("workers"));
    QCOMPARE(doc["steps"].get<int>(), 5);
    QCOMPARE(int(doc["rows"].size()), 6);  // five steps and the validation loss
    QVERIFY(doc["diverged_at_step"].is_null());
    QVERIFY2(doc["tolerance"].get<std::string>().find("x step") != std::string::npos, doc.dump().c_str());
    for (const auto& row : doc["rows"]) QVERIFY2(row["within"].get<bool>(), doc.dump().c_str());
  }

  void bf16ChangesTheMath() {
    WB_NEED(wb::test::missingFashionMnist());
    const auto r = runCli(probeMath(QStringLiteral("speedups.precision=bf16-mixed")));
    QVERIFY2(r.rc == 0, r.err.constData());  // a verdict, not a failure
    QVERIFY2(r.out.contains("treated as changing the math") && r.out.contains("losses differ by") &&
                 r.out.contains("differs") && r.out.contains("Tolerance"),
             r.out.constData());
  }

  void notCheckableIsSaid() {
    const auto r = runCli(probeMath(QStringLiteral("speedups.devices=2"), {QStringLiteral("--json")}));
    QVERIFY2(r.rc == 0, r.err.constData());
    const json doc = json::parse(r.out.toStdString(), nullptr, false);
    QVERIFY2(doc.is_object() && !doc["checked"].get<bool>() && !doc["keeps_math"].get<bool>(), r.out.constData());
    QVERIFY2(doc["verdict"].get<std::string>().find("more than one process") != std::string::npos, r.out.constData());
  }

  void badInputNamesTheField() {
    const auto unknown = runCli(probeMath(QStringLiteral("speedups.turbo=1")));
    QCOMPARE(unknown.rc, 2);
    QVERIFY2(unknown.err.contains("speedups.turbo"), unknown.err.constData());
    const auto bad = runCli(probeMath(QStringLiteral("speedups.workers=-1")));
    QCOMPARE(bad.rc, 2);
    QVERIFY2(bad.err.contains("speedups.workers"), bad.err.constData());
    const auto none = runCli(QStringList{QStringLiteral("probe"), QStringLiteral("math")});
    QCOMPARE(none.rc, 2);
    QVERIFY2(none.err.contains("--vary"), none.err.constData());
  }
};

QTEST_APPLESS_MAIN(TestCliProbeMath)
#include "test_cli_probe_math.moc"
