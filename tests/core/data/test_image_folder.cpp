// ImageFolder reading (layouts, empty class folder, corrupt JPEG through the loader) and
// exportImageFolder round trips, on real PNG/JPEG files the test writes.
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>

#include "data_test_util.h"
#include "wb/data/dataset.h"
#include "wb/data/loader.h"

using namespace wb::data;
namespace fs = std::filesystem;

namespace {

std::string str(const QString& s) { return s.toStdString(); }

// <root>/<class>/<k>.png for each class name, `per` images each of h x w.
void writeClasses(const std::string& root, const std::vector<std::string>& classes, int per, int h, int w, int channels) {
  int64_t seed = 0;
  for (const auto& c : classes) {
    fs::create_directories(root + "/" + c);
    for (int k = 0; k < per; ++k) datatest::writePng(root + "/" + c + "/img" + std::to_string(k) + ".png", seed++, h, w, channels);
  }
}

// A real encoded image of h x w noise-like pixels ("jpg" or "png").
std::string encoded(const std::string& format, int h, int w) {
  cv::Mat m(h, w, CV_8UC3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w * 3; ++x) m.ptr<uint8_t>(y)[x] = datatest::pixel(7, x % 3, y, x / 3);
  std::vector<unsigned char> bytes;
  if (!cv::imencode("." + format, m, bytes)) throw std::runtime_error("cannot encode " + format);
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace

class TestImageFolder : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void trainTestLayout_data() {
    QTest::addColumn<QString>("testDir");
    QTest::addColumn<int>("channels");
    QTest::newRow("train+test gray") << "test" << 1;
    QTest::newRow("train+val rgb") << "val" << 3;
  }
  void trainTestLayout() {
    QFETCH(QString, testDir);
    QFETCH(int, channels);
    QTemporaryDir tmp;
    const std::string root = str(tmp.path());
    writeClasses(root + "/train", {"zebra", "ant", "moth"}, 3, 6, 5, channels);
    writeClasses(root + "/" + str(testDir), {"zebra", "ant", "moth"}, 1, 6, 5, channels);
    auto train = openDataset("folder:" + root, "train");
    QVERIFY2(train.ok(), train.ok() ? "" : train.error().message.c_str());
    const Dataset& ds = **train;
    QCOMPARE(ds.info().class_names, (std::vector<std::string>{"ant", "moth", "zebra"}));  // sorted
    QCOMPARE(ds.size(), int64_t(9));
    QCOMPARE(ds.info().channels, channels);
    QCOMPARE(ds.info().height, 6);
    QCOMPARE(ds.info().width, 5);
    QVERIFY(!ds.inMemory());
    QVERIFY(ds.info().problems.empty());
    // Sorted and deterministic: ant = 0 (samples 0..2), moth = 1 (3..5), zebra = 2 (6..8).
    QCOMPARE(ds.label(3), int64_t(1));
    QVERIFY(ds.describe(3).find("/train/moth/img0.png") != std::string::npos);
    // ant was written 2nd (seeds 3..5); its img1 is seed 4.
    const auto s = ds.get(1);
    QCOMPARE(s.label, int64_t(0));
    QCOMPARE(s.image.sizes().vec(), (std::vector<int64_t>{channels, 6, 5}));
    for (int c = 0; c < channels; ++c)
      QCOMPARE(s.image[c][5][4].item<int64_t>(), int64_t(datatest::pixel(4, c, 5, 4)));
    QVERIFY(ds.info().mean[0] > 0.0 && ds.info().stddev[0] > 0.0);
    auto test = openDataset("folder:" + root, "test");
    QVERIFY2(test.ok(), test.ok() ? "" : test.error().message.c_str());
    QCOMPARE((*test)->size(), int64_t(3));
  }

  void singleFolderNeedsValFraction() {
    QTemporaryDir tmp;
    writeClasses(str(tmp.path()), {"cat", "dog"}, 4, 4, 4, 1);
    auto test = openDataset("folder:" + str(tmp.path()), "test");
    QVERIFY(!test.ok());
    QVERIFY2(test.error().message.find("data.val_fraction") != std::string::npos, test.error().message.c_str());
    wb::DataConfig cfg;
    cfg.dataset = "folder:" + str(tmp.path());
    cfg.val_fraction = 0.25;
    auto s = openSplits(cfg, 1);
    QVERIFY2(s.ok(), s.ok() ? "" : s.error().message.c_str());
    QCOMPARE(s->train->size(), int64_t(6));
    QCOMPARE(s->val->size(), int64_t(2));
  }

  void emptyClassFolderIsAWarning() {
    QTemporaryDir tmp;
    const std::string root = str(tmp.path());
    writeClasses(root, {"a", "c"}, 2, 4, 4, 1);
    fs::create_directories(root + "/b");
    auto ds = openDataset("folder:" + root, "train");
    QVERIFY2(ds.ok(), ds.ok() ? "" : ds.error().message.c_str());
    const auto& info = (*ds)->info();
    QCOMPARE(info.num_classes, 3);
    QCOMPARE(info.class_counts, (std::vector<int64_t>{2, 0, 2}));
    QCOMPARE((*ds)->label(2), int64_t(2));  // c keeps label 2
    QCOMPARE(info.problems.size(), size_t(1));
    QVERIFY2(info.problems[0].find(root + "/b") != std::string::npos, info.problems[0].c_str());
    QCOMPARE(info.warnings, info.problems);  // a run on it says so too

    const std::string empty = str(tmp.path()) + "/nothing";
    fs::create_directories(empty + "/x");
    auto none = openDataset("folder:" + empty, "train");
    QVERIFY(!none.ok());
    QVERIFY(none.error().message.find("no JPEG/PNG images") != std::string::npos);
  }

  // Symbolic links that lead back into the folders that hold them, or resolve to nothing, are
  // skipped with a warning naming them: the dataset opens with each image once, not a
  // "Too many levels of symbolic links" exception or class a's images counted 40 times over.
  void symbolicLinkLoopsAreSkippedWithAWarning_data() {
    QTest::addColumn<QString>("link");    // relative to the folder root
    QTest::addColumn<QString>("target");
    QTest::newRow("class folder links to itself (ln -s . loop)") << "a/loop" << ".";
    QTest::newRow("class folder links to its split") << "a/up" << "..";
    QTest::newRow("image links to itself") << "a/self.png" << "self.png";
    QTest::newRow("split folder links to itself") << "loop" << ".";
    QTest::newRow("dangling link") << "c/gone.png" << "nowhere.png";
  }
  void symbolicLinkLoopsAreSkippedWithAWarning() {
    QFETCH(QString, link);
    QFETCH(QString, target);
    QTemporaryDir tmp;
    const std::string root = str(tmp.path());
    writeClasses(root, {"a", "c"}, 2, 4, 4, 1);
    fs::create_symlink(str(target), root + "/" + str(link));
    auto ds = openDataset("folder:" + root, "train");
    QVERIFY2(ds.ok(), ds.ok() ? "" : ds.error().message.c_str());
    const auto& info = (*ds)->info();
    QCOMPARE(info.class_names, (std::vector<std::string>{"a", "c"}));
    QCOMPARE(info.class_counts, (std::vector<int64_t>{2, 2}));
    QCOMPARE(info.warnings.size(), size_t(1));
    QVERIFY2(info.warnings[0].find(root + "/" + str(link) + ": skipped") != std::string::npos, info.warnings[0].c_str());
    QCOMPARE(info.problems, info.warnings);
  }

  void corruptJpeg_data() {
    QTest::addColumn<int>("workers");
    QTest::newRow("workers 0") << 0;
    QTest::newRow("workers 2") << 2;
  }
  void corruptJpeg() {
    QFETCH(int, workers);
    QTemporaryDir tmp;
    const std::string root = str(tmp.path());
    writeClasses(root, {"a", "b"}, 5, 8, 8, 3);
    const std::string bad = root + "/b/broken.jpg";
    datatest::writeFile(bad, std::string("\xFF\xD8\xFF\xE0 this is not really a JPEG", 30));
    auto ds = openDataset("folder:" + root, "train");
    QVERIFY(ds.ok());
    QCOMPARE((*ds)->size(), int64_t(11));
    const int64_t badIndex = 5;  // b/broken.jpg sorts before b/img0.png
    QCOMPARE((*ds)->describe(badIndex), bad);
    try {
      (*ds)->get(badIndex);
      QFAIL("a corrupt JPEG must throw SampleError");
    } catch (const SampleError& e) {
      QCOMPARE(e.path(), bad);
    }

    LoaderOptions opt;
    opt.batch_size = 4;
    opt.workers = workers;
    opt.max_bad_fraction = 0.2;
    Loader loader(*ds, opt);
    std::vector<std::string> warnings;
    loader.setWarningHandler([&](const std::string&, const std::string& path) { warnings.push_back(path); });
    int64_t seen = 0, skipped = 0;
    for (int epoch = 0; epoch < 2; ++epoch) {
      loader.startEpoch(epoch);
      while (auto b = loader.next()) {
        seen += b->y.size(0);
        skipped += b->skipped;
      }
    }
    QCOMPARE(seen, int64_t(20));
    QCOMPARE(skipped, int64_t(2));
    QCOMPARE(loader.badSamples(), int64_t(2));
    QCOMPARE(warnings, (std::vector<std::string>{bad}));  // once per path

    opt.max_bad_fraction = 0.05;  // 1 of 11 is past 5 %
    Loader strict(*ds, opt);
    strict.setWarningHandler([](const std::string&, const std::string&) {});
    strict.startEpoch(0);
    try {
      while (strict.next()) {
      }
      QFAIL("past max_bad_fraction the loader must throw DataError");
    } catch (const DataError& e) {
      QCOMPARE(e.path(), bad);
      QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("max_bad_fraction")), e.what());
    }
  }

  // libjpeg decodes a JPEG cut in half into a half-grey image (printing "Premature end of JPEG
  // file"); it must be a bad sample like any undecodable file: skipped, warned with its path,
  // counted against max_bad_fraction.
  void truncatedImagesAreBadSamples() {
    QTemporaryDir tmp;
    const std::string root = str(tmp.path());
    writeClasses(root, {"a", "b"}, 4, 64, 64, 3);
    const std::string jpg = encoded("jpg", 64, 64), png = encoded("png", 64, 64);
    const std::string cutJpg = root + "/b/cut.jpg", cutPng = root + "/b/cut.png", padded = root + "/b/padded.jpg";
    datatest::writeFile(cutJpg, jpg.substr(0, jpg.size() / 2));
    datatest::writeFile(cutPng, png.substr(0, png.size() / 2));
    datatest::writeFile(padded, jpg + std::string(16, '\0'));  // zero padding after EOI is fine
    auto ds = openDataset("folder:" + root, "train");
    QVERIFY(ds.ok());
    QCOMPARE((*ds)->size(), int64_t(11));
    std::vector<std::string> bad;
    for (int64_t i = 0; i < (*ds)->size(); ++i) {
      try {
        (*ds)->get(i);
      } catch (const SampleError& e) {
        bad.push_back(e.path());
        QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("truncated")), e.what());
      }
    }
    QCOMPARE(bad, (std::vector<std::string>{cutJpg, cutPng}));

    LoaderOptions opt;
    opt.batch_size = 4;
    opt.max_bad_fraction = 0.25;
    Loader loader(*ds, opt);
    std::vector<std::string> warnings;
    loader.setWarningHandler([&](const std::string&, const std::string& path) { warnings.push_back(path); });
    int64_t seen = 0;
    loader.startEpoch(0);
    while (auto b = loader.next()) seen += b->y.size(0);
    QCOMPARE(seen, int64_t(9));
    QCOMPARE(loader.badSamples(), int64_t(2));
    std::sort(warnings.begin(), warnings.end());
    QCOMPARE(warnings, (std::vector<std::string>{cutJpg, cutPng}));
  }

  void mixedSizesNeedImageSize() {
    QTemporaryDir tmp;
    const std::string root = str(tmp.path());
    writeClasses(root, {"a"}, 2, 8, 8, 1);
    datatest::writePng(root + "/a/wide.png", 9, 8, 12, 1);
    auto ds = openDataset("folder:" + root, "train");
    QVERIFY(ds.ok());
    QCOMPARE((*ds)->info().height, 0);
    QVERIFY(!(*ds)->info().problems.empty());
    LoaderOptions opt;
    opt.batch_size = 3;
    opt.shuffle = false;
    {
      Loader loader(*ds, opt);
      loader.startEpoch(0);
      try {
        loader.next();
        QFAIL("mixed sizes without image_size must fail");
      } catch (const DataError& e) {
        QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("data.image_size")), e.what());
      }
    }
    opt.transform.image_size = 6;
    opt.transform.augment = true;
    opt.transform.random_resized_crop = true;
    Loader loader(*ds, opt);
    loader.startEpoch(0);
    auto b = loader.next();
    QVERIFY(b.has_value());
    QCOMPARE(b->x.sizes().vec(), (std::vector<int64_t>{3, 1, 6, 6}));
  }

  void exportRoundTrip_data() {
    QTest::addColumn<QString>("format");
    QTest::addColumn<int>("size");
    QTest::newRow("png native") << "png" << 0;
    QTest::newRow("jpg resized") << "jpg" << 12;
  }
  void exportRoundTrip() {
    QFETCH(QString, format);
    QFETCH(int, size);
    QTemporaryDir tmp;
    const std::string src = str(tmp.path()) + "/idx";
    fs::create_directories(src);
    datatest::writeMnistLike(src, "train", 30, 7, 6, true);
    auto full = openDataset("idx:" + src, "train");
    QVERIFY(full.ok());
    auto part = subset(*full, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, "train");
    const std::string out = str(tmp.path()) + "/out";
    int64_t lastDone = 0;
    auto st = exportImageFolder(*part, out, str(format), size, [&](int64_t done, int64_t total) {
      QVERIFY(done > lastDone && total == 13);
      lastDone = done;
    });
    QVERIFY2(st.ok(), st.ok() ? "" : st.error().message.c_str());
    QCOMPARE(lastDone, int64_t(13));
    QVERIFY(fs::exists(out + "/train/0_0/00." + str(format)));
    QVERIFY(fs::exists(out + "/train/9_9"));  // every class gets a folder

    auto back = openDataset("folder:" + out, "train");
    QVERIFY2(back.ok(), back.ok() ? "" : back.error().message.c_str());
    const Dataset& ds = **back;
    QCOMPARE(ds.size(), int64_t(13));
    QCOMPARE(ds.info().num_classes, 10);  // classes in the original label order
    QCOMPARE(ds.info().channels, 1);
    QCOMPARE(ds.info().class_names[3], std::string("3_3"));
    // Read-back order: by class, then by original index.
    std::vector<int64_t> expected;
    for (int64_t label = 0; label < 10; ++label)
      for (int64_t i = 0; i < 13; ++i)
        if (i % 10 == label) expected.push_back(i);
    for (int64_t k = 0; k < ds.size(); ++k) {
      const auto s = ds.get(k);
      QCOMPARE(s.label, expected[k] % 10);
      if (size == 0) {
        QVERIFY2(torch::equal(s.image, part->get(expected[k]).image), ds.describe(k).c_str());
      } else {
        QCOMPARE(s.image.sizes().vec(), (std::vector<int64_t>{1, size, size}));
      }
    }
  }
};

QTEST_APPLESS_MAIN(TestImageFolder)
#include "test_image_folder.moc"
