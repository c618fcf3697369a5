// optim.lr_scaling on real runs: two CPU ranks (Gloo, loopback) with linear scaling train to the
// one-rank baseline's accuracy in the same epochs, where two ranks at the baseline's lr fall
// short; the run records the setting (config.json) and the lr it used and why (start event,
// step events' lr).
#include <QtTest/QtTest>
#include <QProcess>
#include <QTemporaryDir>

#include <fstream>

#include "wb/proto/events.h"
#include "wb/proto/rundir.h"
#include "../support/machine.h"

using nlohmann::json;

namespace {

using wb::test::haveFashionMnist;

struct Outcome {
  double acc = -1;     // best val acc
  json start;          // rank 0's start event
  double lastLr = 0;   // rank 0's last step event's lr
  json config;         // config.json
};

Outcome train(const QString& dir, const QStringList& sets) {
  QStringList args{QStringLiteral("run"), QStringLiteral("--run-dir"), dir};
  // Past lenet's steep start (3 epochs of 6000 samples at lr 0.05), on 5000 validation images:
  // seeds 1-3 put 2 linear-scaled ranks within 0.5 pp of 1 rank, and 2.5-4.6 pp above 2 unscaled.
  for (const char* s : {"data.limit_train=6000", "data.limit_val=5000", "train.epochs=3", "optim.lr=0.05",
                        "train.log_every=10"})
    args << QStringLiteral("--set") << QString::fromLatin1(s);
  for (const auto& s : sets) args << QStringLiteral("--set") << s;
  QProcess p;
  p.start(QStringLiteral(WB_CLI_PATH), args);
  Outcome o;
  if (!p.waitForFinished(600000) || p.exitCode() != 0) {
    qWarning("%s", p.readAllStandardError().constData());
    return o;
  }
  const wb::proto::RunDir rd{dir.toStdString()};
  std::ifstream in(rd.events());
  for (std::string line; std::getline(in, line);) {
    auto ev = wb::proto::decodeEvent(line);
    if (!ev || ev->value("rank", 0) != 0) continue;
    const std::string type = ev->value("type", "");
    if (type == "start") o.start = *ev;
    if (type == "step") o.lastLr = (*ev)["lr"].get<double>();
    if (type == "eval") o.acc = std::max(o.acc, (*ev)["val_acc"].get<double>());
  }
  std::ifstream cfg(rd.config());
  o.config = json::parse(cfg, nullptr, false);
  return o;
}

}  // namespace

class TestCliLrScaling : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void twoRanksWithLinearScalingReachTheBaseline() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir root;
    const Outcome base = train(root.filePath(QStringLiteral("base")), {});
    const Outcome unscaled = train(root.filePath(QStringLiteral("unscaled")), {QStringLiteral("speedups.devices=2")});
    const Outcome linear = train(root.filePath(QStringLiteral("linear")),
                                 {QStringLiteral("speedups.devices=2"), QStringLiteral("optim.lr_scaling=linear")});
    QVERIFY(base.acc > 0 && unscaled.acc > 0 && linear.acc > 0);
    const QString accs = QStringLiteral("best val acc: 1 rank %1, 2 ranks %2, 2 ranks linear %3")
                             .arg(base.acc).arg(unscaled.acc).arg(linear.acc);
    qInfo("%s", qPrintable(accs));
    // Equal accuracy within 2 pp of the baseline, and the scaling is what closes the gap: two
    // ranks at the baseline's lr take half the steps and fall further behind.
    QVERIFY2(linear.acc >= base.acc - 0.02, qPrintable(accs));
    QVERIFY2(linear.acc > unscaled.acc + 0.01, qPrintable(accs));

    // Recorded: the setting in config.json, the lr and why in the start event, the lr it used.
    QCOMPARE(linear.config["optim"]["lr_scaling"].get<std::string>(), std::string("linear"));
    const json& s = linear.start["lr_scaling"];
    QCOMPARE(s["mode"].get<std::string>(), std::string("linear"));
    QCOMPARE(s["devices"].get<int>(), 2);
    QCOMPARE(s["effective_lr"].get<double>(), 0.1);
    QVERIFY(s["warmup_steps"].get<int>() >= 1);
    QVERIFY2(s["note"].get<std::string>().find("linear scaling for 2 devices") != std::string::npos, s.dump().c_str());
    QCOMPARE(linear.lastLr, 0.1);
    QCOMPARE(unscaled.lastLr, 0.05);
    QCOMPARE(base.start["lr_scaling"]["effective_lr"].get<double>(), 0.05);
  }
};

QTEST_APPLESS_MAIN(TestCliLrScaling)
#include "test_cli_lr_scaling.moc"
