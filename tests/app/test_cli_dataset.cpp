// `workbench-cli dataset inspect` and `run` on image folders a user may really have: class
// folders holding symbolic-link loops, an image linking to itself, an empty class folder. The
// folder is a real PNG export of Fashion-MNIST (`dataset export`), the links real symlinks.
#include <QtTest/QtTest>
#include <QTemporaryDir>

#include <filesystem>

#include "wb/proto/events.h"

using nlohmann::json;

#include "../support/proc.h"

#include "../support/machine.h"

namespace {
namespace fs = std::filesystem;

wb::test::ProcResult runCli(const QStringList& args) {
  return wb::test::runProcess(QStringLiteral(WB_CLI_PATH), args, 600000);
}

using wb::test::haveFashionMnist;

std::vector<json> eventsOf(const QByteArray& bytes) {
  std::vector<json> out;
  for (const auto& line : bytes.split('\n'))
    if (auto ev = wb::proto::decodeEvent(line.toStdString())) out.push_back(*ev);
  return out;
}

// The first class folder of a split of an exported folder.
fs::path firstClass(const fs::path& split) {
  std::vector<fs::path> classes;
  for (const auto& e : fs::directory_iterator(split)) classes.push_back(e.path());
  std::sort(classes.begin(), classes.end());
  return classes.front();
}

}  // namespace

