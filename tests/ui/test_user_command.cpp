// Your own training script in the window: the set-up's "Your script" field is checked like any
// field (a bad placeholder is marked and Run refused), saved and opened with the experiment, and
// Run experiment runs the script (a plain PyTorch loop with the Python recorder) as a run of the
// list, followed live to its end.
#include <QLineEdit>
#include <QScrollArea>
#include <QtTest/QtTest>

#include "../support/machine.h"

#include "../app/python/python_util.h"
#include "runs/runs_model.h"
#include "setup/setup_panel.h"
#include "ui_test_util.h"
#include "wb/records/run_record.h"

namespace t = wb::ui::test;
using nlohmann::json;
using wb::ui::MainWindow;
using wb::ui::Run;
using wb::ui::RunStatus;

namespace {
QLineEdit* scriptField(MainWindow& w) { return w.setup()->findChild<QLineEdit*>(QStringLiteral("command")); }
QString trainScript() {
  return wb::test::python3() + QStringLiteral(" ") + wb::test::pythonTestsDir() +
         QStringLiteral("/train_fashion_mnist.py {run_dir} --workers {workers} --epochs 1 --limit-train 500 --limit-val 200");
}
}  // namespace

class TestUserCommand : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() {
    t::setUpEnvironment();
    const QString old = qEnvironmentVariable("PYTHONPATH");
    qputenv("PYTHONPATH", (wb::test::recorderSourceDir() + (old.isEmpty() ? QString() : QStringLiteral(":") + old)).toUtf8());
    qputenv("PYTHONDONTWRITEBYTECODE", "1");
  }

  void aBadPlaceholderIsMarkedAndRunRefused() {
    auto root = t::scratchRoot();
    MainWindow w(t::windowOptions(root));
    QLineEdit* field = scriptField(w);
    QVERIFY(field);
    QVERIFY(w.setup()->isValid());
    field->setText(QStringLiteral("python3 train.py --precision {precison}"));
    QVERIFY(!w.setup()->isValid());
    QVERIFY(!w.runAction()->isEnabled());
    QVERIFY2(w.setup()->errorsShown().join(QLatin1Char('\n')).contains(QStringLiteral("{precison} is not a placeholder")),
             qPrintable(w.setup()->errorsShown().join(QLatin1Char('\n'))));
    if (qEnvironmentVariableIsSet("WB_GRAB_DIR")) {
      w.resize(1280, 800);
      w.show();
      for (QWidget* p = field->parentWidget(); p; p = p->parentWidget())
        if (auto* area = qobject_cast<QScrollArea*>(p)) area->ensureWidgetVisible(field, 50, 120);
      t::grabIfAsked(w, QStringLiteral("user-command-error"), QSize(1280, 800));
    }
    field->setText(QStringLiteral("python3 train.py --precision {precision}"));
    QVERIFY(w.setup()->isValid());
  }

  // Saved with the experiment, opened again, and read by the CLI as the experiment's command.
  void theScriptTravelsWithTheExperiment() {
    auto root = t::scratchRoot();
    const QString path = root.filePath(QStringLiteral("mine.json"));
    {
      MainWindow w(t::windowOptions(root));
      scriptField(w)->setText(QStringLiteral("python3 train.py {run_dir} --data.num_workers {workers}"));
      QString error;
      QVERIFY2(w.saveExperiment(path, &error), qPrintable(error));
    }
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const json doc = json::parse(f.readAll().toStdString());
    QCOMPARE(doc.value("command", ""), std::string("python3 train.py {run_dir} --data.num_workers {workers}"));
    QVERIFY(wb::proto::configFromJson(doc).ok());  // still a config the CLI runs
    MainWindow w(t::windowOptions(root));
    QString error;
    QVERIFY2(w.openExperiment(path, &error), qPrintable(error));
    QCOMPARE(w.setup()->userCommand(), QStringLiteral("python3 train.py {run_dir} --data.num_workers {workers}"));
    QVERIFY(!w.setup()->configJson().contains("command"));  // the config itself stays the workbench's
  }

  void runExperimentRunsTheScript() {
    WB_NEED(wb::test::missingPythonTorch());
    WB_NEED(wb::test::missingFashionMnist());
    auto root = t::scratchRoot();
    MainWindow w(t::windowOptions(root));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    scriptField(w)->setText(trainScript());
    QVERIFY(w.setup()->isValid());
    Run* run = w.runExperiment();
    QVERIFY(run);
    QTRY_VERIFY_WITH_TIMEOUT(wb::ui::isFinal(run->status()), 180000);
    QVERIFY2(run->status() == RunStatus::Ok,
             qPrintable(wb::ui::statusWord(run->status()) + QStringLiteral(": ") + run->errorMessage() + QLatin1Char('\n') + run->logTail()));
    QVERIFY(!run->series().steps().empty());  // followed live, like the workbench's own runs
    auto rec = wb::records::loadRun(run->runDir().toStdString());
    QVERIFY(rec.ok());
    QCOMPARE(rec->configAt("name"), json("python-fashion-mlp"));  // the script's run, not the trainer's
    QVERIFY(QFileInfo::exists(run->runDir() + QStringLiteral("/logs/command.log")));
    QLineEdit* field = scriptField(w);
    for (QWidget* p = field->parentWidget(); p; p = p->parentWidget())
      if (auto* area = qobject_cast<QScrollArea*>(p)) area->ensureWidgetVisible(field);
    t::grabIfAsked(w, QStringLiteral("user-command"), QSize(1280, 800));
  }
};

QTEST_MAIN(TestUserCommand)
#include "test_user_command.moc"
