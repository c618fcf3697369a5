// The decoded-sample cache (speedups.decoded_cache) on a real PNG folder of mixed image sizes:
// the second epoch decodes nothing (decodes counted), the batches equal those without the cache
// under every random op (random-resized crop, crop, flip), a disk cache is found decoded by the
// next open and dropped when a file changes, a cache that does not fit is refused naming the
// sizes, and an in-memory dataset is left as it is.
#include <QtTest/QtTest>

#include <chrono>
#include <filesystem>

#include <opencv2/imgcodecs.hpp>

#include "data_test_util.h"
#include "wb/data/dataset.h"
#include "wb/data/decoded_cache.h"
#include "wb/data/loader.h"

namespace fs = std::filesystem;
using wb::data::CacheOptions;
using wb::data::DecodedCache;

namespace {

constexpr int kPerClass = 12;

// Two classes of PNGs, sizes 20..34 px, grey and RGB alike (read back as RGB).
void writeFolder(const fs::path& dir) {
  for (int c = 0; c < 2; ++c) {
    fs::create_directories(dir / ("class" + std::to_string(c)));
    for (int i = 0; i < kPerClass; ++i) {
      const int side = 20 + (i * 7 + c * 3) % 15;
      datatest::writePng((dir / ("class" + std::to_string(c)) / (std::to_string(i) + ".png")).string(), c * 100 + i, side,
                       side + i % 3, 3);
    }
  }
}

wb::data::LoaderOptions augmenting() {
  wb::data::LoaderOptions o;
  o.batch_size = 5;
  o.shuffle = true;
  o.seed = 3;
  o.workers = 2;
  o.transform.augment = true;
  o.transform.image_size = 16;
  o.transform.random_resized_crop = true;
  o.transform.crop_padding = 2;
  o.transform.hflip = true;
  return o;
}

std::vector<torch::Tensor> epoch(wb::data::Loader& loader, int e) {
  std::vector<torch::Tensor> out;
  loader.startEpoch(e);
  while (auto b = loader.next()) out.push_back(b->x.clone());
  return out;
}

std::shared_ptr<wb::data::Dataset> folder(const fs::path& dir) {
  auto ds = wb::data::openDataset("folder:" + dir.string(), "train");
  if (!ds.ok()) QTest::qFail(ds.error().message.c_str(), __FILE__, __LINE__);
  return ds.ok() ? ds.value() : nullptr;
}

}  // namespace

