// `workbench-cli export RUN_DIR... --format tensorboard --output DIR` on real runs (a workbench run
// and a plain PyTorch loop recorded with the Python recorder, both on Fashion-MNIST), read back
// by a reader that shares no code with the exporter: Python's protobuf (python3-protobuf) with
// classes protoc makes from core/report/proto/tfevents.proto, the TFRecord CRCs checked in Python
// (read_tfevents.py), every value compared with the runs' events.jsonl and config.json. Where
// TensorBoard itself imports, its event_accumulator reads them too (tensorboard_reader.py).
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include "python_util.h"

using nlohmann::json;

namespace {
QString cli() { return QStringLiteral(WB_CLI_PATH); }

QString missingProtobufReader() {
  if (QStandardPaths::findExecutable(QStringLiteral("protoc")).isEmpty())
    return QStringLiteral("no protoc (Debian: protobuf-compiler; packaging/setup.sh installs it)");
  const QString why = wb::test::missingPythonModule(QStringLiteral("google.protobuf"));
  return why.isEmpty() ? why : QStringLiteral("python3-protobuf is needed (packaging/setup.sh installs it): ") + why;
}
}  // namespace

class TestTensorBoardExport : public QObject {
  Q_OBJECT
  QTemporaryDir scratch_{wb::test::scratchPattern(QStringLiteral("tensorboard"))};
  QStringList runs_;  // RUN_DIR=NAME, as the readers take them
  QString out_;
  QByteArray exported_;  // what export said

  QStringList runDirs() const {
    QStringList dirs;
    for (const QString& r : runs_) dirs << r.section(QLatin1Char('='), 0, 0);
    return dirs;
  }

 private Q_SLOTS:
  void initTestCase() {
    WB_NEED(wb::test::missingPython3());
    WB_NEED(missingProtobufReader());
    WB_NEED(wb::test::missingFashionMnist());
    QVERIFY(scratch_.isValid());
    const QString own = scratch_.filePath(QStringLiteral("workbench-run"));
    const auto r = wb::test::runProcess(cli(), {QStringLiteral("run"), QStringLiteral("--run-dir"), own,
                                                QStringLiteral("--set"), QStringLiteral("data.limit_train=512"),
                                                QStringLiteral("--set"), QStringLiteral("data.limit_val=256"),
                                                QStringLiteral("--set"), QStringLiteral("train.epochs=2"),
                                                QStringLiteral("--set"), QStringLiteral("train.log_every=2"),
                                                QStringLiteral("--set"), QStringLiteral("speedups.workers=1")},
                                        240000);
    QVERIFY2(r.rc == 0, r.describe().constData());
    runs_ << own + QStringLiteral("=workbench-run");
    if (wb::test::missingPythonTorch().isEmpty()) {
      const QString py = scratch_.filePath(QStringLiteral("python-run"));
      const auto p = wb::test::runPython({wb::test::pythonTestsDir() + QStringLiteral("/train_fashion_mnist.py"), py,
                                          QStringLiteral("--epochs"), QStringLiteral("2"), QStringLiteral("--limit-train"),
                                          QStringLiteral("512"), QStringLiteral("--limit-val"), QStringLiteral("256")},
                                         240000);
      QVERIFY2(p.rc == 0, p.describe().constData());
      runs_ << py + QStringLiteral("=python-run");
    } else {
      qWarning("python3-torch missing: only the workbench's own run is exported");
    }
    out_ = scratch_.filePath(QStringLiteral("tb"));
    const auto e = wb::test::runProcess(cli(), QStringList{QStringLiteral("export")} + runDirs() +
                                                   QStringList{QStringLiteral("--format"), QStringLiteral("tensorboard"),
                                                               QStringLiteral("--output"), out_},
                                        120000);
    QVERIFY2(e.rc == 0, e.describe().constData());
    exported_ = e.err;
  }

