// A try's two configs in its folder (keepTryInputs): written when absent, kept when they read as
// the same configs, and a file holding another config, or cut mid-file, refused by name and left
// as it was; a folder holding only them takes the try.
#include <QtTest/QtTest>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "wb/experiment/try.h"
#include "wb/proto/config_json.h"

namespace fs = std::filesystem;

namespace {

std::string readAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

wb::experiment::TryOptions optionsIn(const fs::path& out) {
  wb::experiment::TryOptions o;
  o.out = out;
  o.variant.speedups.channels_last = true;
  return o;
}

}  // namespace

class TestTryInputs : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void theConfigsAreWrittenOnceAndKept() {
    QTemporaryDir dir;
    const fs::path out = fs::path(dir.path().toStdString()) / "try";
    const auto o = optionsIn(out);
    QVERIFY(wb::experiment::keepTryInputs(o).ok());
    auto variant = wb::proto::loadConfigFile((out / "variant.config.json").string());
    QVERIFY(variant.ok() && variant->speedups.channels_last);
    QVERIFY(wb::experiment::usableTryFolder(out, {}));  // only its own configs: the try may start there
    const std::string before = readAll(out / "baseline.config.json");
    QVERIFY(wb::experiment::keepTryInputs(o).ok());  // again (a continued try): nothing rewritten
    QCOMPARE(readAll(out / "baseline.config.json"), before);
  }

  void anotherOrADamagedConfigIsRefusedByNameAndKept() {
    QTemporaryDir dir;
    const fs::path out = fs::path(dir.path().toStdString()) / "try";
    auto o = optionsIn(out);
    QVERIFY(wb::experiment::keepTryInputs(o).ok());
    o.variant.speedups.channels_last = false;
    o.variant.train.batch_size = 256;  // another try's variant
    auto other = wb::experiment::keepTryInputs(o);
    QVERIFY(!other.ok());
    QVERIFY2(other.error().message.find("variant.config.json holds another try's config") != std::string::npos,
             other.error().message.c_str());
    const fs::path file = out / "variant.config.json";
    const std::string whole = readAll(file);
    std::ofstream(file, std::ios::binary | std::ios::trunc) << whole.substr(0, whole.size() / 2);  // cut mid-file
    auto cut = wb::experiment::keepTryInputs(optionsIn(out));
    QVERIFY(!cut.ok());
    QVERIFY2(cut.error().message.find("variant.config.json is unreadable") != std::string::npos, cut.error().message.c_str());
    QCOMPARE(readAll(file), whole.substr(0, whole.size() / 2));  // left as it was
  }

  void aVariantThatIsACommandHasNoConfigToUse() {
    QTemporaryDir dir;
    const fs::path out = fs::path(dir.path().toStdString()) / "try";
    auto o = optionsIn(out);
    o.variant_command = wb::experiment::UserCommand{"python train.py", 0};
    QVERIFY(wb::experiment::keepTryInputs(o).ok());
    QVERIFY(fs::exists(out / "baseline.config.json"));
    QVERIFY(!fs::exists(out / "variant.config.json"));
  }
};

QTEST_APPLESS_MAIN(TestTryInputs)
#include "test_try_inputs.moc"
