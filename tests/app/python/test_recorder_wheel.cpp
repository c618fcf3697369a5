// The recorder as a user installs it into their own environment: the wheel the build makes
// (app/python/pyproject.toml, target wb_recorder_wheel) pip-installed into a fresh venv, offline,
// then a plain PyTorch loop recorded with it and read back by `workbench-cli compare`. The venv
// sees the system's packages (--system-site-packages) for Debian's python3-torch, as a conda
// environment sees its own torch; nothing puts the source tree on its path.
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include "python_util.h"
#include "wb/records/run_record.h"

using nlohmann::json;

namespace {
QString cli() { return QStringLiteral(WB_CLI_PATH); }
QString wheel() { return QStringLiteral(WB_RECORDER_WHEEL); }

// The venv's environment: no PYTHONPATH (the installed package must be the one imported), no index.
QProcessEnvironment venvEnv(const QString& venv) {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.remove(QStringLiteral("PYTHONPATH"));
  env.insert(QStringLiteral("VIRTUAL_ENV"), venv);
  env.insert(QStringLiteral("PATH"), venv + QStringLiteral("/bin:") + env.value(QStringLiteral("PATH")));
  env.insert(QStringLiteral("PIP_NO_INDEX"), QStringLiteral("1"));
  env.insert(QStringLiteral("PIP_DISABLE_PIP_VERSION_CHECK"), QStringLiteral("1"));
  env.insert(QStringLiteral("PYTHONDONTWRITEBYTECODE"), QStringLiteral("1"));
  return env;
}
}  // namespace

class TestRecorderWheel : public QObject {
  Q_OBJECT
  QTemporaryDir scratch_{wb::test::scratchPattern(QStringLiteral("recorder-wheel"))};
  QString venv_;

  wb::test::ProcResult venvPython(const QStringList& args, int timeoutMs = 60000) const {
    // Run from the scratch folder: the current directory is on sys.path for -c.
    return wb::test::runProcess(venv_ + QStringLiteral("/bin/python"), args, timeoutMs, venvEnv(venv_), scratch_.path());
  }

 private Q_SLOTS:
  void initTestCase() {
    WB_NEED(wb::test::missingPython3());
    QVERIFY2(QFileInfo(wheel()).isFile(),
             qPrintable(wheel() + QStringLiteral(": no wheel; build the target wb_recorder_wheel (needs python3-setuptools, "
                                                 "python3-wheel, python3-pip)")));
    QVERIFY(scratch_.isValid());
    venv_ = scratch_.filePath(QStringLiteral("venv"));
    const auto made = wb::test::runProcess(wb::test::python3(), {QStringLiteral("-m"), QStringLiteral("venv"),
                                                                 QStringLiteral("--system-site-packages"), venv_},
                                           180000);
    QVERIFY2(made.rc == 0, made.describe().constData());
    // --ignore-installed: a recorder the .deb put in the system's dist-packages must not stand in for the wheel.
    const auto pip = venvPython({QStringLiteral("-m"), QStringLiteral("pip"), QStringLiteral("install"), QStringLiteral("--no-index"),
                                 QStringLiteral("--ignore-installed"), wheel()},
                                180000);
    QVERIFY2(pip.rc == 0, pip.describe().constData());
  }

  // The venv imports the wheel's copy, with its metadata: the version of the package, no
  // dependencies, Lightning as an optional extra.
  void installsIntoTheVenv() {
    const auto r = venvPython({QStringLiteral("-c"), QStringLiteral(
        "import json, importlib.metadata as m, workbench_recorder, workbench_recorder.lightning\n"
        "md = m.metadata('workbench-recorder')\n"
        "print(json.dumps({'file': workbench_recorder.__file__, 'version': workbench_recorder.__version__,\n"
        "  'dist_version': m.version('workbench-recorder'), 'extras': md.get_all('Provides-Extra') or [],\n"
        "  'requires': m.requires('workbench-recorder') or []}))")});
    QVERIFY2(r.rc == 0, r.describe().constData());
    const json doc = json::parse(r.out.toStdString());
    QVERIFY2(QString::fromStdString(doc["file"]).startsWith(venv_ + QStringLiteral("/lib/")), r.out.constData());
    QCOMPARE(doc["dist_version"], doc["version"]);
    QVERIFY2(wheel().contains(QString::fromStdString(doc["version"].get<std::string>())), r.out.constData());
    QCOMPARE(doc["extras"], json({"lightning"}));
    for (const auto& req : doc["requires"])  // every requirement belongs to the extra
      QVERIFY2(req.get<std::string>().find("extra == \"lightning\"") != std::string::npos ||
                   req.get<std::string>().find("extra == 'lightning'") != std::string::npos,
               req.dump().c_str());
  }

