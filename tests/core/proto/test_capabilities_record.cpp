// The typed capabilities record (wb/proto/capabilities_record.h): what the writer puts in the document
// reads back field for field, a reader of an older or newer workbench-cli keeps what it knows (an
// unknown key or a value of another type leaves the default), and an unmentioned speedup is
// available by default, as the ladder and the window assume.
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include "wb/proto/capabilities_record.h"

using nlohmann::json;
using wb::proto::Capabilities;

class TestCapabilitiesRecord : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void roundTrip() {
    Capabilities c;
    c.libtorch = "2.6.0";
    c.cuda = true;
    c.gpus = 2;
    c.cores = 16;
    c.gpu_names = {"H200", "H200"};
    c.models = {"lenet"};
    c.nccl = true;
    c.speedups["workers"] = {true, "threads", 256, 8, "", {}, json()};
    c.speedups["devices"] = {true, "NCCL", 2, std::nullopt, "gpus", {}, json()};
    c.speedups["precision"].values["bf16-mixed"] = {true, "bf16 on the GPU", true};
    c.speedups["precision"].values["16-mixed"] = {false, "needs CUDA", std::nullopt};
    const Capabilities back = wb::proto::capabilitiesFromJson(wb::proto::capabilitiesToJson(c));
    QVERIFY(back.known);
    QCOMPARE(back.libtorch, c.libtorch);
    QCOMPARE(back.gpus, 2);
    QCOMPARE(back.cores, 16);
    QVERIFY(back.cuda && back.nccl);
    QCOMPARE(back.gpu_names, c.gpu_names);
    QCOMPARE(*back.speedup("workers")->max, 256);
    QCOMPARE(*back.speedup("workers")->suggested, 8);
    QCOMPARE(back.speedup("devices")->kind, std::string("gpus"));
    QVERIFY(!back.speedup("devices")->suggested);
    QCOMPARE(*back.value("precision", "bf16-mixed")->native, true);
    QVERIFY(!back.value("precision", "16-mixed")->available);
    QVERIFY(!back.value("precision", "16-mixed")->native);
    QVERIFY(!back.value("precision", "fp8"));
  }

  void aDocumentFromAnotherVersionKeepsWhatItKnows() {
    const json doc = json::parse(R"({"cores": "many", "gpus": 1, "future_key": {"x": 1},
      "speedups": {"workers": {"available": true, "max": "lots", "default": 3, "probe": {"recommended": 2}},
                   "pin_memory": {"available": false, "note": "needs CUDA"},
                   "new_lever": {"available": false, "note": "needs a newer CPU", "extra": [1, 2]}}})");
    const Capabilities c = wb::proto::capabilitiesFromJson(doc);
    QVERIFY(c.known);
    QCOMPARE(c.cores, 1);  // another type: the default
    QCOMPARE(c.gpus, 1);
    QVERIFY(!c.speedup("workers")->max);
    QCOMPARE(*c.speedup("workers")->suggested, 3);
    QCOMPARE(c.speedup("workers")->probe.value("recommended", 0), 2);
    QVERIFY(!c.available("pin_memory"));
    QCOMPARE(c.note("pin_memory"), std::string("needs CUDA"));
    QVERIFY(!c.available("new_lever"));
    // Not mentioned: available, with the caller's words.
    QVERIFY(c.available("sharding"));
    QVERIFY(!c.available("sharding", false));
    QCOMPARE(c.note("sharding", "fallback"), std::string("fallback"));
  }

  void nothingSaidIsUnknown() {
    QVERIFY(!wb::proto::capabilitiesFromJson(json()).known);
    QVERIFY(!wb::proto::capabilitiesFromJson(json::object()).known);
    QVERIFY(!wb::proto::capabilitiesFromJson(json::array()).known);
  }
};

QTEST_APPLESS_MAIN(TestCapabilitiesRecord)
#include "test_capabilities_record.moc"