class TestDecodedCache : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void secondEpochDecodesNothingAndBatchesAreEqual_data() {
    QTest::addColumn<QString>("mode");
    QTest::newRow("memory") << QStringLiteral("memory");
    QTest::newRow("disk") << QStringLiteral("disk");
  }
  void secondEpochDecodesNothingAndBatchesAreEqual() {
    QFETCH(QString, mode);
    QTemporaryDir tmp;
    const fs::path dir = fs::path(tmp.path().toStdString()) / "images";
    writeFolder(dir);
    auto plain = folder(dir);
    QVERIFY(plain);
    const int64_t n = plain->size();
    auto cached = DecodedCache::open(plain, CacheOptions{mode.toStdString(), tmp.path().toStdString() + "/cache"},
                                     wb::data::estimateDecodedBytes(*plain));
    QVERIFY2(cached.ok(), cached.ok() ? "" : cached.error().message.c_str());
    QCOMPARE((*cached)->decodes(), int64_t{0});
    wb::data::Loader without(plain, augmenting()), with(*cached, augmenting());
    for (int e = 0; e < 3; ++e) {
      const auto a = epoch(without, e), b = epoch(with, e);
      QCOMPARE(a.size(), b.size());
      for (size_t k = 0; k < a.size(); ++k) QVERIFY2(torch::equal(a[k], b[k]), qPrintable(QStringLiteral("epoch %1 batch %2").arg(e).arg(k)));
      QCOMPARE((*cached)->decodes(), n);  // every sample decoded in the first epoch, none after
      QCOMPARE((*cached)->hits(), n * e);
    }
    QCOMPARE((*cached)->overflowed(), int64_t{0});
    QCOMPARE((*cached)->file().empty(), mode == QLatin1String("memory"));
  }

  void diskCacheIsFoundByTheNextRunAndDroppedWhenAFileChanges() {
    QTemporaryDir tmp;
    const fs::path dir = fs::path(tmp.path().toStdString()) / "images";
    const std::string cacheDir = tmp.path().toStdString() + "/cache";
    writeFolder(dir);
    const CacheOptions disk{"disk", cacheDir};
    std::string first;
    {
      auto ds = folder(dir);
      auto c = DecodedCache::open(ds, disk, wb::data::estimateDecodedBytes(*ds));
      QVERIFY(c.ok());
      for (int64_t i = 0; i < ds->size(); ++i) (*c)->get(i);
      first = (*c)->file();
    }
    {  // a later run: everything decoded already
      auto ds = folder(dir);
      auto c = DecodedCache::open(ds, disk, wb::data::estimateDecodedBytes(*ds));
      QVERIFY(c.ok());
      QCOMPARE((*c)->file(), first);
      QCOMPARE((*c)->cachedAtOpen(), ds->size());
      for (int64_t i = 0; i < ds->size(); ++i)
        QVERIFY(torch::equal((*c)->get(i).image, ds->get(i).image));
      QCOMPARE((*c)->decodes(), int64_t{0});
    }
    // One file rewritten with other pixels: another key, the old file is removed, all decoded anew.
    const fs::path changed = dir / "class1" / "3.png";
    datatest::writePng(changed.string(), 999, 21, 23, 3);
    fs::last_write_time(changed, fs::last_write_time(changed) + std::chrono::seconds(5));
    auto ds = folder(dir);
    auto c = DecodedCache::open(ds, disk, wb::data::estimateDecodedBytes(*ds));
    QVERIFY(c.ok());
    QVERIFY((*c)->file() != first);
    QVERIFY(!fs::exists(first));
    QCOMPARE((*c)->cachedAtOpen(), int64_t{0});
    int64_t i = 0;
    while (i < ds->size() && ds->describe(i) != changed.string()) ++i;
    QVERIFY(i < ds->size());
    QVERIFY(torch::equal((*c)->get(i).image, ds->get(i).image));
    QCOMPARE((*c)->get(i).image.size(1), int64_t{21});
  }

  void whatDoesNotFitIsRefusedNamingTheSizes() {
    QTemporaryDir tmp;
    const fs::path dir = fs::path(tmp.path().toStdString()) / "images";
    writeFolder(dir);
    auto ds = folder(dir);
    const std::string cacheDir = tmp.path().toStdString() + "/cache";
    auto c = DecodedCache::open(ds, CacheOptions{"disk", cacheDir}, int64_t{1} << 60);  // an exbibyte
    QVERIFY(!c.ok());
    QCOMPARE(int(c.error().code), int(wb::Errc::InvalidConfig));
    const std::string& m = c.error().message;
    QVERIFY2(m.rfind("speedups.decoded_cache: disk needs ", 0) == 0, m.c_str());
    QVERIFY2(m.find("GiB") != std::string::npos && m.find(cacheDir) != std::string::npos && m.find("free") != std::string::npos &&
                 m.find("data.cache_dir") != std::string::npos,
             m.c_str());
    QVERIFY(fs::is_empty(cacheDir));  // nothing half-made left behind
  }

  void aDatasetInMemoryIsLeftAlone() {
    QTemporaryDir tmp;
    datatest::writeMnistLike(tmp.path().toStdString(), "train", 20, 8, 8, false);
    datatest::writeMnistLike(tmp.path().toStdString(), "t10k", 10, 8, 8, false);
    wb::Config c;
    c.data.dataset = "idx:" + tmp.path().toStdString();
    c.speedups.decoded_cache = "memory";
    auto splits = wb::data::openSplits(c.data, c.seed);
    QVERIFY(splits.ok());
    auto before = splits->train;
    auto outcome = wb::data::cacheDecodedSamples(*splits, c);
    QVERIFY(outcome.ok());
    QVERIFY(!outcome->active);
    QVERIFY2(outcome->note.find("held decoded in memory already") != std::string::npos, outcome->note.c_str());
    QCOMPARE(splits->train.get(), before.get());
  }
};

QTEST_APPLESS_MAIN(TestDecodedCache)
#include "test_decoded_cache.moc"