class TestCliDataset : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // A loop in a class folder (ln -s . loop), an image linking to itself and an empty class
  // folder: `dataset inspect` names each (exit 0, no "internal error"), and `run` trains with a
  // warning naming each, instead of ending on a filesystem exception (exit 1).
  void linkLoopsAndAnEmptyClassAreNamedNotFatal() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir tmp;
    const fs::path root = tmp.path().toStdString();
    const QString spec = QStringLiteral("folder:") + tmp.path();
    const auto exported = runCli({QStringLiteral("dataset"), QStringLiteral("export"), QStringLiteral("--limit"),
                                  QStringLiteral("200"), QStringLiteral("--to"), spec});
    QVERIFY2(exported.rc == 0, exported.describe().constData());
    const fs::path cls = firstClass(root / "train");
    const fs::path loop = cls / "loop", self = cls / "self.png";
    fs::create_symlink(".", loop);
    fs::create_symlink("self.png", self);
    for (const char* split : {"train", "test"}) fs::create_directories(root / split / "99_empty");
    const fs::path empty = root / "train" / "99_empty";

    const auto inspected = runCli({QStringLiteral("dataset"), QStringLiteral("inspect"), spec, QStringLiteral("--json")});
    QVERIFY2(inspected.rc == 0, inspected.describe().constData());
    const json report = json::parse(inspected.out.toStdString());
    const std::string problems = report["problems"].dump();
    for (const fs::path& named : {loop, self, empty})
      QVERIFY2(problems.find(named.string()) != std::string::npos, problems.c_str());
    QCOMPARE(report["splits"]["train"]["classes"].size(), size_t(11));

    QTemporaryDir runs;
    const auto run = runCli({QStringLiteral("run"), QStringLiteral("--runs-root"), runs.path(),
                             QStringLiteral("--events-stdout"), QStringLiteral("--set"), QStringLiteral("data.dataset=") + spec,
                             QStringLiteral("--set"), QStringLiteral("train.batch_size=16"), QStringLiteral("--set"),
                             QStringLiteral("train.max_steps=3")});
    QVERIFY2(run.rc == 0, run.describe().constData());
    std::string warnings;
    for (const auto& e : eventsOf(run.out))
      if (e.value("type", "") == "warning") warnings += e.value("message", "") + "\n";
    for (const fs::path& named : {loop, self, empty})
      QVERIFY2(warnings.find(named.string()) != std::string::npos, warnings.c_str());
  }

  // A folder whose every entry is a loop has no images: a data error (exit 3) naming it, for
  // inspect and for run alike.
  void aFolderOfLoopsIsADataError() {
    QTemporaryDir tmp;
    const fs::path root = tmp.path().toStdString();
    fs::create_directories(root / "a");
    fs::create_symlink(".", root / "a" / "loop");
    fs::create_symlink("x.png", root / "a" / "x.png");
    const QString spec = QStringLiteral("folder:") + tmp.path();
    const auto inspected = runCli({QStringLiteral("dataset"), QStringLiteral("inspect"), spec});
    QVERIFY2(inspected.rc == 3, inspected.describe().constData());
    QVERIFY2(!inspected.all().contains(QStringLiteral("internal error")), inspected.describe().constData());
    QTemporaryDir runs;
    const auto run = runCli({QStringLiteral("run"), QStringLiteral("--runs-root"), runs.path(),
                             QStringLiteral("--set"), QStringLiteral("data.dataset=") + spec, QStringLiteral("--set"),
                             QStringLiteral("data.val_fraction=0.5")});
    QVERIFY2(run.rc == 3, run.describe().constData());
    QVERIFY2(run.all().contains(QString::fromStdString(root.string())), run.describe().constData());
  }

  // A missing folder: named once (not once per split); a folder without a test split is usable
  // (a note, not a problem) and says so as test_split false.
  void aMissingFolderIsNamedOnceAndOneFolderIsANote() {
    const auto missing = runCli({QStringLiteral("dataset"), QStringLiteral("inspect"), QStringLiteral("folder:/nonexistent/x"),
                                 QStringLiteral("--json")});
    const json m = json::parse(missing.out.toStdString(), nullptr, false);
    QVERIFY2(m.is_object(), missing.describe().constData());
    QVERIFY(!m["ok"].get<bool>());
    QCOMPARE(m["problems"].size(), size_t(1));
    QTemporaryDir tmp;
    // A 1x1 grey PNG.
    const QByteArray png = QByteArray::fromBase64(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg==");
    for (const char* cls : {"cat", "dog"}) {
      QDir().mkpath(tmp.filePath(QString::fromLatin1(cls)));
      QFile f(tmp.filePath(QString::fromLatin1(cls) + QStringLiteral("/1.png")));
      QVERIFY(f.open(QIODevice::WriteOnly) && f.write(png) == png.size());
    }
    const auto one = runCli({QStringLiteral("dataset"), QStringLiteral("inspect"), QStringLiteral("folder:") + tmp.path(),
                             QStringLiteral("--json")});
    const json o = json::parse(one.out.toStdString(), nullptr, false);
    QVERIFY2(o.is_object() && one.rc == 0, one.describe().constData());
    QVERIFY(o["ok"].get<bool>());
    QVERIFY(!o["test_split"].get<bool>());
    QVERIFY(o["problems"].empty());
    QVERIFY(o["notes"][0].get<std::string>().find("data.val_fraction") != std::string::npos);
  }

  // One image of 41 that cannot be decoded is more than the run skips (data.max_bad_fraction,
  // 1 % by default): inspect refuses the folder with the run's reason (exit 3, a data error), and
  // takes it where the share allowed covers it.
  void undecodableImagesPastTheRunsShareAreRefused() {
    QTemporaryDir tmp;
    const QByteArray png = QByteArray::fromBase64(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg==");
    for (const char* cls : {"cat", "dog"}) {
      QDir().mkpath(tmp.filePath(QString::fromLatin1(cls)));
      for (int i = 0; i < 20; ++i) {
        QFile f(tmp.filePath(QStringLiteral("%1/%2.png").arg(QString::fromLatin1(cls)).arg(i)));
        QVERIFY(f.open(QIODevice::WriteOnly) && f.write(png) == png.size());
      }
    }
    QFile bad(tmp.filePath(QStringLiteral("cat/bad.png")));
    QVERIFY(bad.open(QIODevice::WriteOnly) && bad.write("not a png") == 9);
    bad.close();
    const QString spec = QStringLiteral("folder:") + tmp.path();
    const auto refused = runCli({QStringLiteral("dataset"), QStringLiteral("inspect"), spec, QStringLiteral("--json")});
    const json r = json::parse(refused.out.toStdString(), nullptr, false);
    QVERIFY2(r.is_object() && refused.rc == 3, refused.describe().constData());
    QVERIFY(!r["ok"].get<bool>());
    const std::string why = r["problems"].back().get<std::string>();
    QVERIFY2(why.find("1 of 41 images cannot be read") != std::string::npos && why.find("bad.png") != std::string::npos &&
                 why.find("Unreadable samples allowed") != std::string::npos,
             why.c_str());
    const auto allowed = runCli({QStringLiteral("dataset"), QStringLiteral("inspect"), spec, QStringLiteral("--json"),
                                 QStringLiteral("--max-bad-fraction"), QStringLiteral("0.05")});
    const json a = json::parse(allowed.out.toStdString(), nullptr, false);
    QVERIFY2(a.is_object() && allowed.rc == 0 && a["ok"].get<bool>(), allowed.describe().constData());
  }

  // What the check takes, a run takes on every device count: the share of unreadable images is of
  // the whole split, not of a rank's shard. 149 real images and one that cannot be decoded (0.7 %,
  // under the 1 % allowed): inspect says ok, and a run of two CPU processes (Gloo) trains, where
  // it once failed on the rank holding it ("1 unreadable samples ... of 75 exceed"). A second such
  // image (1.3 %): inspect refuses the folder, and the two-process run stops on the images too.
  void aFolderTheCheckTakesTrainsOnTwoDevices() {
    WB_NEED(wb::test::missingFashionMnist());
    QTemporaryDir tmp;
    const fs::path root = tmp.path().toStdString();
    const QString spec = QStringLiteral("folder:") + tmp.path();
    const auto exported = runCli({QStringLiteral("dataset"), QStringLiteral("export"), QStringLiteral("--limit"),
                                  QStringLiteral("149"), QStringLiteral("--to"), spec});
    QVERIFY2(exported.rc == 0, exported.describe().constData());
    const auto addBad = [&](const char* name) {
      QFile bad(QString::fromStdString((firstClass(root / "train") / name).string()));
      return bad.open(QIODevice::WriteOnly) && bad.write("not a png") == 9;
    };
    QVERIFY(addBad("bad.png"));
    const auto inspect = [&] {
      const auto r = runCli({QStringLiteral("dataset"), QStringLiteral("inspect"), spec, QStringLiteral("--json")});
      return json::parse(r.out.toStdString(), nullptr, false);
    };
    const auto twoDevices = [&](const QString& name) {
      return runCli({QStringLiteral("run"), QStringLiteral("--run-dir"), tmp.filePath(name), QStringLiteral("--set"),
                     QStringLiteral("data.dataset=") + spec, QStringLiteral("--set"), QStringLiteral("speedups.devices=2"),
                     QStringLiteral("--set"), QStringLiteral("train.epochs=1"), QStringLiteral("--set"),
                     QStringLiteral("train.batch_size=16"), QStringLiteral("--set"), QStringLiteral("train.log_every=2")});
    };
    const json taken = inspect();
    QVERIFY2(taken.value("ok", false) && taken["splits"]["train"]["size"] == 150, taken.dump().c_str());
    const auto trained = twoDevices(QStringLiteral("two-devices"));
    QVERIFY2(trained.rc == 0, trained.describe().constData());
    QFile events(tmp.filePath(QStringLiteral("two-devices/events.jsonl")));
    QVERIFY(events.open(QIODevice::ReadOnly));
    QVERIFY2(events.readAll().contains("bad.png"), "the skipped image is not named in the run's events");

    QVERIFY(addBad("bad2.png"));
    const json refused = inspect();
    QVERIFY2(refused.is_object() && !refused.value("ok", true), refused.dump().c_str());
    const auto stopped = twoDevices(QStringLiteral("two-devices-two-bad"));
    QVERIFY2(stopped.rc != 0, stopped.describe().constData());
    QFile summary(tmp.filePath(QStringLiteral("two-devices-two-bad/summary.json")));
    QVERIFY(summary.open(QIODevice::ReadOnly));
    const QByteArray said = summary.readAll() + stopped.all().toUtf8();
    QVERIFY2(said.contains("unreadable samples in this epoch") && said.contains("data.max_bad_fraction"), said.constData());
  }
};

QTEST_GUILESS_MAIN(TestCliDataset)
#include "test_cli_dataset.moc"
