// The set-up panel driven with QTest: the toggles produce the expected config JSON, invalid
// values are refused with the core's message shown word for word beside the field, and the
// machine's capabilities disable what it cannot do, with the reason.
#include <QAbstractButton>
#include <QAbstractSpinBox>
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QStandardItemModel>
#include <QSpinBox>
#include <QtTest/QtTest>

#include "setup/dataset_picker.h"
#include "setup/json_fields.h"
#include "setup/setup_panel.h"
#include "setup/speedups_group.h"
#include "ui_test_util.h"
#include "wb/common/choices.h"
#include "wb/proto/config_json.h"

using nlohmann::json;
using wb::ui::SetupPanel;

namespace {

// The contract's example answer of `workbench-cli capabilities --json` on a 2-core CPU machine.
json cpuCapabilities() {
  return json::parse(
      "{\"version\":\"0.1.0\",\"libtorch\":\"1.13.0\",\"cuda\":false,\"gpus\":0,\"gpu_names\":[],\"cores\":2,"
      "\"nccl\":false,\"gloo\":true,\"models\":[\"lenet\",\"mnist-cnn\",\"mlp\",\"resnet18\"],"
      "\"speedups\":{\"workers\":{\"available\":true,\"default\":2,\"max\":64,\"note\":\"2 cores\"},"
      "\"pin_memory\":{\"available\":false,\"note\":\"needs CUDA; not available on this machine\"},"
      "\"devices\":{\"available\":true,\"max\":2,\"kind\":\"cpu-processes\",\"note\":\"CPU processes over Gloo\"},"
      "\"precision\":{\"available\":true,\"values\":{\"32-true\":{\"available\":true,\"note\":\"\"},"
      "\"bf16-mixed\":{\"available\":true,\"note\":\"bf16 autocast\"},"
      "\"16-mixed\":{\"available\":false,\"note\":\"needs CUDA; use bf16-mixed on CPU\"}}},"
      "\"early_stopping\":{\"available\":true,\"note\":\"\"},"
      "\"sharding\":{\"available\":true,\"note\":\"needs devices > 1\"},"
      "\"inference_eval\":{\"available\":true,\"note\":\"\"}}}");
}

QStringList strings(std::initializer_list<const char*> items) {
  QStringList out;
  for (const char* s : items) out << QString::fromUtf8(s);
  return out;
}

QWidget* field(QWidget* root, const QString& path) {
  auto* w = root->findChild<QWidget*>(path);
  if (!w) qWarning("no widget named %s", qPrintable(path));
  return w;
}

// Sets a widget the way a user would: keys for spin boxes, line edits and combo boxes, a
// click for check boxes and toggle buttons.
bool drive(QWidget* root, const QString& path, const QString& value) {
  QWidget* w = field(root, path);
  if (!w || !w->isEnabled()) return false;
  w->setFocus();
  if (auto* combo = qobject_cast<QComboBox*>(w)) {
    const int target = combo->findData(value);
    if (target < 0) return false;
    for (int guard = 0; combo->currentIndex() != target && guard < 20; ++guard)
      QTest::keyClick(combo, combo->currentIndex() < target ? Qt::Key_Down : Qt::Key_Up);
    return combo->currentIndex() == target;
  }
  if (auto* spin = qobject_cast<QAbstractSpinBox*>(w)) {
    QTest::keyClick(spin, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClicks(spin, value);
    return true;
  }
  if (auto* edit = qobject_cast<QLineEdit*>(w)) {
    QTest::keyClick(edit, Qt::Key_A, Qt::ControlModifier);
    if (value.isEmpty()) QTest::keyClick(edit, Qt::Key_Delete);
    else QTest::keyClicks(edit, value);
    return true;
  }
  if (auto* button = qobject_cast<QAbstractButton*>(w)) {
    const bool want = value == QLatin1String("true");
    if (button->isChecked() != want) QTest::mouseClick(button, Qt::LeftButton, {}, button->rect().center());
    return button->isChecked() == want;
  }
  return false;
}

}  // namespace

class TestSetupPanel : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { wb::ui::test::setUpEnvironment(); }

