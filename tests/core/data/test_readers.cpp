// IDX and CIFAR-10 readers, dataset specs and the train/val split policy, on files the test
// writes itself; plus one check on the real Fashion-MNIST copy.
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>

#include "../../support/machine.h"
#include "data_test_util.h"
#include "wb/common/paths.h"
#include "wb/data/dataset.h"

using namespace wb::data;

namespace {

std::string str(const QString& s) { return s.toStdString(); }

int64_t px(const Dataset& ds, int64_t i, int64_t c, int64_t y, int64_t x) {
  return ds.get(i).image[c][y][x].item<int64_t>();
}

std::string cifarRecord(uint8_t label, int64_t seed) {
  std::string r(1, static_cast<char>(label));
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < 32; ++y)
      for (int x = 0; x < 32; ++x) r.push_back(static_cast<char>(datatest::pixel(seed, c, y, x)));
  return r;
}

}  // namespace

class TestReaders : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void idxRoundTrip_data() {
    QTest::addColumn<bool>("gz");
    QTest::newRow("raw") << false;
    QTest::newRow("gzip") << true;
  }
  void idxRoundTrip() {
    QFETCH(bool, gz);
    QTemporaryDir tmp;
    datatest::writeMnistLike(str(tmp.path()), "train", 23, 7, 5, gz);
    datatest::writeMnistLike(str(tmp.path()), "t10k", 11, 7, 5, gz);
    auto train = openDataset("idx:" + str(tmp.path()), "train");
    QVERIFY2(train.ok(), train.ok() ? "" : train.error().message.c_str());
    const Dataset& ds = **train;
    QCOMPARE(ds.size(), int64_t(23));
    QCOMPARE(ds.info().channels, 1);
    QCOMPARE(ds.info().height, 7);
    QCOMPARE(ds.info().width, 5);
    QCOMPARE(ds.info().num_classes, 10);
    QVERIFY(ds.inMemory());
    for (int64_t i : {0, 9, 22}) {
      QCOMPARE(ds.get(i).label, i % 10);
      QCOMPARE(px(ds, i, 0, 6, 4), int64_t(datatest::pixel(i, 0, 6, 4)));
      QCOMPARE(px(ds, i, 0, 3, 1), int64_t(datatest::pixel(i, 0, 3, 1)));
    }
    QCOMPARE(ds.info().class_counts[2], int64_t(3));  // 2, 12, 22
    QVERIFY(ds.describe(12).find("train-images-idx3-ubyte") != std::string::npos);
    auto batch = ds.gatherImages(torch::tensor({22, 0}, torch::kLong));
    QCOMPARE(batch.sizes().vec(), (std::vector<int64_t>{2, 1, 7, 5}));
    QVERIFY(torch::equal(batch[0], ds.get(22).image));
    QVERIFY(torch::equal(ds.gatherLabels(torch::tensor({22, 3}, torch::kLong)), torch::tensor({2, 3}, torch::kLong)));
    auto test = openDataset("idx:" + str(tmp.path()), "test");
    QVERIFY(test.ok());
    QCOMPARE((*test)->size(), int64_t(11));
    QCOMPARE((*test)->info().split, std::string("test"));
  }

  // A process that trains several times (the math check's sides, a probe's arms) reads the files
  // once; a file changed in between is read again.
  void inMemorySplitsAreReadOncePerProcess() {
    QTemporaryDir tmp;
    datatest::writeMnistLike(str(tmp.path()), "train", 23, 7, 5, true);
    datatest::writeMnistLike(str(tmp.path()), "t10k", 11, 7, 5, true);
    const std::string spec = "idx:" + str(tmp.path());
    auto first = openDataset(spec, "train"), again = openDataset(spec, "train"), test = openDataset(spec, "test");
    QVERIFY(first.ok() && again.ok() && test.ok());
    QVERIFY2(first->get() == again->get(), "the second open shares the first one's samples");
    QVERIFY(test->get() != first->get());
    datatest::writeMnistLike(str(tmp.path()), "train", 13, 7, 5, true);
    auto changed = openDataset(spec, "train");
    QVERIFY(changed.ok());
    QCOMPARE((*changed)->size(), int64_t(13));
    QCOMPARE((*openDataset(spec, "test"))->size(), int64_t(11));
  }

  // A gzipped IDX file is unpacked once into the cache (WB_CACHE_DIR/unpacked): a later process
  // reads the plain copy, not the .gz; a copy cut short is read past (the .gz again, the copy
  // written anew); errors and descriptions still name the .gz.
  void aGzippedFileIsUnpackedOnceAndItsCopyRead() {
    QTemporaryDir cache, a, b;
    const QByteArray before = qgetenv("WB_CACHE_DIR");
    qputenv("WB_CACHE_DIR", cache.path().toUtf8());
    datatest::writeMnistLike(str(a.path()), "train", 6, 4, 4, true);
    datatest::writeMnistLike(str(b.path()), "train", 5, 4, 4, true);
    auto first = openDataset("idx:" + str(a.path()), "train");
    QVERIFY(first.ok());
    QVERIFY((*first)->describe(0).find("train-images-idx3-ubyte.gz") != std::string::npos);
    std::filesystem::path copy;
    for (const auto& e : std::filesystem::directory_iterator(wb::unpackedDatasetDir()))
      if (e.path().filename().string().find("-train-images-idx3-ubyte") != std::string::npos) copy = e.path();
    QVERIFY2(!copy.empty(), "no unpacked copy of the training images");
    QCOMPARE(int64_t(std::filesystem::file_size(copy)), int64_t(16 + 6 * 16));
    // The copy is what is read: change a pixel in it, read another folder, then this one again.
    std::vector<uint8_t> img(6 * 16);
    for (int i = 0; i < 6; ++i)
      for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 4; ++x) img[size_t(i * 16 + y * 4 + x)] = datatest::pixel(i, 0, y, x);
    img[0] = uint8_t(img[0] + 1);
    datatest::writeFile(copy.string(), datatest::idxBytes({6, 4, 4}, img));
    auto reread = [&] {
      QVERIFY(openDataset("idx:" + str(b.path()), "train").ok());  // the process's last read is another folder
      auto again = openDataset("idx:" + str(a.path()), "train");
      QVERIFY(again.ok());
      first = again;
    };
    reread();
    QCOMPARE(px(**first, 0, 0, 0, 0), int64_t(datatest::pixel(0, 0, 0, 0) + 1));
    // A copy cut short: the .gz is read, and the copy written whole again.
    std::filesystem::resize_file(copy, 20);
    reread();
    QCOMPARE(px(**first, 0, 0, 0, 0), int64_t(datatest::pixel(0, 0, 0, 0)));
    QCOMPARE(int64_t(std::filesystem::file_size(copy)), int64_t(16 + 6 * 16));
    if (before.isNull()) qunsetenv("WB_CACHE_DIR");
    else qputenv("WB_CACHE_DIR", before);
  }

  void idxErrors_data() {
    QTest::addColumn<QString>("broken");     // which file to break and how
    QTest::addColumn<QString>("fileInError");
    QTest::addColumn<QString>("words");
    QTest::newRow("truncated images") << "truncate-images" << "train-images-idx3-ubyte" << "truncated";
    QTest::newRow("truncated gzip images") << "truncate-gz-images" << "train-images-idx3-ubyte.gz" << "truncated";
    QTest::newRow("wrong magic") << "magic-labels" << "train-labels-idx1-ubyte" << "wrong magic number";
    QTest::newRow("count mismatch") << "fewer-labels" << "train-labels-idx1-ubyte" << "labels";
    QTest::newRow("missing labels") << "no-labels" << "train-labels-idx1-ubyte" << "expected the MNIST layout";
  }
  void idxErrors() {
    QFETCH(QString, broken);
    QFETCH(QString, fileInError);
    QFETCH(QString, words);
    QTemporaryDir tmp;
    const std::string dir = str(tmp.path());
    const bool gz = broken.contains(QStringLiteral("gz"));
    datatest::writeMnistLike(dir, "train", 4, 3, 3, gz);
    const std::string ext = gz ? ".gz" : "";
    if (broken.startsWith(QStringLiteral("truncate"))) {
      std::vector<uint8_t> img(4 * 9 - 5, 1);
      datatest::writeFile(dir + "/train-images-idx3-ubyte" + ext, datatest::idxBytes({4, 3, 3}, img), gz);
    } else if (broken == QStringLiteral("magic-labels")) {
      datatest::writeFile(dir + "/train-labels-idx1-ubyte", datatest::idxBytes({4, 1}, std::vector<uint8_t>(4, 0)));
    } else if (broken == QStringLiteral("fewer-labels")) {
      datatest::writeFile(dir + "/train-labels-idx1-ubyte", datatest::idxBytes({3}, {0, 1, 2}));
    } else {
      std::filesystem::remove(dir + "/train-labels-idx1-ubyte");
    }
    auto ds = openDataset("idx:" + dir, "train");
    QVERIFY(!ds.ok());
    QCOMPARE(ds.error().code, wb::Errc::Data);
    const QString msg = QString::fromStdString(ds.error().message);
    QVERIFY2(msg.contains(fileInError), qPrintable(msg));
    QVERIFY2(msg.contains(words), qPrintable(msg));
  }

  void cifarBatches() {
    QTemporaryDir tmp;
    const std::string dir = str(tmp.path()) + "/cifar-10-batches-bin";
    std::filesystem::create_directories(dir);
    int64_t seed = 0;
    for (int b = 1; b <= 5; ++b) {
      std::string bytes;
      for (int r = 0; r < 3; ++r, ++seed) bytes += cifarRecord(static_cast<uint8_t>(seed % 10), seed);
      datatest::writeFile(dir + "/data_batch_" + std::to_string(b) + ".bin", bytes);
    }
    datatest::writeFile(dir + "/test_batch.bin", cifarRecord(7, 100) + cifarRecord(3, 101));
    datatest::writeFile(dir + "/batches.meta.txt", "airplane\nautomobile\nbird\ncat\ndeer\ndog\nfrog\nhorse\nship\ntruck\n\n");

    auto train = openDataset("cifar10:" + str(tmp.path()), "train");  // finds the sub-folder
    QVERIFY2(train.ok(), train.ok() ? "" : train.error().message.c_str());
    const Dataset& ds = **train;
    QCOMPARE(ds.size(), int64_t(15));
    QCOMPARE(ds.info().channels, 3);
    QCOMPARE(ds.info().height, 32);
    QCOMPARE(ds.info().class_names[3], std::string("cat"));
    QVERIFY(ds.info().problems.empty());
    for (int64_t i : {0, 4, 14}) {
      QCOMPARE(ds.get(i).label, i % 10);
      for (int c = 0; c < 3; ++c) QCOMPARE(px(ds, i, c, 31, 2), int64_t(datatest::pixel(i, c, 31, 2)));
    }
    QVERIFY(ds.describe(4).find("data_batch_2.bin#1") != std::string::npos);
    auto test = openDataset("cifar10:" + dir, "test");
    QVERIFY(test.ok());
    QCOMPARE((*test)->size(), int64_t(2));
    QCOMPARE((*test)->get(1).label, int64_t(3));
    QCOMPARE(px(**test, 0, 2, 5, 5), int64_t(datatest::pixel(100, 2, 5, 5)));

    datatest::writeFile(dir + "/data_batch_3.bin", cifarRecord(1, 1).substr(0, 3000));
    auto broken = openDataset("cifar10:" + dir, "train");
    QVERIFY(!broken.ok());
    QVERIFY2(broken.error().message.find("data_batch_3.bin") != std::string::npos, broken.error().message.c_str());
  }

  void specErrors_data() {
    QTest::addColumn<QString>("spec");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("words");
    QTest::newRow("unknown kind") << "imagenet" << int(wb::Errc::InvalidConfig) << "data.dataset";
    QTest::newRow("empty dir") << "idx:" << int(wb::Errc::InvalidConfig) << "needs a directory";
    QTest::newRow("missing idx dir") << "idx:/nonexistent/wb-idx" << int(wb::Errc::Data) << "/nonexistent/wb-idx";
    QTest::newRow("missing cifar dir") << "cifar10:/nonexistent/wb-c" << int(wb::Errc::Data) << "data_batch_1.bin";
    QTest::newRow("missing folder") << "folder:/nonexistent/wb-f" << int(wb::Errc::Data) << "/nonexistent/wb-f";
  }
  void specErrors() {
    QFETCH(QString, spec);
    QFETCH(int, code);
    QFETCH(QString, words);
    auto ds = openDataset(str(spec), "train");
    QVERIFY(!ds.ok());
    QCOMPARE(int(ds.error().code), code);
    QVERIFY2(QString::fromStdString(ds.error().message).contains(words), ds.error().message.c_str());
  }

  void heldOutValidation() {
    QTemporaryDir tmp;
    datatest::writeMnistLike(str(tmp.path()), "train", 40, 4, 4, false);
    wb::DataConfig cfg;
    cfg.dataset = "idx:" + str(tmp.path());
    cfg.val_fraction = 0.25;
    auto a = openSplits(cfg, 7);
    QVERIFY2(a.ok(), a.ok() ? "" : a.error().message.c_str());
    QCOMPARE(a->train->size(), int64_t(30));
    QCOMPARE(a->val->size(), int64_t(10));
    QCOMPARE(a->val->info().split, std::string("val"));
    // Disjoint and complete: every source record (identified by describe) appears exactly once.
    std::set<std::string> seen;
    for (const auto* ds : {a->train.get(), a->val.get()})
      for (int64_t i = 0; i < ds->size(); ++i) QVERIFY(seen.insert(ds->describe(i)).second);
    QCOMPARE(seen.size(), size_t(40));
    // The same seed picks the same validation set; another seed another one.
    auto b = openSplits(cfg, 7);
    auto c = openSplits(cfg, 8);
    QVERIFY(b.ok() && c.ok());
    bool differs = false;
    for (int64_t i = 0; i < 10; ++i) {
      QCOMPARE(b->val->describe(i), a->val->describe(i));
      differs |= c->val->describe(i) != a->val->describe(i);
    }
    QVERIFY(differs);
    QCOMPARE(a->val->info().mean, a->train->info().mean);
    // limit_* take the first N, in dataset order.
    cfg.limit_train = 5;
    cfg.limit_val = 3;
    auto l = openSplits(cfg, 7);
    QVERIFY(l.ok());
    QCOMPARE(l->train->size(), int64_t(5));
    QCOMPARE(l->val->size(), int64_t(3));
    for (int64_t i = 0; i < 5; ++i) QCOMPARE(l->train->describe(i), a->train->describe(i));
    QVERIFY(torch::equal(l->train->gatherImages(torch::tensor({4}, torch::kLong)),
                         a->train->gatherImages(torch::tensor({4}, torch::kLong))));

    cfg.val_fraction = 0.001;
    auto bad = openSplits(cfg, 7);
    QVERIFY(!bad.ok());
    QCOMPARE(bad.error().code, wb::Errc::InvalidConfig);
    QVERIFY(bad.error().message.find("data.val_fraction") != std::string::npos);
  }

  void realFashionMnist() {
    WB_NEED(wb::test::missingFashionMnist());
    wb::DataConfig cfg;  // dataset = fashion-mnist
    auto s = openSplits(cfg, 1);
    QVERIFY2(s.ok(), s.ok() ? "" : s.error().message.c_str());
    QCOMPARE(s->train->size(), int64_t(60000));
    QCOMPARE(s->val->size(), int64_t(10000));
    const auto& info = s->train->info();
    QCOMPARE(info.num_classes, 10);
    QCOMPARE(info.class_names[9], std::string("Ankle boot"));
    QCOMPARE(info.height, 28);
    QCOMPARE(info.channels, 1);
    for (int64_t n : info.class_counts) QCOMPARE(n, int64_t(6000));
    for (int64_t n : s->val->info().class_counts) QCOMPARE(n, int64_t(1000));
  }
};

QTEST_APPLESS_MAIN(TestReaders)
#include "test_readers.moc"