  // Every value, framing and CRC, read back by Python's protobuf, against events.jsonl.
  void protobufReaderAgreesWithTheEvents() {
    const auto r = wb::test::runPython(QStringList{wb::test::pythonTestsDir() + QStringLiteral("/read_tfevents.py"),
                                                   QStringLiteral(WB_TFEVENTS_PROTO), out_} + runs_,
                                       180000);
    QVERIFY2(r.rc == 0, r.describe().constData());
    const json doc = json::parse(r.out.toStdString());
    for (const QString& run : runs_) {
      const std::string name = run.section(QLatin1Char('='), 1).toStdString();
      QVERIFY2(doc.contains(name), r.out.constData());
      const json& one = doc[name];
      // The figures the issue names are all there.
      for (const char* tag : {"loss/train", "accuracy/val", "loss/val", "throughput/train_samples_per_s",
                              "step_time_ms/data", "step_time_ms/fwd", "step_time_ms/bwd", "step_time_ms/opt",
                              "memory_MiB/rss_peak", "eval_time_ms"})
        QVERIFY2(std::find(one["tags"].begin(), one["tags"].end(), json(tag)) != one["tags"].end(),
                 (name + ": no " + tag + "\n" + r.out.toStdString()).c_str());
      QVERIFY(one["scalars"].get<int>() > 50);
      // export said how many it wrote: the reader counts the same.
      QVERIFY2(exported_.contains(QStringLiteral("(%1 scalars from").arg(one["scalars"].get<int>()).toUtf8()),
               exported_.constData());
    }
    // The workbench's run asked for loader workers (first in the table's order): the speedups are
    // named by their words, the config's fields by their labels.
    const std::string said = doc["workbench-run"]["speedups"].get<std::string>();
    QVERIFY2(said.rfind("Speedups asked for: workers 1", 0) == 0, said.c_str());
    QVERIFY2(doc["workbench-run"]["hparams"]["Speedups"].get<std::string>().rfind("workers 1", 0) == 0, said.c_str());
    QCOMPARE(doc["workbench-run"]["hparams"]["Loader workers"].get<double>(), 1.0);
  }

  // A second export into the same folder changes nothing and says why.
  void neverOverwrites() {
    QDir tb(out_ + QStringLiteral("/workbench-run"));
    const QStringList before = tb.entryList(QDir::Files);
    QCOMPARE(before.size(), 1);
    QFile f(tb.filePath(before.front()));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray bytes = f.readAll();
    f.close();
    const auto e = wb::test::runProcess(cli(), QStringList{QStringLiteral("export")} + runDirs() +
                                                   QStringList{QStringLiteral("--format"), QStringLiteral("tensorboard"),
                                                               QStringLiteral("--output"), out_},
                                        120000);
    QCOMPARE(e.rc, 1);
    QVERIFY2(e.err.contains("already holds TensorBoard event files"), e.describe().constData());
    QCOMPARE(tb.entryList(QDir::Files), before);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), bytes);
  }

  // The comparison's formats still need a baseline; tensorboard is offered by name.
  void formatsAndBaseline() {
    const QString run = runDirs().front();
    const auto noBaseline = wb::test::runProcess(cli(), {QStringLiteral("export"), run, QStringLiteral("--output"),
                                                         scratch_.filePath(QStringLiteral("x.md"))});
    QCOMPARE(noBaseline.rc, 2);
    QVERIFY2(noBaseline.err.contains("--baseline"), noBaseline.describe().constData());
    const auto bad = wb::test::runProcess(cli(), {QStringLiteral("export"), run, QStringLiteral("--format"),
                                                  QStringLiteral("tfevents"), QStringLiteral("--output"), out_});
    QCOMPARE(bad.rc, 2);
    QVERIFY2(bad.err.contains("tensorboard"), bad.describe().constData());
  }

  // TensorBoard's own reader, where its Python package imports (not in Debian 12, no PyPI here).
  void tensorBoardReadsThem() {
    const QString missing = wb::test::missingPythonModule(QStringLiteral("tensorboard"));
    if (!missing.isEmpty())
      QSKIP(qPrintable(QStringLiteral("TensorBoard is not installed (Debian 12 has no package; `pip install tensorboard` "
                                      "needs PyPI): ") + missing));
    const auto r = wb::test::runPython(QStringList{wb::test::pythonTestsDir() + QStringLiteral("/tensorboard_reader.py"), out_} + runs_,
                                       180000);
    QVERIFY2(r.rc == 0, r.describe().constData());
  }
};

QTEST_APPLESS_MAIN(TestTensorBoardExport)
#include "test_tensorboard_export.moc"