  void togglesProduceJson_data() {
    QTest::addColumn<QStringList>("actions");   // "path=value", in order
    QTest::addColumn<QString>("expected");      // JSON object of dotted path -> value
    QTest::newRow("loader workers") << strings({"speedups.workers=3"}) << "{\"speedups.workers\":3}";
    QTest::newRow("devices and sharding") << strings({"speedups.devices=2", "speedups.sharding=zero1"})
                                          << "{\"speedups.devices\":2,\"speedups.sharding\":\"zero1\"}";
    QTest::newRow("sharding falls back when devices drop")
        << strings({"speedups.devices=2", "speedups.sharding=zero2", "speedups.devices=1"})
        << "{\"speedups.devices\":1,\"speedups.sharding\":\"off\"}";
    QTest::newRow("bf16 precision") << strings({"speedups.precision=bf16-mixed"})
                                    << "{\"speedups.precision\":\"bf16-mixed\"}";
    QTest::newRow("early stopping on accuracy")
        << strings({"speedups.early_stopping.patience=3", "speedups.early_stopping.more=true",
                       "speedups.early_stopping.monitor=val_acc", "speedups.early_stopping.min_delta=0.01"})
        << "{\"speedups.early_stopping.patience\":3,\"speedups.early_stopping.monitor\":\"val_acc\","
           "\"speedups.early_stopping.mode\":\"max\",\"speedups.early_stopping.min_delta\":0.01}";
    QTest::newRow("inference-mode eval off") << strings({"speedups.inference_eval=false"})
                                             << "{\"speedups.inference_eval\":false}";
    QTest::newRow("model and optimiser")
        << strings({"model.name=mnist-cnn", "optim.name=adam", "optim.lr=0.001", "train.batch_size=128", "train.epochs=3"})
        << "{\"model.name\":\"mnist-cnn\",\"optim.name\":\"adam\",\"optim.lr\":0.001,\"train.batch_size\":128,"
           "\"train.epochs\":3}";
    QTest::newRow("lr scaling with its warm-up")
        << strings({"speedups.devices=2", "optim.lr_scaling=linear", "optim.lr_scaling_warmup=0.1"})
        << "{\"speedups.devices\":2,\"optim.lr_scaling\":\"linear\",\"optim.lr_scaling_warmup\":0.1}";
    QTest::newRow("lr scaling square root") << strings({"optim.lr_scaling=sqrt"}) << "{\"optim.lr_scaling\":\"sqrt\"}";
    QTest::newRow("dataset subset") << strings({"data.limit_train=2000", "data.limit_val=500"})
                                    << "{\"data.limit_train\":2000,\"data.limit_val\":500,\"data.dataset\":\"fashion-mnist\"}";
  }
  void togglesProduceJson() {
    QFETCH(QStringList, actions);
    QFETCH(QString, expected);
    SetupPanel panel;
    panel.setCapabilities(cpuCapabilities());
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    for (const QString& a : actions) {
      const int eq = a.indexOf(QLatin1Char('='));
      QVERIFY2(drive(&panel, a.left(eq), a.mid(eq + 1)), qPrintable(a));
    }
    const json doc = panel.configJson();
    const json want = json::parse(expected.toStdString());
    for (auto it = want.begin(); it != want.end(); ++it) {
      const json got = wb::ui::fieldValue(doc, QString::fromStdString(it.key()));
      QVERIFY2(got == it.value(), qPrintable(QStringLiteral("%1: got %2, want %3")
                                                 .arg(QString::fromStdString(it.key()), QString::fromStdString(got.dump()),
                                                      QString::fromStdString(it.value().dump()))));
    }
    QVERIFY2(panel.isValid(), qPrintable(panel.errorsShown().join(QLatin1Char('\n'))));
    QVERIFY(wb::proto::configErrors(doc).empty());
  }

