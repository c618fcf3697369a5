#include "setup/dataset_picker.h"

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QSpinBox>

#include <cmath>

#include "runs/cli.h"
#include "setup/field_errors.h"
#include "setup/json_fields.h"
#include "wb/proto/dataset_inspection.h"
#include "setup/schema_range.h"
#include "wb/common/choices.h"

namespace wb::ui {
using nlohmann::json;

namespace {
const QString kBuiltIn = QStringLiteral("fashion-mnist");

bool hasAny(const QDir& d, const QStringList& patterns) { return !d.entryList(patterns, QDir::Files).isEmpty(); }
}  // namespace

QString detectDatasetKind(QString* dir) {
  QDir d(*dir);
  if (d.exists(QStringLiteral("cifar-10-batches-bin"))) {
    *dir = d.filePath(QStringLiteral("cifar-10-batches-bin"));
    return QStringLiteral("cifar10");
  }
  if (hasAny(d, {QStringLiteral("data_batch_*.bin"), QStringLiteral("test_batch.bin")})) return QStringLiteral("cifar10");
  if (hasAny(d, {QStringLiteral("*-ubyte"), QStringLiteral("*-ubyte.gz"), QStringLiteral("*.idx*")}))
    return QStringLiteral("idx");
  return QStringLiteral("folder");
}

DatasetPicker::DatasetPicker(FieldErrors* errors, QWidget* parent) : QWidget(parent), errors_(errors) {
  auto* form = form_ = new QFormLayout(this);
  form->setContentsMargins(0, 0, 0, 0);
  kind_ = new QComboBox(this);
  kind_->setObjectName(QStringLiteral("data.kind"));
  for (const Choice& c : datasetKinds()) kind_->addItem(QString::fromUtf8(c.label), QString::fromUtf8(c.value));
  form->addRow(QStringLiteral("Dataset"), kind_);

  pathRow_ = new QWidget(this);
  auto* pathLayout = new QHBoxLayout(pathRow_);
  pathLayout->setContentsMargins(0, 0, 0, 0);
  path_ = new QLineEdit(pathRow_);
  path_->setObjectName(QStringLiteral("data.path"));
  path_->setPlaceholderText(QStringLiteral("pick or type a folder"));
  path_->setToolTip(QStringLiteral("The dataset folder: pick it with Browse…, type its path, or drop it on the window"));
  browse_ = new QPushButton(QStringLiteral("Browse…"), pathRow_);
  pathLayout->addWidget(path_, 1);
  pathLayout->addWidget(browse_);
  form->addRow(QStringLiteral("Folder"), pathRow_);

  check_ = new QLabel(this);
  check_->setObjectName(QStringLiteral("data.check"));
  check_->setWordWrap(true);
  check_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  form->addRow(QString(), check_);
  form->addRow(QString(), errors_->makeLabel(QStringLiteral("data.dataset"), this));

  auto limitBox = [this](const char* path) {
    auto* s = new QSpinBox(this);
    s->setObjectName(QString::fromLatin1(path));
    setSchemaRange(s, path);
    s->setSingleStep(1000);
    s->setSpecialValueText(QStringLiteral("all"));
    s->setGroupSeparatorShown(true);
    return s;
  };
  limitTrain_ = limitBox("data.limit_train");
  limitVal_ = limitBox("data.limit_val");
  limitTrain_->setToolTip(QStringLiteral("Use only the first N training images (quick experiments)."));
  limitVal_->setToolTip(QStringLiteral("Evaluate on only the first N validation images."));
  form->addRow(QStringLiteral("Train images"), limitTrain_);
  form->addRow(QString(), errors_->makeLabel(QStringLiteral("data.limit_train"), this));
  form->addRow(QStringLiteral("Val images"), limitVal_);
  form->addRow(QString(), errors_->makeLabel(QStringLiteral("data.limit_val"), this));

  holdOut_ = new QSpinBox(this);
  holdOut_->setObjectName(QStringLiteral("data.val_fraction"));
  setSchemaRange(holdOut_, "data.val_fraction", 100);
  holdOut_->setSingleStep(5);
  holdOut_->setSuffix(QStringLiteral(" % of train"));
  holdOut_->setSpecialValueText(QStringLiteral("none: the test split"));
  holdOut_->setToolTip(QStringLiteral("Hold out this share of the training images (drawn with the run's seed) and "
                                      "validate on them; \"none\" validates on the dataset's test split."));
  form->addRow(QStringLiteral("Validate on"), holdOut_);
  holdOutNote_ = new QLabel(this);
  holdOutNote_->setObjectName(QStringLiteral("data.holdout_note"));
  holdOutNote_->setWordWrap(true);
  holdOutNote_->hide();
  form->addRow(QString(), holdOutNote_);
  form->addRow(QString(), errors_->makeLabel(QStringLiteral("data.val_fraction"), this));

  checkSoon_.setSingleShot(true);
  checkSoon_.setInterval(400);  // typing a path: check once the user pauses
  connect(&checkSoon_, &QTimer::timeout, this, &DatasetPicker::runCheck);
  connect(kind_, &QComboBox::currentIndexChanged, this, &DatasetPicker::onKindChanged);
  connect(path_, &QLineEdit::textChanged, this, [this] {
    scheduleCheck();
    Q_EMIT changed();
  });
  connect(browse_, &QPushButton::clicked, this, &DatasetPicker::browse);
  connect(limitTrain_, &QSpinBox::valueChanged, this, &DatasetPicker::changed);
  connect(limitVal_, &QSpinBox::valueChanged, this, &DatasetPicker::changed);
  connect(holdOut_, &QSpinBox::valueChanged, this, [this] {
    holdOutByUs_ = false;
    showHoldOut();
    Q_EMIT changed();
  });
  onKindChanged();
}

DatasetPicker::~DatasetPicker() {
  if (query_) query_->cancel();
}

QString DatasetPicker::spec() const {
  const QString kind = kind_->currentData().toString();
  if (kind == kBuiltIn) return kBuiltIn;
  return kind + QLatin1Char(':') + path_->text().trimmed();
}

QString DatasetPicker::checkText() const { return check_->text(); }

bool DatasetPicker::needsFolder() const {
  return kind_->currentData().toString() != kBuiltIn && path_->text().trimmed().isEmpty();
}

void DatasetPicker::onKindChanged() {
  setPathVisible(kind_->currentData().toString() != kBuiltIn);
  scheduleCheck();
  Q_EMIT changed();
}

void DatasetPicker::setPathVisible(bool visible) { form_->setRowVisible(pathRow_, visible); }

void DatasetPicker::browse() {
  const QString dir = QFileDialog::getExistingDirectory(this, QStringLiteral("Dataset folder"), path_->text());
  if (!dir.isEmpty()) setFolder(dir);
}

void DatasetPicker::setFolder(const QString& folder) {
  QString dir = QDir(folder).absolutePath();
  const QString kind = detectDatasetKind(&dir);
  const QSignalBlocker b1(kind_), b2(path_);
  kind_->setCurrentIndex(kind_->findData(kind));
  path_->setText(dir);
  setPathVisible(true);
  scheduleCheck();
  Q_EMIT changed();
}

void DatasetPicker::readFrom(const json& doc) {
  const QSignalBlocker b1(kind_), b2(path_), b3(limitTrain_), b4(limitVal_);
  const QString ds = configString(doc, QStringLiteral("data.dataset"));
  const int colon = ds.indexOf(QLatin1Char(':'));
  const int idx = colon > 0 ? kind_->findData(ds.left(colon)) : -1;
  if (idx >= 0) {
    kind_->setCurrentIndex(idx);
    path_->setText(ds.mid(colon + 1));
  } else {
    kind_->setCurrentIndex(0);  // fashion-mnist (and anything unknown: its error shows)
    path_->clear();
  }
  setPathVisible(kind_->currentIndex() != 0);
  maxBadFraction_ = configNumber(doc, QStringLiteral("data.max_bad_fraction"));
  limitTrain_->setValue(int(configNumber(doc, QStringLiteral("data.limit_train"))));
  limitVal_->setValue(int(configNumber(doc, QStringLiteral("data.limit_val"))));
  {
    const QSignalBlocker b5(holdOut_);
    holdOut_->setValue(int(std::lround(configNumber(doc, QStringLiteral("data.val_fraction")) * 100)));
    holdOutByUs_ = false;
  }
  showHoldOut();
  scheduleCheck();
}

void DatasetPicker::writeTo(json& doc) const {
  setField(doc, QStringLiteral("data.dataset"), spec().toStdString());
  setField(doc, QStringLiteral("data.limit_train"), limitTrain_->value());
  setField(doc, QStringLiteral("data.limit_val"), limitVal_->value());
  setField(doc, QStringLiteral("data.val_fraction"), holdOut_->value() / 100.0);
}

QString DatasetPicker::refusal() const {
  if (const QString p = holdOutProblem(); !p.isEmpty()) return p;
  if (checkState_ == 0 && refused_) return QStringLiteral("The dataset cannot be read: ") + refusalText_;
  return {};
}

// A folder without a test split needs part of train held out, and each split at least one
// image (the core's rule in openSplits, said before the run rather than by it).
QString DatasetPicker::holdOutProblem() const {
  if (checkState_ != 1) return {};
  const int pct = holdOut_->value();
  if (pct == 0 && testSplit_ == 0)
    return QStringLiteral("This folder has no test split: hold out part of train to validate on (Validate on).");
  const long long held = std::llround(double(trainSize_) * pct / 100.0);
  if (pct > 0 && trainSize_ > 0 && (held < 1 || held >= trainSize_))
    return QStringLiteral("Holding out %1 % of %2 train images leaves a split empty: choose another share.")
        .arg(pct)
        .arg(trainSize_);
  return {};
}

void DatasetPicker::showHoldOut() {
  const QString problem = holdOutProblem();
  const int pct = holdOut_->value();
  QString note;
  if (!problem.isEmpty()) note = problem;
  else if (pct > 0 && trainSize_ > 0)
    note = QStringLiteral("%1 of %2 train images held out for validation%3.")
               .arg(QLocale().toString(std::llround(double(trainSize_) * pct / 100.0)), QLocale().toString(trainSize_),
                    testSplit_ == 0 ? QStringLiteral(" (this folder has no test split)") : QString());
  holdOutNote_->setStyleSheet(problem.isEmpty() ? QString() : QStringLiteral("color: %1;").arg(FieldErrors::errorColor(this)));
  holdOutNote_->setText(note);
  holdOutNote_->setVisible(!note.isEmpty());
}

// What the check says of the splits: a folder without a test split gets 10 % held out (unless
// the user chose a share); a dataset with one gets back the share set for a folder without.
void DatasetPicker::takeSplits(const json& doc) {
  const proto::DatasetInspection r = proto::inspectionFromJson(doc);
  testSplit_ = r.test_split ? 1 : 0;
  const auto train = r.splits.find("train");
  trainSize_ = train == r.splits.end() ? 0 : train->second.size;
  const QSignalBlocker block(holdOut_);
  if (testSplit_ == 0 && holdOut_->value() == 0) {
    holdOut_->setValue(10);
    holdOutByUs_ = true;
  } else if (testSplit_ == 1 && holdOutByUs_) {
    holdOut_->setValue(0);
    holdOutByUs_ = false;
  }
}

void DatasetPicker::scheduleCheck() {
  if (checkKey() == checkedSpec_ && checkState_ >= 0) return;
  if (query_) query_->cancel();
  checkState_ = -1;
  refused_ = false;
  showHoldOut();
  if (needsFolder()) {
    check_->setText(QStringLiteral("Pick a folder."));
    checkSoon_.stop();
    return;
  }
  check_->setText(QStringLiteral("Checking the dataset…"));
  checkSoon_.start();
}

QString DatasetPicker::checkKey() const { return spec() + QLatin1Char('\n') + QString::number(maxBadFraction_); }

// `dataset inspect` with the run's own share of undecodable images allowed: the check refuses
// what the run would stop on.
void DatasetPicker::runCheck() {
  const QString s = checkKey();
  QStringList args{QStringLiteral("dataset"), QStringLiteral("inspect"), spec(), QStringLiteral("--json")};
  if (maxBadFraction_ >= 0) args << QStringLiteral("--max-bad-fraction") << QString::number(maxBadFraction_, 'g', 17);
  query_ = CliQuery::run(
      this, args, true,
      [this, s](const json& doc, const QString&, const QString& error) {
        if (s != checkKey()) return;  // the user moved on
        checkedSpec_ = s;
        showCheck(doc, error);
      },
      120000);
}

namespace {

// "train 60,000, test 10,000 images", "10 classes (T-shirt, …)", "1×28×28": what the check found.
QStringList splitWords(const proto::DatasetInspection& r) {
  QStringList sizes, parts;
  QString classes, shape;
  const QLocale loc;
  for (const std::string& name : r.splitNames()) {
    const proto::SplitInspection& sp = r.splits.at(name);
    sizes << QStringLiteral("%1 %2").arg(QString::fromStdString(name), loc.toString(qlonglong(sp.size)));
    if (classes.isEmpty() && !sp.classes.empty()) {
      QStringList names;
      for (const auto& c : sp.classes) names << QString::fromStdString(c);
      const int n = int(names.size());
      if (names.size() > 6) names = names.mid(0, 5) << QStringLiteral("…");
      classes = QStringLiteral("%1 classes (%2)").arg(n).arg(names.join(QStringLiteral(", ")));
    }
    if (shape.isEmpty()) shape = QStringLiteral("%1×%2×%3").arg(sp.channels).arg(sp.height).arg(sp.width);
  }
  if (!sizes.isEmpty()) parts << sizes.join(QStringLiteral(", ")) + QStringLiteral(" images");
  if (!classes.isEmpty()) parts << classes;
  if (!shape.isEmpty()) parts << shape;
  return parts;
}

}  // namespace

void DatasetPicker::showCheck(const json& doc, const QString& error) {
  const QString color = FieldErrors::errorColor(this);
  if (!doc.is_object()) {
    checkState_ = 0;
    refused_ = false;  // the check could not run: the run itself will tell
    check_->setStyleSheet(QString());
    check_->setText(QStringLiteral("Could not check the dataset: ") + error);
    Q_EMIT checkFinished(false);
    return;
  }
  const proto::DatasetInspection r = proto::inspectionFromJson(doc);
  const bool ok = r.ok;
  QStringList parts = splitWords(r);
  QStringList problems;
  for (const auto& p : r.problems) problems << QString::fromStdString(p);
  QString text = (ok ? QStringLiteral("✓ ") : QString()) + parts.join(QStringLiteral(" · "));
  if (!problems.isEmpty()) {
    if (!text.isEmpty()) text += QLatin1Char('\n');
    text += problems.join(QLatin1Char('\n'));
  }
  check_->setStyleSheet(ok ? QString() : QStringLiteral("color: %1;").arg(color));
  check_->setText(text.isEmpty() ? QStringLiteral("The dataset could not be read.") : text);
  checkState_ = ok ? 1 : 0;
  refused_ = !ok;
  // The problem that refuses it comes last (a missing folder, classes that differ, too many unreadable images).
  refusalText_ = problems.isEmpty() ? check_->text().section(QLatin1Char('\n'), 0, 0) : problems.last();
  const int heldBefore = holdOut_->value();
  takeSplits(doc);
  showHoldOut();
  if (holdOut_->value() != heldBefore) Q_EMIT changed();
  Q_EMIT checkFinished(ok);
}

}  // namespace wb::ui
