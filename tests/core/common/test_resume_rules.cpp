// What a resume may not change (wb/common/resume_rules.h): the model, and the dataset unless
// --fine-tune, each refused naming the field; one dataset under two spellings is the same data.
#include <QtTest/QtTest>

#include "wb/common/paths.h"
#include "wb/common/resume_rules.h"

class TestResumeRules : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void sameDataset_data() {
    QTest::addColumn<QString>("a");
    QTest::addColumn<QString>("b");
    QTest::addColumn<bool>("same");
    const QString fmnist = QString::fromStdString(wb::defaultFashionMnistDir().string());
    QTest::newRow("identical") << "folder:/data/x" << "folder:/data/x" << true;
    QTest::newRow("fashion-mnist as idx:<its folder>") << "fashion-mnist" << QStringLiteral("idx:") + fmnist << true;
    QTest::newRow("trailing slash") << "folder:/data/x/" << "folder:/data/x" << true;
    QTest::newRow("dot-dot") << "folder:/data/y/../x" << "folder:/data/x" << true;
    QTest::newRow("other folder") << "folder:/data/x" << "folder:/data/y" << false;
    QTest::newRow("other kind, same folder") << "idx:/data/x" << "folder:/data/x" << false;
    QTest::newRow("fashion-mnist vs a folder") << "fashion-mnist" << "folder:/data/x" << false;
  }
  void sameDataset() {
    QFETCH(QString, a);
    QFETCH(QString, b);
    QFETCH(bool, same);
    QCOMPARE(wb::sameDataset(a.toStdString(), b.toStdString()), same);
    QCOMPARE(wb::sameDataset(b.toStdString(), a.toStdString()), same);
  }

  void checkSameDataset_data() {
    QTest::addColumn<QString>("asked");
    QTest::addColumn<bool>("fineTune");
    QTest::addColumn<QString>("refusal");  // empty: allowed
    QTest::newRow("same, plain resume") << "fashion-mnist" << false << "";
    QTest::newRow("another, plain resume") << "folder:/data/x" << false << "data.dataset: RUN was trained on fashion-mnist";
    QTest::newRow("another, fine-tune") << "folder:/data/x" << true << "";
    QTest::newRow("same, fine-tune") << "fashion-mnist" << true << "--fine-tune: RUN already trains on fashion-mnist";
  }
  void checkSameDataset() {
    QFETCH(QString, asked);
    QFETCH(bool, fineTune);
    QFETCH(QString, refusal);
    const wb::Status st = wb::checkSameDataset("RUN", "fashion-mnist", asked.toStdString(), fineTune);
    QCOMPARE(st.ok(), refusal.isEmpty());
    if (st.ok()) return;
    QCOMPARE(int(st.error().code), int(wb::Errc::InvalidConfig));
    QVERIFY2(QString::fromStdString(st.error().message).startsWith(refusal), st.error().message.c_str());
    if (!fineTune) QVERIFY2(st.error().message.find("--fine-tune") != std::string::npos, st.error().message.c_str());
  }

  void checkSameModel_data() {
    QTest::addColumn<QString>("was");
    QTest::addColumn<QString>("asked");
    QTest::addColumn<bool>("allowed");
    QTest::newRow("same") << "lenet" << "lenet" << true;
    QTest::newRow("unknown before") << "" << "mlp" << true;
    QTest::newRow("another net") << "lenet" << "mlp" << false;
    QTest::newRow("a moved TorchScript file (shapes decide)") << "torchscript:/a/m.pt" << "torchscript:/b/m.pt" << true;
    QTest::newRow("net to TorchScript") << "lenet" << "torchscript:/a/m.pt" << false;
  }
  void checkSameModel() {
    QFETCH(QString, was);
    QFETCH(QString, asked);
    QFETCH(bool, allowed);
    const wb::Status st = wb::checkSameModel("RUN", was.toStdString(), asked.toStdString());
    QCOMPARE(st.ok(), allowed);
    if (!st.ok())
      QVERIFY2(st.error().message.rfind("model.name: RUN was trained as " + was.toStdString(), 0) == 0,
               st.error().message.c_str());
  }
};

QTEST_APPLESS_MAIN(TestResumeRules)
#include "test_resume_rules.moc"