  // Every module of the source package is in the wheel (a module left out would import from the
  // source tree in the other tests and fail only for users).
  void wheelHoldsEveryModule() {
    const QStringList sources = QDir(wb::test::recorderSourceDir() + QStringLiteral("/workbench_recorder"))
                                    .entryList({QStringLiteral("*.py")}, QDir::Files);
    QVERIFY(sources.contains(QStringLiteral("lightning.py")));
    const auto r = venvPython({QStringLiteral("-c"), QStringLiteral(
        "import sys, zipfile\n"
        "print('\\n'.join(n.split('/', 1)[1] for n in zipfile.ZipFile(sys.argv[1]).namelist()\n"
        "                 if n.startswith('workbench_recorder/')))"), wheel()});
    QVERIFY2(r.rc == 0, r.describe().constData());
    QStringList inWheel = QString::fromUtf8(r.out).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    inWheel.sort();
    QCOMPARE(inWheel, sources);
  }

  // A real PyTorch loop recorded with the installed package, read by the workbench.
  void recordsARunCompareReads() {
    WB_NEED(wb::test::missingPythonTorch());
    WB_NEED(wb::test::missingFashionMnist());
    const QString run = scratch_.filePath(QStringLiteral("pip-run"));
    const auto r = venvPython({wb::test::pythonTestsDir() + QStringLiteral("/train_fashion_mnist.py"), run,
                               QStringLiteral("--epochs"), QStringLiteral("2"), QStringLiteral("--limit-train"),
                               QStringLiteral("1024")},
                              240000);
    QVERIFY2(r.rc == 0, r.describe().constData());
    auto rec = wb::records::loadRun(run.toStdString());
    QVERIFY2(rec.ok(), rec.ok() ? "" : rec.error().message.c_str());
    QCOMPARE(rec.value().status, std::string("ok"));
    QVERIFY2(rec.value().problems.empty(), rec.value().problems.empty() ? "" : rec.value().problems.front().c_str());
    QCOMPARE(rec.value().summary.steps.value_or(0), int64_t(32));  // 1024 / 64 x 2
    QCOMPARE(int(rec.value().evals.size()), 2);
    const auto cmp = wb::test::runProcess(cli(), {QStringLiteral("compare"), QStringLiteral("--details"), QStringLiteral("--baseline"), run, run}, 120000);
    QVERIFY2(cmp.rc == 0, cmp.describe().constData());
    const QString best = QString::number(*rec.value().summary.best_val_acc * 100, 'f', 2) + QStringLiteral(" %");
    QVERIFY2(cmp.all().contains(best), cmp.describe().constData());
    QVERIFY2(!cmp.all().contains(QLatin1String("this reader does not know")), cmp.describe().constData());
  }

  // Trainer.fit with the callback from the wheel, where Lightning is importable in the venv.
  void lightningTrainerFit() {
    const auto has = venvPython({QStringLiteral("-c"), QStringLiteral(
        "try:\n import lightning\nexcept ImportError:\n import pytorch_lightning")});
    if (has.rc != 0)
      QSKIP("Lightning is not installed in the venv (Debian 12 has no package for it and PyPI is out of reach "
            "here: `pip install workbench-recorder[lightning]` would fetch it)");
    const QString run = scratch_.filePath(QStringLiteral("pip-fit"));
    const auto r = venvPython({wb::test::pythonTestsDir() + QStringLiteral("/lightning_fit.py"), run}, 240000);
    QVERIFY2(r.rc == 0, r.describe().constData());
    auto rec = wb::records::loadRun(run.toStdString());
    QVERIFY2(rec.ok(), rec.ok() ? "" : rec.error().message.c_str());
    QCOMPARE(rec.value().status, std::string("ok"));
    QCOMPARE(int(rec.value().evals.size()), 3);
  }
};

QTEST_APPLESS_MAIN(TestRecorderWheel)
#include "test_recorder_wheel.moc"
