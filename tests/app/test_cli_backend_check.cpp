// The start-up check of the LibTorch build, seen from a whole run (`workbench-cli run`): its result
// is in the start event; a build whose oneDNN computes wrong (WB_TEST_BACKEND_FAULT, the check's
// tamper hook, makes the library's real results non-finite) trains with oneDNN off and says so in a
// warning naming the versions; one wrong either way fails the run with that message.
#include <QtTest/QtTest>
#include <QProcess>
#include <QTemporaryDir>

#include "wb/proto/events.h"
#include "../support/machine.h"

using nlohmann::json;

namespace {
using wb::test::haveFashionMnist;

std::vector<json> eventsOf(const QByteArray& bytes) {
  std::vector<json> out;
  for (const auto& line : bytes.split('\n'))
    if (auto ev = wb::proto::decodeEvent(line.toStdString())) out.push_back(*ev);
  return out;
}

const json* first(const std::vector<json>& events, const std::string& type) {
  for (const auto& e : events)
    if (e.value("type", std::string()) == type) return &e;
  return nullptr;
}
}  // namespace

class TestCliBackendCheck : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void backendCheckInTheRun_data() {
    QTest::addColumn<QString>("fault");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<bool>("mkldnnDisabled");
    QTest::addColumn<QString>("says");  // in the warning (runs) or the end's error (fails)
    // Untampered: this build as it is. It trains; oneDNN stays on where it computes right, and a
    // build whose oneDNN is wrong (Debian 13's 2.6 on AVX-512) trains with it off, saying so.
    QTest::newRow("this build as it is") << QString() << 0 << false << QStringLiteral("oneDNN is switched off for this run");
    QTest::newRow("oneDNN computes NaN: trains without it")
        << QStringLiteral("nan-with-onednn") << 0 << true << QStringLiteral("oneDNN is switched off for this run");
    QTest::newRow("NaN with and without oneDNN: the run fails")
        << QStringLiteral("nan-always") << 1 << false << QStringLiteral("its figures cannot be trusted");
  }
  void backendCheckInTheRun() {
    WB_NEED(wb::test::missingFashionMnist());
    QFETCH(QString, fault);
    QFETCH(int, exitCode);
    QFETCH(bool, mkldnnDisabled);
    QFETCH(QString, says);
    QTemporaryDir root;
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    if (!fault.isEmpty()) env.insert(QStringLiteral("WB_TEST_BACKEND_FAULT"), fault);
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(WB_CLI_PATH),
            {QStringLiteral("run"), QStringLiteral("--run-dir"), root.filePath(QStringLiteral("r")),
             QStringLiteral("--events-stdout"), QStringLiteral("--set"), QStringLiteral("data.limit_train=640"),
             QStringLiteral("--set"), QStringLiteral("data.limit_val=256")});
    QVERIFY(p.waitForFinished(240000));
    const auto events = eventsOf(p.readAllStandardOutput());
    QCOMPARE(p.exitCode(), exitCode);
    const json* end = first(events, "end");
    QVERIFY(end);
    if (exitCode != 0) {
      const std::string error = (*end)["summary"].value("error", std::string());
      QVERIFY2(error.find(says.toStdString()) != std::string::npos, end->dump().c_str());
      QVERIFY2(error.find("LibTorch ") != std::string::npos && error.find("oneDNN") != std::string::npos, error.c_str());
      return;
    }
    const json* start = first(events, "start");
    QVERIFY(start && start->contains("backend_check"));
    const json& check = (*start)["backend_check"];
    QCOMPARE(check.value("ok", false), true);
    if (fault.isEmpty()) mkldnnDisabled = check.value("mkldnn_disabled", false);  // the build's own finding
    QCOMPARE(check.value("mkldnn_disabled", !mkldnnDisabled), mkldnnDisabled);
    QVERIFY(check["versions"].contains("libtorch") && check["versions"].contains("onednn"));
    bool warned = false;
    for (const auto& e : events)
      if (e.value("type", std::string()) == "warning" && !says.isEmpty() &&
          e.value("message", std::string()).find(says.toStdString()) != std::string::npos) {
        warned = true;
        QVERIFY2(e["message"].get<std::string>().find("LibTorch ") != std::string::npos, e.dump().c_str());
      }
    QCOMPARE(warned, mkldnnDisabled);
  }
};

QTEST_APPLESS_MAIN(TestCliBackendCheck)
#include "test_cli_backend_check.moc"
