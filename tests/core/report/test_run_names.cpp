// A run is named by what its config changed against the baseline's: each kind of change in
// words, several joined, the rest counted, the name alone never a difference.
#include <QtTest/QtTest>

#include "wb/proto/config_json.h"
#include "wb/report/group_names.h"
#include "wb/report/run_names.h"

using nlohmann::json;
using namespace wb::report;

namespace {
json defaults() { return wb::proto::configToJson(wb::Config{}); }
json with(const char* path, json value) {
  json doc = defaults();
  doc[json::json_pointer(std::string("/") + QString::fromLatin1(path).replace(QLatin1Char('.'), QLatin1Char('/')).toStdString())] =
      std::move(value);
  return doc;
}
}  // namespace

class TestRunNames : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void oneChange_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("value");  // JSON
    QTest::addColumn<QString>("expected");
    QTest::newRow("bf16") << "speedups.precision" << "\"bf16-mixed\"" << "+ bf16";
    QTest::newRow("fp16") << "speedups.precision" << "\"16-mixed\"" << "+ fp16";
    QTest::newRow("workers") << "speedups.workers" << "2" << "workers 2";
    QTest::newRow("devices") << "speedups.devices" << "2" << "devices 2";
    QTest::newRow("pinned") << "speedups.pin_memory" << "true" << "+ pin memory";
    QTest::newRow("no inference eval") << "speedups.inference_eval" << "false" << "− inference-mode eval";
    QTest::newRow("zero2") << "speedups.sharding" << "\"zero2\"" << "+ zero2";
    QTest::newRow("patience") << "speedups.early_stopping.patience" << "2" << "patience 2";
    QTest::newRow("folder") << "data.dataset" << "\"folder:/tmp/fmnist/png/\"" << "folder png";
    QTest::newRow("model") << "model.name" << "\"mnist-cnn\"" << "mnist-cnn";
    QTest::newRow("lr") << "optim.lr" << "0.05" << "lr 0.05";
    QTest::newRow("epochs") << "train.epochs" << "2" << "2 epochs";
    QTest::newRow("batch") << "train.batch_size" << "32" << "batch 32";
    QTest::newRow("eval batch") << "train.eval_batch_size" << "1" << "eval batch 1";
    // Keys that used to show raw, and 0 that means "all".
    QTest::newRow("train images") << "data.limit_train" << "10000" << "10000 train images";
    QTest::newRow("val images") << "data.limit_val" << "500" << "500 val images";
    QTest::newRow("image size") << "data.image_size" << "64" << "64 px";
    QTest::newRow("seed") << "seed" << "7" << "seed 7";
    // The rest in the schema's words, not their keys.
    QTest::newRow("held-out fraction") << "data.val_fraction" << "0.1" << "held-out fraction 0.1";
    QTest::newRow("base batch") << "optim.lr_base_batch" << "64" << "base batch 64";
    QTest::newRow("lr scaled") << "optim.lr_scaling" << "\"linear\"" << "lr scaled linear";
    QTest::newRow("weight decay") << "optim.weight_decay" << "0.01" << "weight decay 0.01";
  }
  void oneChange() {
    QFETCH(QString, path);
    QFETCH(QString, value);
    QFETCH(QString, expected);
    const json run = with(path.toLatin1().constData(), json::parse(value.toStdString()));
    QCOMPARE(QString::fromStdString(differenceName(run, defaults())), expected);
  }

  // Counts whose 0 or 1 reads differently (a baseline with a limit, a variant without one).
  void countsInWords() {
    QCOMPARE(QString::fromStdString(changeName("data.limit_train", 0)), QStringLiteral("all train images"));
    QCOMPARE(QString::fromStdString(changeName("data.limit_val", 0)), QStringLiteral("all val images"));
    QCOMPARE(QString::fromStdString(changeName("data.image_size", 0)), QStringLiteral("native size"));
    QCOMPARE(QString::fromStdString(changeName("train.epochs", 1)), QStringLiteral("1 epoch"));
  }

  // A lever past the recipe's is named in its descriptor's words.
  void leversInTheirDescriptorsWords() {
    QCOMPARE(QString::fromStdString(changeName("speedups.channels_last", true)), QStringLiteral("channels-last on"));
    QCOMPARE(QString::fromStdString(changeName("speedups.grad_accumulation", 4)), QStringLiteral("accumulate 4 micro-batches"));
    QCOMPARE(QString::fromStdString(changeName("speedups.decoded_cache", "disk")), QStringLiteral("decoded cache disk"));
    json run = defaults();
    run["speedups"]["fused_optimizer"] = true;
    QCOMPARE(QString::fromStdString(differenceName(run, defaults())), QStringLiteral("multi-tensor step on"));
  }

  void theNameAloneIsNoDifference() {
    json run = defaults();
    run["name"] = "something else";
    QCOMPARE(QString::fromStdString(differenceName(run, defaults())), QString());
    QCOMPARE(QString::fromStdString(differenceName(json(), defaults())), QString());
  }

  void severalChangesJoinedAndTheRestCounted() {
    json run = defaults();
    run["speedups"]["precision"] = "bf16-mixed";
    run["speedups"]["workers"] = 2;
    const std::string two = differenceName(run, defaults());
    QVERIFY2(two.find("+ bf16") != std::string::npos && two.find("workers 2") != std::string::npos, two.c_str());
    run["speedups"]["devices"] = 2;
    run["optim"]["lr"] = 0.02;
    run["train"]["epochs"] = 3;
    const std::string many = differenceName(run, defaults());
    QVERIFY2(many.find(", +2 more") != std::string::npos, many.c_str());
  }

  // The speedups a run changes are named first, whatever their place in the config.
  void theSpeedupsComeFirst() {
    json run = defaults();
    run["optim"]["lr"] = 0.02;
    run["speedups"]["workers"] = 2;
    QCOMPARE(QString::fromStdString(differenceName(run, defaults())), QStringLiteral("workers 2, lr 0.02"));
  }

  // An experiment's runs named against what they all share: only what sets each apart. What
  // they share is taken from them, what they differ in stays the reference's.
  void runsOfOneExperimentReadWhatSetsThemApart() {
    json a = defaults(), b = defaults(), c = defaults();
    for (json* run : {&a, &b, &c}) (*run)["data"]["limit_val"] = 512, (*run)["train"]["log_every"] = 7;
    b["speedups"]["workers"] = 2;
    c["train"]["batch_size"] = 256;
    const json shared = sharedReference({a, b, c}, defaults());
    QCOMPARE(QString::fromStdString(differenceName(b, shared)), QStringLiteral("workers 2"));
    QCOMPARE(QString::fromStdString(differenceName(c, shared)), QStringLiteral("batch 256"));
    QCOMPARE(QString::fromStdString(differenceName(a, shared)), QString());  // the shared config itself
    QVERIFY(QString::fromStdString(differenceName(b, defaults())).contains(QStringLiteral("512 val images")));
    QCOMPARE(sharedReference({b}, defaults()), defaults());  // one run: nothing to tell apart
    // A field only some runs hold is not added to the reference.
    json d = b;
    d["extra"] = 1;
    QVERIFY(!sharedReference({b, d}, defaults()).contains("extra"));
  }

  void theMonitorAndItsModeAreOneChange() {
    json run = defaults();
    run["speedups"]["early_stopping"]["monitor"] = "val_acc";
    run["speedups"]["early_stopping"]["mode"] = "max";
    QCOMPARE(QString::fromStdString(differenceName(run, defaults())), QStringLiteral("monitor val_acc"));
  }
};

QTEST_APPLESS_MAIN(TestRunNames)
#include "test_run_names.moc"
