// Config validation and its JSON form: every bad field is reported at once, by its exact path.
#include <QtTest/QtTest>
#include <QTemporaryDir>

#include <fstream>

#include "wb/common/config.h"
#include "wb/common/config_schema.h"
#include "wb/proto/config_json.h"

using nlohmann::json;

class TestConfig : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void defaultsAreValid() {
    QVERIFY(wb::validate(wb::Config{}).empty());
    auto doc = wb::proto::configToJson(wb::Config{});
    QCOMPARE(QString::fromStdString(doc["data"]["dataset"].get<std::string>()), QStringLiteral("fashion-mnist"));
    QCOMPARE(doc["train"]["batch_size"].get<int>(), 64);
    auto back = wb::proto::configFromJson(doc);
    QVERIFY(back.ok());
    QCOMPARE(wb::proto::configToJson(*back), doc);
  }

  void badField_data() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("path");
    QTest::newRow("negative lr") << R"({"optim":{"lr":-1}})" << "optim.lr";
    QTest::newRow("zero lr") << R"({"optim":{"lr":0}})" << "optim.lr";
    QTest::newRow("lr as string") << R"({"optim":{"lr":"fast"}})" << "optim.lr";
    QTest::newRow("unknown optimiser") << R"({"optim":{"name":"lion"}})" << "optim.name";
    QTest::newRow("bad schedule") << R"({"optim":{"schedule":"linear"}})" << "optim.schedule";
    QTest::newRow("momentum 1") << R"({"optim":{"momentum":1.0}})" << "optim.momentum";
    QTest::newRow("zero batch") << R"({"train":{"batch_size":0}})" << "train.batch_size";
    QTest::newRow("fractional epochs") << R"({"train":{"epochs":1.5}})" << "train.epochs";
    QTest::newRow("zero epochs") << R"({"train":{"epochs":0}})" << "train.epochs";
    QTest::newRow("negative workers") << R"({"speedups":{"workers":-2}})" << "speedups.workers";
    QTest::newRow("devices 0") << R"({"speedups":{"devices":0}})" << "speedups.devices";
    QTest::newRow("precision fp8") << R"({"speedups":{"precision":"fp8"}})" << "speedups.precision";
    QTest::newRow("sharding alone") << R"({"speedups":{"sharding":"zero2"}})" << "speedups.sharding";
    QTest::newRow("monitor") << R"({"speedups":{"early_stopping":{"monitor":"acc"}}})" << "speedups.early_stopping.monitor";
    QTest::newRow("pin as int") << R"({"speedups":{"pin_memory":1}})" << "speedups.pin_memory";
    QTest::newRow("dataset scheme") << R"({"data":{"dataset":"s3://x"}})" << "data.dataset";
    QTest::newRow("val_fraction 1") << R"({"data":{"val_fraction":1}})" << "data.val_fraction";
    QTest::newRow("model") << R"({"model":{"name":"vgg"}})" << "model.name";
    QTest::newRow("typo key") << R"({"train":{"bach_size":32}})" << "train.bach_size";
    QTest::newRow("negative seed") << R"({"seed":-1})" << "seed";
    QTest::newRow("lr_scaling unknown") << R"({"optim":{"lr_scaling":"cubic"}})" << "optim.lr_scaling";
    QTest::newRow("lr_scaling as number") << R"({"optim":{"lr_scaling":2}})" << "optim.lr_scaling";
    QTest::newRow("lr_scaling_warmup 1") << R"({"optim":{"lr_scaling_warmup":1}})" << "optim.lr_scaling_warmup";
    QTest::newRow("lr_scaling_warmup negative") << R"({"optim":{"lr_scaling_warmup":-0.1}})" << "optim.lr_scaling_warmup";
    QTest::newRow("lr_base_batch negative") << R"({"optim":{"lr_base_batch":-1}})" << "optim.lr_base_batch";
  }
  // optim.lr_scaling names the values it takes; each of them is accepted.
  void lrScalingValues() {
    auto bad = wb::proto::configFromJson(json::parse(R"({"optim":{"lr_scaling":"cubic"}})"));
    QVERIFY(!bad.ok());
    QCOMPARE(QString::fromStdString(bad.error().message).section(QLatin1Char('\n'), 0, 0),
             QStringLiteral("Scale the lr (optim.lr_scaling): \"cubic\" \u2014 one of none, linear, sqrt (lr \u00d7 devices, \u00d7 sqrt(devices))"));
    for (const char* mode : {"none", "linear", "sqrt"}) {
      auto doc = wb::proto::configToJson(wb::Config{});
      QVERIFY(wb::proto::applyOverride(doc, std::string("optim.lr_scaling=") + mode).ok());
      auto c = wb::proto::configFromJson(doc);
      QVERIFY2(c.ok(), mode);
      QCOMPARE(QString::fromStdString(c->optim.lr_scaling), QString::fromLatin1(mode));
    }
    QCOMPARE(QString::fromStdString(wb::Config{}.optim.lr_scaling), QStringLiteral("none"));
  }
  void badField() {
    QFETCH(QString, json);
    QFETCH(QString, path);
    auto doc = json::parse(json.toStdString());
    auto errors = wb::proto::configErrors(doc);
    QCOMPARE(int(errors.size()), 1);
    QCOMPARE(QString::fromStdString(errors[0].path), path);
    auto r = wb::proto::configFromJson(doc);
    QVERIFY(!r.ok());
    QCOMPARE(int(r.error().code), int(wb::Errc::InvalidConfig));
    // Named by its label, then its key: "Learning rate (optim.lr): -1 — must be > 0".
    const wb::FieldSpec* spec = wb::findFieldSpec(path.toStdString());
    const QString named = spec ? QString::fromUtf8(spec->label) + QStringLiteral(" (") + path + QStringLiteral("): ")
                               : path + QStringLiteral(": ");  // a key no field has
    QVERIFY2(QString::fromStdString(r.error().message).startsWith(named), r.error().message.c_str());
  }

  void everyErrorAtOnce() {
    auto doc = json::parse(R"({"optim":{"lr":-1,"name":"x"},"train":{"batch_size":0},"speedups":{"workers":-1}})");
    auto errors = wb::proto::configErrors(doc);
    QCOMPARE(int(errors.size()), 4);
    QCOMPARE(QString::fromStdString(errors[0].str()),
             QString::fromUtf8("Optimiser (optim.name): \"x\" \u2014 one of sgd, adam, adamw, adadelta"));
    bool sawLr = false;
    for (auto& e : errors)
      if (e.str() == "Learning rate (optim.lr): -1 \u2014 must be > 0") sawLr = true;
    QVERIFY(sawLr);
  }

  void overrides() {
    json doc = json::object();
    QVERIFY(wb::proto::applyOverride(doc, "optim.lr=0.5").ok());
    QVERIFY(wb::proto::applyOverride(doc, "speedups.pin_memory=true").ok());
    QVERIFY(wb::proto::applyOverride(doc, "name=123").ok());  // string field stays a string
    QVERIFY(wb::proto::applyOverride(doc, "data.dataset=folder:/tmp/x").ok());
    auto c = wb::proto::configFromJson(doc);
    QVERIFY2(c.ok(), c.ok() ? "" : c.error().message.c_str());
    QCOMPARE(c->optim.lr, 0.5);
    QVERIFY(c->speedups.pin_memory);
    QCOMPARE(QString::fromStdString(c->name), QStringLiteral("123"));
    auto bad = wb::proto::applyOverride(doc, "optim.lrr=1");
    QVERIFY(!bad.ok());
    QVERIFY(QString::fromStdString(bad.error().message).contains(QStringLiteral("optim.lrr")));
    QVERIFY(!wb::proto::applyOverride(doc, "optim.lr").ok());
  }

  // An unknown key, a wrong type and a bad value side by side: none hides another.
  void everyKindAtOnce() {
    auto doc = json::parse(R"({"optim":{"lrr":0.1,"momentum":"high","name":"lion"},"train":{"batch_size":0}})");
    auto errors = wb::proto::configErrors(doc);
    QStringList paths;
    for (const auto& e : errors) paths << QString::fromStdString(e.path);
    paths.sort();
    QCOMPARE(paths, (QStringList{QStringLiteral("optim.lrr"), QStringLiteral("optim.momentum"),
                                 QStringLiteral("optim.name"), QStringLiteral("train.batch_size")}));
    auto r = wb::proto::configFromJson(doc);
    QVERIFY(!r.ok());
    for (const auto& p : paths) QVERIFY2(QString::fromStdString(r.error().message).contains(p), qPrintable(p));
  }

  // An integer that does not fit its field is an error naming the field and its range (the
  // schema's where it has a most, else the schema's least to the type's most), never a silent
  // wrap-around (4294967297 as an int is 1).
  void integerOverflowIsAnError_data() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("range");
    QTest::newRow("epochs 2^32+1") << R"({"train":{"epochs":4294967297}})" << "train.epochs" << "in 1..1000000";
    QTest::newRow("epochs as float") << R"({"train":{"epochs":4294967297.0}})" << "train.epochs" << "in 1..1000000";
    QTest::newRow("workers -2^32") << R"({"speedups":{"workers":-4294967296}})" << "speedups.workers" << "in 0..256";
    QTest::newRow("max_steps 1e19") << R"({"train":{"max_steps":1e19}})" << "train.max_steps" << "in 0..9223372036854775807";
    QTest::newRow("max_steps 2^64-1") << R"({"train":{"max_steps":18446744073709551615}})" << "train.max_steps" << "..9223372036854775807";
    QTest::newRow("seed 1e20") << R"({"seed":1e20})" << "seed" << "0..18446744073709551615";
  }
  void integerOverflowIsAnError() {
    QFETCH(QString, json);
    QFETCH(QString, path);
    QFETCH(QString, range);
    auto errors = wb::proto::configErrors(json::parse(json.toStdString()));
    QCOMPARE(int(errors.size()), 1);
    QCOMPARE(QString::fromStdString(errors[0].path), path);
    QVERIFY2(QString::fromStdString(errors[0].allowed).contains(range), errors[0].str().c_str());
  }

  void overflowingNumberOverrideNamesTheField() {
    json doc = json::object();
    QVERIFY(wb::proto::applyOverride(doc, "optim.lr=1e999").ok());  // not JSON: kept as text
    auto errors = wb::proto::configErrors(doc);
    QCOMPARE(int(errors.size()), 1);
    QCOMPARE(QString::fromStdString(errors[0].path), QStringLiteral("optim.lr"));
    QVERIFY2(errors[0].allowed.find("number") != std::string::npos, errors[0].str().c_str());
  }

  // "mnist" is no dataset spec: refused by validation, naming the allowed forms.
  void unknownDatasetSpecIsRefused() {
    auto errors = wb::proto::configErrors(json::parse(R"({"data":{"dataset":"mnist"}})"));
    QCOMPARE(int(errors.size()), 1);
    QCOMPARE(QString::fromStdString(errors[0].path), QStringLiteral("data.dataset"));
    QCOMPARE(QString::fromStdString(errors[0].allowed),
             QStringLiteral("must be fashion-mnist | folder:<dir> | idx:<dir> | cifar10:<dir> (e.g. MNIST as idx:<dir>)"));
  }

  // A recorded run's settings as written: taken where the type fits, the default elsewhere, and
  // nothing refused (a config the validator would refuse reads back as it was).
  void configAsWrittenTakesWhatFitsUnchecked() {
    nlohmann::json doc = nlohmann::json::parse(R"({"speedups": {"devices": 1, "sharding": "zero1", "workers": "two",
        "early_stopping": {"patience": 3, "monitor": "val_acc", "mode": "max", "min_delta": 1, "check_finite": false}},
        "optim": {"lr": 0.5}, "unknown": 1})");
    const wb::Config c = wb::proto::configAsWritten(doc);
    QCOMPARE(c.speedups.sharding, std::string("zero1"));  // validate() would refuse it on one device
    QCOMPARE(c.speedups.devices, 1);
    QCOMPARE(c.speedups.workers, wb::Config{}.speedups.workers);  // not a number: the default
    QCOMPARE(c.speedups.early_stopping.patience, 3);
    QCOMPARE(c.speedups.early_stopping.monitor, std::string("val_acc"));
    QCOMPARE(c.speedups.early_stopping.mode, std::string("max"));
    QCOMPARE(c.speedups.early_stopping.min_delta, 1.0);  // an integer where a real goes fits
    QCOMPARE(c.speedups.early_stopping.check_finite, false);
    QCOMPARE(c.optim.lr, 0.5);
    doc["speedups"]["early_stopping"]["patience"] = 2.5;  // a real where a count goes: the default
    QCOMPARE(wb::proto::configAsWritten(doc).speedups.early_stopping.patience, wb::Config{}.speedups.early_stopping.patience);
    QCOMPARE(wb::proto::configAsWritten(nlohmann::json()).speedups.devices, wb::Config{}.speedups.devices);
  }

  void malformedFileGivesLineAndColumn() {
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("exp.json")).toStdString();
    std::ofstream(path) << "{\n  \"optim\": {\n    \"lr\": 0.1,\n  }\n}\n";  // trailing comma on line 3
    auto r = wb::proto::readConfigDocument(path);
    QVERIFY(!r.ok());
    QCOMPARE(int(r.error().code), int(wb::Errc::InvalidConfig));
    const QString msg = QString::fromStdString(r.error().message);
    QVERIFY2(msg.startsWith(QString::fromStdString(path + ":4:3: not valid JSON")), qPrintable(msg));
    auto load = wb::proto::loadConfigFile(path);
    QVERIFY(!load.ok());
    QCOMPARE(load.error().message, r.error().message);
  }
};

QTEST_APPLESS_MAIN(TestConfig)
#include "test_config.moc"
