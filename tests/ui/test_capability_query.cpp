// The window's capability query: SetupPanel::queryCapabilities() asks the CLI this build made
// (`workbench-cli capabilities --json`, as a child process) and the toggles follow its answer:
// each speedup on offer or not as the document says, with its reason, and the machine's loader
// workers are suggested, not set (a fresh experiment keeps 0). A CLI that cannot be started
// leaves every toggle on offer and says why.
#include <QLabel>
#include <QProcess>
#include <QtTest/QtTest>

#include "setup/setup_panel.h"
#include "setup/speedups_group.h"
#include "setup/json_fields.h"
#include "ui_test_util.h"

using nlohmann::json;
using namespace wb::ui;
namespace t = wb::ui::test;

namespace {

json realCapabilities() {
  QProcess cli;
  cli.start(t::cliPath(), {QStringLiteral("capabilities"), QStringLiteral("--json")});
  if (!cli.waitForFinished(60000) || cli.exitCode() != 0) return nullptr;
  return json::parse(cli.readAllStandardOutput().toStdString(), nullptr, false);
}

// The status line under the toggles.
QString statusLine(const SetupPanel& panel) {
  const auto* label = panel.findChild<QLabel*>(QStringLiteral("speedups.capabilities"));
  return label ? label->text() : QString();
}

}  // namespace

class TestCapabilityQuery : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { t::setUpEnvironment(); }

  void togglesFollowTheCliAnswer() {
    const json caps = realCapabilities();
    QVERIFY2(caps.is_object() && caps.contains("speedups"), "workbench-cli capabilities --json printed no document");
    SetupPanel panel;
    QCOMPARE(panel.speedups()->suggestedWorkers(), -1);  // not asked yet
    panel.queryCapabilities();
    QTRY_VERIFY_WITH_TIMEOUT(panel.speedups()->suggestedWorkers() >= 0, 60000);

    const json& s = caps["speedups"];
    QCOMPARE(panel.speedups()->suggestedWorkers(), s["workers"]["default"].get<int>());
    // The suggestion is not applied: the first baseline has every speedup off (loader workers 0).
    QCOMPARE(fieldValue(panel.configJson(), QStringLiteral("speedups.workers")), json(0));
    for (const char* key : {"workers", "pin_memory", "devices", "inference_eval"}) {
      const bool available = s[key].value("available", true);
      const QString shown = panel.speedups()->availabilityText(QString::fromLatin1(key));
      if (available) {
        QVERIFY2(shown.isEmpty(), qPrintable(QStringLiteral("%1: %2").arg(QLatin1String(key), shown)));
      } else {
        QVERIFY2(shown.contains(QString::fromStdString(s[key].value("note", ""))),
                 qPrintable(QStringLiteral("%1: %2").arg(QLatin1String(key), shown)));
      }
    }
    // Sharding on offer or not as the machine says; on offer, it still needs devices > 1.
    const QString sharding = panel.speedups()->availabilityText(QStringLiteral("sharding"));
    QVERIFY2(s["sharding"].value("available", true) ? sharding.contains(QStringLiteral("Needs devices > 1"))
                                                    : sharding.contains(QString::fromStdString(s["sharding"].value("note", ""))),
             qPrintable(sharding));
    QVERIFY2(!statusLine(panel).contains(QStringLiteral("Could not ask")), qPrintable(statusLine(panel)));
  }

  void aCliThatCannotStartIsSaidSo() {
    const QByteArray keep = qgetenv("WB_CLI");
    qputenv("WB_CLI", QByteArrayLiteral("/nonexistent/workbench-cli"));
    SetupPanel panel;
    panel.queryCapabilities();
    QTRY_VERIFY_WITH_TIMEOUT(statusLine(panel).contains(QStringLiteral("Could not ask workbench-cli")), 60000);
    qputenv("WB_CLI", keep);
    QCOMPARE(panel.speedups()->suggestedWorkers(), -1);
    QVERIFY(panel.speedups()->availabilityText(QStringLiteral("pin_memory")).isEmpty());  // left on offer
  }
};

QTEST_MAIN(TestCapabilityQuery)
#include "test_capability_query.moc"