  void invalidValueRefused_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("errorLabel");
    QTest::addColumn<QString>("message");  // the core's words, the field named by its own label
    QTest::newRow("negative learning rate") << "optim.lr" << "-1" << "optim.lr" << "Learning rate: -1 \u2014 must be > 0";
    QTest::newRow("learning rate not a number") << "optim.lr" << "fast" << "optim.lr"
                                                << "Learning rate: \"fast\" \u2014 must be a number";
    QTest::newRow("empty name") << "name" << "" << "name" << "Name: \"\" \u2014 must not be empty";
    // (a folder kind without its folder asks for one instead: aFolderKindAsksForItsFolder)
  }
  void invalidValueRefused() {
    QFETCH(QString, path);
    QFETCH(QString, value);
    QFETCH(QString, errorLabel);
    QFETCH(QString, message);
    SetupPanel panel;
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QVERIFY(panel.isValid());
    QSignalSpy validity(&panel, &SetupPanel::validityChanged);
    QVERIFY(drive(&panel, path, value));
    QVERIFY(!panel.isValid());
    QCOMPARE(validity.count(), 1);
    QCOMPARE(validity.last().at(0).toBool(), false);
    auto* label = panel.findChild<QLabel*>(QStringLiteral("error:") + errorLabel);
    QVERIFY(label);
    QVERIFY(label->isVisibleTo(&panel));
    QCOMPARE(label->text(), message);
    QVERIFY(panel.errorsShown().contains(message));
    // The field itself is outlined, and why Run is refused names it.
    auto* field = panel.findChild<QWidget*>(path);
    QVERIFY(field->styleSheet().contains(QStringLiteral("border")));
    QVERIFY2(panel.whyNotValid().contains(message), qPrintable(panel.whyNotValid()));

    // Putting the default back clears the message and makes the set-up runnable again.
    panel.setConfigJson(wb::proto::configToJson(wb::Config{}));
    QVERIFY(panel.isValid());
    QVERIFY(!label->isVisibleTo(&panel));
    QVERIFY(!field->styleSheet().contains(QStringLiteral("border")));
  }

  void unavailableTogglesAreDisabledWithReason() {
    SetupPanel panel;
    panel.setCapabilities(cpuCapabilities());
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    auto* pin = panel.findChild<QCheckBox*>(QStringLiteral("speedups.pin_memory"));
    QVERIFY(pin && pin->isVisibleTo(&panel));
    QVERIFY(!pin->isEnabled());
    QCOMPARE(panel.speedups()->availabilityText(QStringLiteral("pin_memory")),
             QStringLiteral("Not available here: needs CUDA; not available on this machine"));
    QVERIFY(panel.findChild<QLabel*>(QStringLiteral("availability:pin_memory"))->isVisibleTo(&panel));
    QCOMPARE(wb::ui::fieldValue(panel.configJson(), QStringLiteral("speedups.pin_memory")), json(false));

    // fp16 is greyed in the list, with its reason; bf16 stays.
    auto* precision = panel.findChild<QComboBox*>(QStringLiteral("speedups.precision"));
    auto* model = qobject_cast<QStandardItemModel*>(precision->model());
    QVERIFY(!model->item(precision->findData(QStringLiteral("16-mixed")))->isEnabled());
    QVERIFY(model->item(precision->findData(QStringLiteral("bf16-mixed")))->isEnabled());
    QVERIFY(panel.speedups()->availabilityText(QStringLiteral("precision")).contains(QStringLiteral("needs CUDA; use bf16-mixed on CPU")));
    QVERIFY(!drive(&panel, QStringLiteral("speedups.precision"), QStringLiteral("16-mixed")));

    // Sharding waits for a second device, and says so.
    auto* sharding = panel.findChild<QComboBox*>(QStringLiteral("speedups.sharding"));
    QVERIFY(!sharding->isEnabled());
    QVERIFY(panel.speedups()->availabilityText(QStringLiteral("sharding")).contains(QStringLiteral("devices > 1")));
    QVERIFY(drive(&panel, QStringLiteral("speedups.devices"), QStringLiteral("2")));
    QVERIFY(sharding->isEnabled());

    // The default experiment keeps Loader workers at 0 whatever the machine suggests: the first
    // run, the baseline, has every speedup off.
    QCOMPARE(wb::ui::fieldValue(panel.configJson(), QStringLiteral("speedups.workers")), json(0));
  }

  // optim.lr_scaling: the combo shows what a config file says and writes back what it shows; each
  // value's help is its tooltip, and the combo says it applies whenever Devices > 1.
  void lrScalingRoundTripsWithItsHelp() {
    SetupPanel panel;
    json doc = wb::proto::configToJson(wb::Config{});
    doc["optim"]["lr_scaling"] = "sqrt";
    doc["optim"]["lr_scaling_warmup"] = 0.2;
    panel.setConfigJson(doc);
    auto* combo = panel.findChild<QComboBox*>(QStringLiteral("optim.lr_scaling"));
    auto* warmup = panel.findChild<QAbstractSpinBox*>(QStringLiteral("optim.lr_scaling_warmup"));
    QVERIFY(combo && warmup);
    QCOMPARE(combo->currentData().toString(), QStringLiteral("sqrt"));
    QCOMPARE(panel.lrScaling(), QStringLiteral("sqrt"));
    QVERIFY(warmup->isEnabled());
    const json out = panel.configJson();
    QCOMPARE(out["optim"]["lr_scaling"], json("sqrt"));
    QCOMPARE(out["optim"]["lr_scaling_warmup"].get<double>(), 0.2);
    QCOMPARE(combo->count(), int(wb::lrScalingChoices().size()));
    for (int i = 0; i < combo->count(); ++i) {
      const wb::Choice* c = wb::findChoice(wb::lrScalingChoices(), combo->itemData(i).toString().toStdString());
      QVERIFY(c);
      QCOMPARE(combo->itemData(i, Qt::ToolTipRole).toString(), QString::fromUtf8(c->help));
    }
    QVERIFY2(combo->toolTip().contains(QStringLiteral("Devices > 1")), qPrintable(combo->toolTip()));
    // Back to none: the warm-up has nothing to warm up.
    doc["optim"]["lr_scaling"] = "none";
    panel.setConfigJson(doc);
    QCOMPARE(panel.configJson()["optim"]["lr_scaling"], json("none"));
    QVERIFY(!warmup->isEnabled());
  }

  void keepsFieldsWithoutWidgets() {
    SetupPanel panel;
    json doc = wb::proto::configToJson(wb::Config{});
    doc["data"]["augment"]["hflip"] = true;
    doc["train"]["log_every"] = 5;
    doc["optim"]["lr"] = 0.05;
    panel.setConfigJson(doc);
    const json out = panel.configJson();
    QCOMPARE(out["data"]["augment"]["hflip"], json(true));
    QCOMPARE(out["train"]["log_every"], json(5));
    QCOMPARE(out["optim"]["lr"].get<double>(), 0.05);
    QVERIFY(panel.isValid());
  }

  void datasetFolderKind_data() {
    QTest::addColumn<QStringList>("files");
    QTest::addColumn<QString>("kind");
    QTest::newRow("idx") << strings({"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"}) << "idx";
    QTest::newRow("cifar") << strings({"data_batch_1.bin", "test_batch.bin"}) << "cifar10";
    QTest::newRow("image folder") << strings({"cat/1.png", "dog/2.png"}) << "folder";
  }
  void datasetFolderKind() {
    QFETCH(QStringList, files);
    QFETCH(QString, kind);
    QTemporaryDir dir;
    for (const QString& f : files) {
      QDir().mkpath(QFileInfo(dir.filePath(f)).absolutePath());
      QVERIFY(wb::ui::test::writeFile(dir.filePath(f), "x"));
    }
    SetupPanel panel;
    panel.setDatasetFolder(dir.path());
    QCOMPARE(wb::ui::fieldString(panel.configJson(), QStringLiteral("data.dataset")), kind + QLatin1Char(':') + dir.path());
  }

  // "Image folder" chosen before a folder is picked: the picker asks for one, no raw config
  // message; Run is refused until there is a folder, and says why.
  void aFolderKindAsksForItsFolder() {
    SetupPanel panel;
    QVERIFY(panel.isValid());
    QVERIFY(drive(&panel, QStringLiteral("data.kind"), QStringLiteral("folder")));
    QVERIFY(!panel.isValid());
    for (const QString& e : panel.errorsShown()) QVERIFY2(!e.startsWith(QStringLiteral("data.dataset")), qPrintable(e));
    QVERIFY(panel.findChild<QLabel*>(QStringLiteral("error:data.dataset"))->isHidden());
    QCOMPARE(panel.dataset()->checkText(), QStringLiteral("Pick a folder."));
    QCOMPARE(panel.whyNotValid(), QStringLiteral("Pick the dataset folder first."));
    // The placeholder fits the field; the whole hint is its tooltip.
    auto* path = panel.findChild<QLineEdit*>(QStringLiteral("data.path"));
    QVERIFY(path->fontMetrics().horizontalAdvance(path->placeholderText()) < 200);
    QVERIFY(path->toolTip().contains(QStringLiteral("drop it on the window")));
  }

  // Where bf16 is emulated (no AVX-512 BF16 or AMX: capabilities say native false) the precision
  // row says it is slower here and nothing in it recommends bf16; where it is native, neither.
  // This machine's own answer, whichever CPU it is, then an emulating CPU's.
  void precisionDoesNotRecommendEmulatedBf16() {
    QProcess cli;
    cli.start(wb::ui::test::cliPath(), {QStringLiteral("capabilities"), QStringLiteral("--json")});
    QVERIFY(cli.waitForFinished(120000));
    const json mine = json::parse(cli.readAllStandardOutput().toStdString(), nullptr, false);
    QVERIFY(mine.is_object());
    const json bf16 = mine["speedups"]["precision"]["values"]["bf16-mixed"];
    const bool native = bf16.value("native", true);
    SetupPanel panel;
    panel.setCapabilities(mine);
    const QString row = panel.speedups()->availabilityText(QStringLiteral("precision"));
    QVERIFY2(row.contains(QStringLiteral("emulated")) == !native, qPrintable(row));
    if (!native) QVERIFY2(!row.contains(QStringLiteral("use bf16")), qPrintable(row));

    json emulating = cpuCapabilities();
    emulating["speedups"]["precision"]["values"]["bf16-mixed"]["native"] = false;
    panel.setCapabilities(emulating);
    QVERIFY2(panel.speedups()->availabilityText(QStringLiteral("precision"))
                 .contains(QStringLiteral("bf16 mixed is emulated on this CPU, slower than 32-bit")),
             qPrintable(panel.speedups()->availabilityText(QStringLiteral("precision"))));
  }

  // A number typed outside its box's range refuses Run while it stands, naming the field by its
  // label; leaving the box puts the last good value back and says so instead of doing it silently.
  void aNumberTypedOutsideItsRangeIsRefused() {
    SetupPanel panel;
    panel.show();
    panel.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&panel));
    QVERIFY(drive(&panel, QStringLiteral("train.batch_size"), QStringLiteral("0")));
    QVERIFY(!panel.isValid());
    auto* label = panel.findChild<QLabel*>(QStringLiteral("error:train.batch_size"));
    QCOMPARE(label->text(), QStringLiteral("Batch size: 0 \u2014 must be a number in 1..65536"));
    QVERIFY2(panel.whyNotValid().startsWith(QStringLiteral("Fix Batch size: 0")), qPrintable(panel.whyNotValid()));
    QVERIFY(panel.findChild<QWidget*>(QStringLiteral("train.batch_size"))->styleSheet().contains(QStringLiteral("border")));

    panel.findChild<QWidget*>(QStringLiteral("name"))->setFocus();
    QTRY_VERIFY(panel.isValid());
    QCOMPARE(wb::ui::fieldNumber(panel.configJson(), QStringLiteral("train.batch_size"), 0), 64.0);
    QVERIFY2(label->isVisibleTo(&panel) && label->text().contains(QStringLiteral("it went back to 64")), qPrintable(label->text()));
  }

  // A document's value outside the schema's range (epochs 99999999) is not clamped into the box
  // silently: Run is refused with the range it violates until the field is edited.
  void aDocumentValueOutsideTheRangeIsRefused() {
    SetupPanel panel;
    panel.show();
    panel.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&panel));
    json doc = wb::proto::configToJson(wb::Config{});
    doc["train"]["epochs"] = 99999999;
    panel.setConfigJson(doc);
    QVERIFY(!panel.isValid());
    QVERIFY2(panel.whyNotValid().contains(QStringLiteral("Epochs: 99999999 \u2014 must be in 1..1000000")),
             qPrintable(panel.whyNotValid()));
    QVERIFY(drive(&panel, QStringLiteral("train.epochs"), QStringLiteral("3")));
    QVERIFY2(panel.isValid(), qPrintable(panel.whyNotValid()));
  }

  // A number typed past a box's top (Epochs 99999999) stays as typed and is refused with the
  // field's label and range: the keystroke that takes it out of range is not dropped (it left
  // 999999, silently); a value in range still types as before.
  void aTypedValueOutsideTheRangeIsRefusedNotCut() {
    SetupPanel panel;
    panel.show();
    panel.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&panel));
    QVERIFY(drive(&panel, QStringLiteral("train.epochs"), QStringLiteral("99999999")));
    auto* epochs = panel.findChild<QSpinBox*>(QStringLiteral("train.epochs"));
    QCOMPARE(epochs->cleanText(), QStringLiteral("99999999"));
    QVERIFY(!panel.isValid());
    QVERIFY2(panel.whyNotValid().contains(QStringLiteral("Epochs: 99999999")) && panel.whyNotValid().contains(QStringLiteral("1..1000000")),
             qPrintable(panel.whyNotValid()));
    QVERIFY(drive(&panel, QStringLiteral("train.epochs"), QStringLiteral("12")));
    QCOMPARE(epochs->value(), 12);
    QVERIFY2(panel.isValid(), qPrintable(panel.whyNotValid()));
  }

  // One image of 41 that cannot be decoded is more than a run skips (data.max_bad_fraction 1 %):
  // the check refuses the folder with that reason, as the run would stop; a set-up that allows
  // 5 % takes it.
  void aFolderWithTooManyCorruptImagesIsRefused() {
    QTemporaryDir dir;
    for (const char* cls : {"cat", "dog"}) {
      QDir().mkpath(dir.filePath(QString::fromLatin1(cls)));
      for (int i = 0; i < 20; ++i) {
        QImage img(16, 16, QImage::Format_Grayscale8);
        img.fill(cls[0] == 'c' ? 40 + i : 200 - i);
        QVERIFY(img.save(dir.filePath(QStringLiteral("%1/%2.png").arg(QString::fromLatin1(cls)).arg(i))));
      }
    }
    QVERIFY(wb::ui::test::writeFile(dir.filePath(QStringLiteral("cat/bad.png")), QByteArray("not a png at all")));
    SetupPanel panel;
    QSignalSpy checked(panel.dataset(), &wb::ui::DatasetPicker::checkFinished);
    panel.setDatasetFolder(dir.path());
    QVERIFY(checked.wait(120000));
    if (panel.dataset()->checkText().startsWith(QStringLiteral("Could not check")))
      QSKIP("workbench-cli dataset inspect could not run here");
    QVERIFY(panel.dataset()->refused());
    QVERIFY(!panel.isValid());
    const QString why = panel.whyNotValid();
    QVERIFY2(why.contains(QStringLiteral("1 of 41 images cannot be read")) && why.contains(QStringLiteral("bad.png")) &&
                 why.contains(QStringLiteral("Unreadable samples allowed")),
             qPrintable(why));

    json doc = panel.configJson();
    doc["data"]["max_bad_fraction"] = 0.05;
    panel.setConfigJson(doc);
    QVERIFY(checked.wait(120000));
    QVERIFY2(panel.isValid(), qPrintable(panel.whyNotValid()));
  }

  // A folder the check finds unusable (it does not exist) refuses Run, as an invalid field does.
  void aMissingDatasetFolderRefusesRun() {
    SetupPanel panel;
    QSignalSpy checked(panel.dataset(), &wb::ui::DatasetPicker::checkFinished);
    panel.setDatasetFolder(QStringLiteral("/nonexistent/fmnist-png"));
    QVERIFY(checked.wait(120000));
    if (panel.dataset()->checkText().startsWith(QStringLiteral("Could not check")))
      QSKIP("workbench-cli dataset inspect could not run here");
    QVERIFY(panel.dataset()->refused());
    QVERIFY(!panel.isValid());
    QVERIFY2(panel.whyNotValid().startsWith(QStringLiteral("The dataset cannot be read")), qPrintable(panel.whyNotValid()));
    // Back to the built-in dataset: valid again.
    QVERIFY(drive(&panel, QStringLiteral("data.kind"), QStringLiteral("fashion-mnist")));
    QVERIFY(panel.isValid());
  }

  // A folder without a test split (the common case) holds out 10 % of train by default, says
  // so, and the run it sets up trains; with nothing held out, Run is refused with the reason.
  void aFolderWithoutTestSplitHoldsOutPartOfTrain() {
    QTemporaryDir dir;
    for (const char* cls : {"cat", "dog"}) {
      QDir().mkpath(dir.filePath(QString::fromLatin1(cls)));
      for (int i = 0; i < 6; ++i) {
        QImage img(16, 16, QImage::Format_Grayscale8);
        img.fill(cls[0] == 'c' ? 40 + i : 200 - i);
        QVERIFY(img.save(dir.filePath(QStringLiteral("%1/%2.png").arg(QString::fromLatin1(cls)).arg(i))));
      }
    }
    SetupPanel panel;
    QSignalSpy checked(panel.dataset(), &wb::ui::DatasetPicker::checkFinished);
    panel.setDatasetFolder(dir.path());
    QVERIFY(checked.wait(120000));
    if (panel.dataset()->checkText().startsWith(QStringLiteral("Could not check")))
      QSKIP("workbench-cli dataset inspect could not run here");
    QCOMPARE(wb::ui::fieldNumber(panel.configJson(), QStringLiteral("data.val_fraction"), 0), 0.1);
    QVERIFY2(panel.isValid(), qPrintable(panel.whyNotValid()));
    auto* note = panel.findChild<QLabel*>(QStringLiteral("data.holdout_note"));
    QVERIFY2(note->text().contains(QStringLiteral("1 of 12 train images held out")), qPrintable(note->text()));

    // The set-up it makes trains (one epoch, evaluated on the held-out image).
    QTemporaryDir out;
    json cfg = panel.configJson();
    wb::ui::setField(cfg, QStringLiteral("train.epochs"), 1);
    QVERIFY(wb::ui::test::writeFile(out.filePath(QStringLiteral("config.json")), QByteArray::fromStdString(cfg.dump())));
    QProcess run;
    run.start(wb::ui::test::cliPath(), {QStringLiteral("run"), QStringLiteral("--config"), out.filePath(QStringLiteral("config.json")),
                                        QStringLiteral("--runs-root"), out.filePath(QStringLiteral("runs"))});
    QVERIFY(run.waitForFinished(300000));
    QVERIFY2(run.exitCode() == 0, run.readAllStandardError().constData());

    // Nothing held out: Run is refused, naming the field.
    QVERIFY(drive(&panel, QStringLiteral("data.val_fraction"), QStringLiteral("0")));
    QVERIFY(!panel.isValid());
    QVERIFY2(panel.whyNotValid().contains(QStringLiteral("no test split")), qPrintable(panel.whyNotValid()));
    QVERIFY(panel.dataset()->refused());
    // A share again: valid again.
    QVERIFY(drive(&panel, QStringLiteral("data.val_fraction"), QStringLiteral("20")));
    QVERIFY(panel.isValid());
  }

  // Early stopping that cannot trigger in the experiment says so (as the ladder's step does).
  void earlyStoppingThatCannotTriggerSaysSo_data() {
    QTest::addColumn<int>("epochs");
    QTest::addColumn<int>("patience");
    QTest::addColumn<bool>("warned");
    QTest::newRow("patience 2 in 1 epoch") << 1 << 2 << true;
    QTest::newRow("patience 2 in 2 epochs") << 2 << 2 << true;
    QTest::newRow("patience 2 in 3 epochs") << 3 << 2 << false;
    QTest::newRow("off") << 1 << 0 << false;
  }
  void earlyStoppingThatCannotTriggerSaysSo() {
    QFETCH(int, epochs);
    QFETCH(int, patience);
    QFETCH(bool, warned);
    SetupPanel panel;
    panel.show();
    json doc = panel.configJson();
    doc["train"]["epochs"] = epochs;
    doc["speedups"]["early_stopping"]["patience"] = patience;
    panel.setConfigJson(doc);
    auto* caveat = panel.findChild<QLabel*>(QStringLiteral("caveat:early_stopping"));
    QVERIFY(caveat);
    QCOMPARE(caveat->isVisible(), warned);
    if (warned) QVERIFY2(caveat->text().contains(QStringLiteral("cannot trigger in %1 epoch(s)").arg(epochs)), qPrintable(caveat->text()));
    QVERIFY(panel.isValid());  // a warning, not an error
  }

  void datasetIsCheckedWithTheCli() {
    // The built-in dataset, checked by `workbench-cli dataset inspect fashion-mnist --json`.
    SetupPanel panel;
    auto* picker = panel.dataset();
    QTRY_VERIFY_WITH_TIMEOUT(picker->checkState() >= 0, 120000);
    QCOMPARE(picker->checkState(), 1);
    QVERIFY2(picker->checkText().contains(QStringLiteral("10 classes")), qPrintable(picker->checkText()));
  }
};

QTEST_MAIN(TestSetupPanel)
#include "test_setup_panel.moc"
