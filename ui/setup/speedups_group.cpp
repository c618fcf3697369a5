#include "setup/speedups_group.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFormLayout>
#include <QGridLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QToolButton>
#include <QVBoxLayout>

#include "setup/field_errors.h"
#include "setup/json_fields.h"
#include "setup/schema_range.h"
#include "wb/proto/capabilities_record.h"
#include "wb/common/choices.h"
#include "wb/common/config_schema.h"
#include "wb/common/speedups.h"

namespace wb::ui {
using nlohmann::json;

namespace {

QString mutedColor(const QWidget* w) {
  const bool dark = w->palette().color(QPalette::Window).lightness() < 128;
  return dark ? QStringLiteral("#a8adb4") : QStringLiteral("#5f6368");
}
QString measuredColor(const QWidget* w) {
  const bool dark = w->palette().color(QPalette::Window).lightness() < 128;
  return dark ? QStringLiteral("#81c995") : QStringLiteral("#1e7b34");
}
QString unavailableColor(const QWidget* w) {
  const bool dark = w->palette().color(QPalette::Window).lightness() < 128;
  return dark ? QStringLiteral("#ffb74d") : QStringLiteral("#9a5b00");
}

void selectData(QComboBox* box, const QString& value) {
  const int i = box->findData(value);
  if (i >= 0) box->setCurrentIndex(i);
}

}  // namespace

SpeedupsGroup::SpeedupsGroup(FieldErrors* errors, QWidget* parent)
    : QGroupBox(QStringLiteral("Speedups"), parent), errors_(errors) {
  setObjectName(QStringLiteral("speedups"));
  layout_ = new QVBoxLayout(this);
  layout_->setSpacing(6);
  addHeader();
  addSpeedupRow(speedup::kWorkers, workersBox());
  pinMemory_ = new QCheckBox(this);
  addSpeedupRow(speedup::kPinMemory, pinMemory_);

  devices_ = new QSpinBox(this);
  setSchemaRange(devices_, "speedups.devices");
  addSpeedupRow(speedup::kDevices, devices_);

  precision_ = new QComboBox(this);
  for (const Choice& c : precisionChoices()) precision_->addItem(QString::fromUtf8(c.label), QString::fromUtf8(c.value));
  addSpeedupRow(speedup::kPrecision, precision_);

  addEarlyStoppingRow();
  sharding_ = new QComboBox(this);
  for (const Choice& c : shardingChoices()) sharding_->addItem(QString::fromUtf8(c.label), QString::fromUtf8(c.value));
  addSpeedupRow(speedup::kSharding, sharding_);

  inferenceEval_ = new QCheckBox(this);
  addSpeedupRow(speedup::kInferenceEval, inferenceEval_);
  addLeverRows();

  connectFields();
  updateDependencies();
  updateColors();
}

// What this machine can do, the hint, and where the measured effects come from.
void SpeedupsGroup::addHeader() {
  capsStatus_ = new QLabel(QStringLiteral("Checking what this machine can do…"), this);
  capsStatus_->setObjectName(QStringLiteral("speedups.capabilities"));
  capsStatus_->setWordWrap(true);
  layout_->addWidget(capsStatus_);
  hint_ = new QLabel(QStringLiteral("Change one, then <b>Try vs baseline</b>: it runs the baseline with only that "
                                    "change and shows the two together."),
                     this);
  hint_->setObjectName(QStringLiteral("speedups.hint"));
  hint_->setWordWrap(true);
  layout_->addWidget(hint_);
  source_ = new QLabel(this);
  source_->setObjectName(QStringLiteral("speedups.measured"));
  source_->setWordWrap(true);
  source_->hide();
  layout_->addWidget(source_);
}

// Loader workers: the count and the Probe button (Cancel while a probe runs).
QWidget* SpeedupsGroup::workersBox() {
  auto* box = new QWidget(this);
  box->setObjectName(QStringLiteral("speedups.workers.box"));
  // The offer goes under the count, not beside it: the row keeps its width whatever it says.
  auto* boxLayout = new QGridLayout(box);
  boxLayout->setContentsMargins(0, 0, 0, 0);
  boxLayout->setVerticalSpacing(2);
  workers_ = new QSpinBox(box);
  workers_->setObjectName(QStringLiteral("speedups.workers"));
  setSchemaRange(workers_, "speedups.workers");
  workers_->setSpecialValueText(QStringLiteral("0 (in the loop)"));
  probe_ = new QPushButton(QStringLiteral("Probe"), box);
  probe_->setObjectName(QStringLiteral("speedups.workers.probe"));
  probe_->setToolTip(QStringLiteral("Time the loader, the step and a few worker counts on this experiment "
                                    "(workbench-cli probe workers, under 30 s); its recommendation is offered, not set"));
  useProbe_ = new QPushButton(box);
  useProbe_->setObjectName(QStringLiteral("speedups.workers.use"));
  useProbe_->hide();
  boxLayout->addWidget(workers_, 0, 0);
  boxLayout->addWidget(probe_, 0, 1);
  boxLayout->addWidget(useProbe_, 1, 0, 1, 2);
  boxLayout->setColumnStretch(0, 1);
  connect(useProbe_, &QPushButton::clicked, this, [this] {
    if (offered_ >= 0) workers_->setValue(std::min(offered_, workers_->maximum()));
  });
  connect(probe_, &QPushButton::clicked, this, [this] {
    if (probing_) Q_EMIT probeCancelRequested();
    else Q_EMIT probeRequested();
  });
  return box;
}

// Early stopping: patience up front, monitor and min_delta behind "More".
void SpeedupsGroup::addEarlyStoppingRow() {
  auto* esBox = new QWidget(this);
  auto* esLayout = new QHBoxLayout(esBox);
  esBox->setObjectName(QStringLiteral("speedups.early_stopping"));
  esLayout->setContentsMargins(0, 0, 0, 0);
  patience_ = new QSpinBox(esBox);
  setSchemaRange(patience_, "speedups.early_stopping.patience");
  patience_->setSpecialValueText(QStringLiteral("off"));
  patience_->setSuffix(QStringLiteral(" evals"));
  more_ = new QToolButton(esBox);
  more_->setObjectName(QStringLiteral("speedups.early_stopping.more"));
  more_->setText(QStringLiteral("More"));
  more_->setCheckable(true);
  more_->setToolTip(QStringLiteral("Monitor and minimum improvement"));
  esLayout->addWidget(patience_, 1);
  esLayout->addWidget(more_);
  patience_->setObjectName(QStringLiteral("speedups.early_stopping.patience"));
  Row es = addSpeedupRow(speedup::kEarlyStopping, esBox);
  moreBox_ = new QWidget(es.box);
  auto* moreLayout = new QFormLayout(moreBox_);
  moreLayout->setContentsMargins(12, 0, 0, 0);
  monitor_ = new QComboBox(moreBox_);
  monitor_->setObjectName(QStringLiteral("speedups.early_stopping.monitor"));
  for (const Choice& c : monitorChoices()) monitor_->addItem(QString::fromUtf8(c.label), QString::fromUtf8(c.value));
  minDelta_ = new QDoubleSpinBox(moreBox_);
  minDelta_->setObjectName(QStringLiteral("speedups.early_stopping.min_delta"));
  minDelta_->setDecimals(4);
  setSchemaRange(minDelta_, "speedups.early_stopping.min_delta");
  minDelta_->setSingleStep(0.001);
  moreLayout->addRow(QStringLiteral("Monitor"), monitor_);
  moreLayout->addRow(QString(), errors_->makeLabel(QStringLiteral("speedups.early_stopping.monitor"), moreBox_));
  moreLayout->addRow(QStringLiteral("Min. improvement"), minDelta_);
  moreLayout->addRow(QString(), errors_->makeLabel(QStringLiteral("speedups.early_stopping.min_delta"), moreBox_));
  errors_->addAlias(QStringLiteral("speedups.early_stopping.mode"), QStringLiteral("speedups.early_stopping.monitor"));
  static_cast<QGridLayout*>(es.box->layout())->addWidget(moreBox_, 5, 0, 1, 3);
  moreBox_->hide();
  esCaveat_ = new QLabel(es.box);
  esCaveat_->setObjectName(QStringLiteral("caveat:early_stopping"));
  esCaveat_->setWordWrap(true);
  esCaveat_->hide();
  static_cast<QGridLayout*>(es.box->layout())->addWidget(esCaveat_, 6, 0, 1, 3);
  connect(more_, &QToolButton::toggled, moreBox_, &QWidget::setVisible);

}

void SpeedupsGroup::addLeverRows() {
  auto emitChanged = [this] {
    updateDependencies();
    Q_EMIT changed();
  };
  for (const Speedup& lever : speedupTable()) {
    if (rows_.contains(QString::fromUtf8(lever.key))) continue;  // a control of its own, built above
    QWidget* control = fieldControl(lever.config_path, emitChanged);
    addSpeedupRow(lever.key, control);
    levers_.insert(QString::fromUtf8(lever.config_path), control);
  }
}

// The control a field's schema asks for: a combo box of its choices, a spin box with its range
// (a count), else a check box (a bool).
QWidget* SpeedupsGroup::fieldControl(const char* path, const std::function<void()>& changed) {
  const FieldSpec* spec = findFieldSpec(path);
  if (spec && spec->choices) {
    auto* box = new QComboBox(this);
    for (const Choice& c : spec->choices()) box->addItem(QString::fromUtf8(c.label), QString::fromUtf8(c.value));
    connect(box, &QComboBox::currentIndexChanged, this, changed);
    return box;
  }
  if (spec && spec->number) {
    auto* box = new QSpinBox(this);
    setSchemaRange(box, path);
    connect(box, &QSpinBox::valueChanged, this, changed);
    return box;
  }
  auto* box = new QCheckBox(this);
  connect(box, &QCheckBox::toggled, this, changed);
  return box;
}

void SpeedupsGroup::readLevers(const json& doc) {
  for (auto it = levers_.cbegin(); it != levers_.cend(); ++it) {
    const QSignalBlocker block(it.value());
    if (auto* box = qobject_cast<QCheckBox*>(it.value())) box->setChecked(configBool(doc, it.key()));
    else if (auto* spin = qobject_cast<QSpinBox*>(it.value())) spin->setValue(int(configNumber(doc, it.key())));
    else if (auto* combo = qobject_cast<QComboBox*>(it.value())) selectData(combo, configString(doc, it.key()));
  }
}

// A lever this machine cannot do is written as its default (off), as pin memory is.
void SpeedupsGroup::writeLevers(json& doc) const {
  for (auto it = levers_.cbegin(); it != levers_.cend(); ++it) {
    QWidget* w = it.value();
    if (!w->isEnabled()) setField(doc, it.key(), fieldValue(defaultConfig(), it.key()));
    else if (auto* box = qobject_cast<QCheckBox*>(w)) setField(doc, it.key(), box->isChecked());
    else if (auto* spin = qobject_cast<QSpinBox*>(w)) setField(doc, it.key(), spin->value());
    else if (auto* combo = qobject_cast<QComboBox*>(w)) setField(doc, it.key(), combo->currentData().toString().toStdString());
  }
}

void SpeedupsGroup::connectFields() {
  auto emitChanged = [this] {
    updateDependencies();
    Q_EMIT changed();
  };
  connect(workers_, &QSpinBox::valueChanged, this, emitChanged);
  connect(workers_, &QSpinBox::valueChanged, this, &SpeedupsGroup::updateProbeOffer);
  connect(pinMemory_, &QCheckBox::toggled, this, emitChanged);
  connect(devices_, &QSpinBox::valueChanged, this, emitChanged);
  connect(precision_, &QComboBox::currentIndexChanged, this, emitChanged);
  connect(patience_, &QSpinBox::valueChanged, this, emitChanged);
  connect(monitor_, &QComboBox::currentIndexChanged, this, emitChanged);
  connect(minDelta_, &QDoubleSpinBox::valueChanged, this, emitChanged);
  connect(sharding_, &QComboBox::currentIndexChanged, this, emitChanged);
  connect(inferenceEval_, &QCheckBox::toggled, this, emitChanged);
}

SpeedupsGroup::Row SpeedupsGroup::addSpeedupRow(const char* key, QWidget* control) {
  const Speedup& s = *findSpeedup(key);
  return addRow(QString::fromUtf8(s.key), QString::fromUtf8(s.config_path), QString::fromUtf8(s.label), control,
                QString::fromUtf8(s.help));
}

SpeedupsGroup::Row SpeedupsGroup::addRow(const QString& key, const QString& path, const QString& title, QWidget* control,
                                         const QString& explanation) {
  Row row;
  row.box = new QWidget(this);
  auto* grid = new QGridLayout(row.box);
  grid->setContentsMargins(0, 4, 0, 0);
  grid->setVerticalSpacing(1);
  row.title = new QLabel(title, row.box);
  QFont bold = row.title->font();
  bold.setBold(true);
  row.title->setFont(bold);
  row.title->setBuddy(control);
  control->setParent(row.box);
  if (control->objectName().isEmpty()) control->setObjectName(path);
  auto* explain = new QLabel(explanation, row.box);
  explain->setObjectName(QStringLiteral("explain:") + key);
  explain->setWordWrap(true);
  row.availability = new QLabel(row.box);
  row.availability->setObjectName(QStringLiteral("availability:") + key);
  row.availability->setWordWrap(true);
  row.availability->hide();
  row.effect = new QLabel(QStringLiteral("Not measured on this machine yet."), row.box);
  row.effect->setObjectName(QStringLiteral("effect:") + key);
  row.effect->setWordWrap(true);
  row.tryButton = new QPushButton(QStringLiteral("Try vs baseline"), row.box);
  row.tryButton->setObjectName(QStringLiteral("try:") + key);
  row.tryButton->setToolTip(QStringLiteral("Run the baseline with only %1 changed, shown against the baseline").arg(title));
  connect(row.tryButton, &QPushButton::clicked, this, [this, key] {
    if (trying_ == key) Q_EMIT tryCancelRequested();
    else Q_EMIT tryRequested(key);
  });
  grid->addWidget(row.title, 0, 0);
  grid->addWidget(control, 0, 1);
  grid->addWidget(row.tryButton, 0, 2);
  grid->addWidget(explain, 1, 0, 1, 3);
  grid->addWidget(row.availability, 2, 0, 1, 3);
  grid->addWidget(row.effect, 3, 0, 1, 3);
  grid->addWidget(errors_->makeLabel(path, row.box), 4, 0, 1, 3);
  grid->setColumnStretch(0, 1);
  layout_->addWidget(row.box);
  row.control = control;
  rows_.insert(key, row);
  return row;
}

void SpeedupsGroup::readFrom(const json& doc) {
  const QSignalBlocker b1(workers_), b2(pinMemory_), b3(devices_), b4(precision_), b5(patience_), b6(monitor_),
      b7(minDelta_), b8(sharding_), b9(inferenceEval_);
  workers_->setValue(int(configNumber(doc, QStringLiteral("speedups.workers"))));
  pinMemory_->setChecked(configBool(doc, QStringLiteral("speedups.pin_memory")));
  devices_->setValue(int(configNumber(doc, QStringLiteral("speedups.devices"))));
  selectData(precision_, configString(doc, QStringLiteral("speedups.precision")));
  patience_->setValue(int(configNumber(doc, QStringLiteral("speedups.early_stopping.patience"))));
  selectData(monitor_, configString(doc, QStringLiteral("speedups.early_stopping.monitor")));
  minDelta_->setValue(configNumber(doc, QStringLiteral("speedups.early_stopping.min_delta")));
  selectData(sharding_, configString(doc, QStringLiteral("speedups.sharding")));
  inferenceEval_->setChecked(configBool(doc, QStringLiteral("speedups.inference_eval")));
  readLevers(doc);
  updateDependencies();
}

void SpeedupsGroup::writeTo(json& doc) const {
  setField(doc, QStringLiteral("speedups.workers"), workers_->value());
  // A toggle this machine cannot do is written as off: the run would refuse it.
  setField(doc, QStringLiteral("speedups.pin_memory"), pinMemory_->isEnabled() && pinMemory_->isChecked());
  setField(doc, QStringLiteral("speedups.devices"), devices_->value());
  setField(doc, QStringLiteral("speedups.precision"), precision_->currentData().toString().toStdString());
  setField(doc, QStringLiteral("speedups.early_stopping.patience"), patience_->value());
  const QString monitor = monitor_->currentData().toString();
  setField(doc, QStringLiteral("speedups.early_stopping.monitor"), monitor.toStdString());
  setField(doc, QStringLiteral("speedups.early_stopping.mode"), monitor == QLatin1String("val_acc") ? "max" : "min");
  setField(doc, QStringLiteral("speedups.early_stopping.min_delta"), minDelta_->value());
  setField(doc, QStringLiteral("speedups.sharding"),
           sharding_->isEnabled() ? sharding_->currentData().toString().toStdString() : std::string("off"));
  setField(doc, QStringLiteral("speedups.inference_eval"), inferenceEval_->isChecked());
  writeLevers(doc);
}

void SpeedupsGroup::setAvailability(const QString& key, bool available, const QString& note) {
  available_.insert(key, available);
  notes_.insert(key, note);
  const Row row = rows_.value(key);
  if (!row.box) return;
  // Available: the machine's own note (often more specific) stands in for the built-in
  // explanation. Not available: the explanation stays, and the reason follows it.
  if (auto* explain = row.box->findChild<QLabel*>(QStringLiteral("explain:") + key, Qt::FindDirectChildrenOnly)) {
    if (!explain->property("builtin").isValid()) explain->setProperty("builtin", explain->text());
    explain->setText(available && !note.isEmpty() ? note : explain->property("builtin").toString());
  }
  const QString text =
      available ? QString() : QStringLiteral("Not available here: ") + (note.isEmpty() ? QStringLiteral("this machine cannot do it") : note);
  row.availability->setText(text);
  row.availability->setProperty("unavailable", !available);
  row.availability->setVisible(!text.isEmpty());
  row.control->setEnabled(available);
  row.control->setToolTip(available ? QString() : text);
  row.tryButton->setEnabled(trying_.isEmpty() ? available : key == trying_);
}

void SpeedupsGroup::setTrying(const QString& key, const QString& status) {
  trying_ = key;
  for (auto it = rows_.begin(); it != rows_.end(); ++it) {
    QPushButton* button = it.value().tryButton;
    const bool mine = it.key() == key;
    button->setText(mine ? QStringLiteral("Cancel try") : QStringLiteral("Try vs baseline"));
    button->setEnabled(key.isEmpty() ? available_.value(it.key(), true) : mine);
    if (!button->property("tryTip").isValid()) button->setProperty("tryTip", button->toolTip());
    button->setToolTip(mine ? QStringLiteral("Stop the try; the pairs that finished are kept and counted")
                       : key.isEmpty() ? button->property("tryTip").toString()
                                       : QStringLiteral("A try is running: cancel it or wait for it first"));
  }
  if (key.isEmpty() || status.isEmpty()) return;
  QLabel* effect = rows_.value(key).effect;
  effect->setText(status);
  effect->setVisible(true);
}

void SpeedupsGroup::setCapabilities(const json& doc) {
  capsKnown_ = true;
  const proto::Capabilities caps = proto::capabilitiesFromJson(doc);
  // Every speedup's availability and why; the counts' maxima and each precision's own below.
  for (const Speedup& s : speedupTable())
    setAvailability(QString::fromUtf8(s.key), caps.available(s.key), QString::fromStdString(caps.note(s.key)));
  if (!caps.available(speedup::kPinMemory)) pinMemory_->setChecked(false);

  const proto::SpeedupCapability* w = caps.speedup(speedup::kWorkers);
  if (w && w->max) workers_->setMaximum(std::max(1, *w->max));
  suggestedWorkers_ = w && w->suggested ? *w->suggested : -1;

  const proto::SpeedupCapability* d = caps.speedup(speedup::kDevices);
  if (d && d->max) devices_->setMaximum(std::max(1, *d->max));
  const bool cpuRanks = d && d->kind == "cpu-processes";
  rows_[QString::fromUtf8(speedup::kDevices)].title->setText(cpuRanks ? QStringLiteral("Devices (CPU processes)") : QStringLiteral("Devices (GPUs)"));
  applyPrecisionValues(caps);

  QString summary;
  if (caps.known)
    summary = caps.gpus > 0 ? QStringLiteral("This machine: %1 GPU(s), %2 CPU cores.").arg(caps.gpus).arg(caps.cores)
                            : QStringLiteral("This machine: no GPU, %1 CPU cores.").arg(caps.cores);
  capsStatus_->setText(summary);
  capsStatus_->setVisible(!summary.isEmpty());
  updateDependencies();
  updateColors();
  Q_EMIT changed();
}

// Precision: each value on its own; the unavailable ones are greyed with their reason, and named
// in the row when the speedup itself is usable.
void SpeedupsGroup::applyPrecisionValues(const proto::Capabilities& caps) {
  QStringList missing, slow;
  auto* model = qobject_cast<QStandardItemModel*>(precision_->model());
  if (!model) return;
  for (int i = 0; i < precision_->count(); ++i) {
    const proto::ValueCapability* v = caps.value(speedup::kPrecision, precision_->itemData(i).toString().toStdString());
    const bool ok = !v || v->available;
    const QString note = v ? QString::fromStdString(v->note) : QString();
    QStandardItem* item = model->item(i);
    item->setEnabled(ok);
    item->setToolTip(ok ? note : QStringLiteral("Not available here: ") + note);
    if (!ok) missing << QStringLiteral("%1: %2").arg(precision_->itemText(i), note);
    // Emulated (no AVX-512 BF16 or AMX): on offer to measure, but slower here, and said so.
    if (ok && v && v->native && !*v->native) slow << QStringLiteral("%1 is emulated on this CPU, slower than 32-bit (the ladder skips it)").arg(precision_->itemText(i));
  }
  if (!model->item(precision_->currentIndex())->isEnabled()) precision_->setCurrentIndex(0);
  QStringList lines;
  if (!missing.isEmpty()) lines << QStringLiteral("Not available here: ") + missing.join(QStringLiteral("; "));
  lines << slow;
  if (caps.available(speedup::kPrecision) && !lines.isEmpty()) {
    QLabel* label = rows_[QString::fromUtf8(speedup::kPrecision)].availability;
    label->setText(lines.join(QLatin1Char('\n')));
    label->setProperty("unavailable", true);
    label->show();
  }
}

void SpeedupsGroup::setCapabilitiesError(const QString& error) {
  capsStatus_->setText(QStringLiteral("Could not ask workbench-cli what this machine can do (%1). Every toggle is "
                                      "left on offer; the run itself checks them.")
                           .arg(error));
  capsStatus_->setVisible(true);
}

QString SpeedupsGroup::availabilityText(const QString& key) const {
  const Row row = rows_.value(key);
  return row.availability ? row.availability->text() : QString();
}

void SpeedupsGroup::updateDependencies() {
  // Sharding splits state across ranks: it needs more than one.
  const bool shardingPossible = available_.value(QString::fromUtf8(speedup::kSharding), true) && devices_->value() > 1;
  const Row sh = rows_.value(QString::fromUtf8(speedup::kSharding));
  sh.control->setEnabled(shardingPossible);
  if (!available_.value(QString::fromUtf8(speedup::kSharding), true)) {
    // setAvailability's reason stays
  } else if (!shardingPossible) {
    sh.availability->setText(QStringLiteral("Needs devices > 1 (set Devices to 2 or more)."));
    sh.availability->setProperty("unavailable", true);
    sh.availability->show();
  } else {
    sh.availability->clear();
    sh.availability->setProperty("unavailable", false);
    sh.availability->hide();
  }
  sh.control->setToolTip(shardingPossible ? QString() : sh.availability->text());
  if (!shardingPossible) {
    const QSignalBlocker block(sharding_);
    sharding_->setCurrentIndex(0);
  }
  const bool esOn = patience_->value() > 0 && patience_->isEnabled();
  monitor_->setEnabled(esOn);
  minDelta_->setEnabled(esOn);
  updateColors();
}

void SpeedupsGroup::updateColors() {
  for (auto it = rows_.cbegin(); it != rows_.cend(); ++it) {
    const Row& row = it.value();
    const bool bad = row.availability->property("unavailable").toBool();
    row.availability->setStyleSheet(QStringLiteral("color: %1;").arg(bad ? unavailableColor(this) : mutedColor(this)));
    if (auto* explain = row.box->findChild<QLabel*>(QStringLiteral("explain:") + it.key(), Qt::FindDirectChildrenOnly))
      explain->setStyleSheet(QStringLiteral("color: %1;").arg(mutedColor(this)));
    const bool measured = row.effect->property("speedup").toBool();
    row.effect->setStyleSheet(QStringLiteral("color: %1;").arg(measured ? measuredColor(this) : mutedColor(this)));
  }
  capsStatus_->setStyleSheet(QStringLiteral("color: %1;").arg(mutedColor(this)));
  if (esCaveat_) esCaveat_->setStyleSheet(QStringLiteral("color: %1;").arg(unavailableColor(this)));
  hint_->setStyleSheet(QStringLiteral("color: %1;").arg(mutedColor(this)));
  source_->setStyleSheet(QStringLiteral("color: %1;").arg(mutedColor(this)));
}

QStringList SpeedupsGroup::keys() {
  QStringList out;
  for (const Speedup& s : speedupTable()) out << QString::fromUtf8(s.key);
  return out;
}

void SpeedupsGroup::setEffects(const std::map<std::string, ladder::SpeedupEffect>& ladder,
                               const std::optional<ladder::SpeedupEffect>& probe, const QString& ladderSource,
                               const std::map<std::string, ladder::SpeedupEffect>& tries) {
  source_->setText(ladderSource.isEmpty() ? QString() : QStringLiteral("Measured here by the ladder of %1.").arg(ladderSource));
  source_->setVisible(!ladderSource.isEmpty());
  for (const QString& key : keys()) {
    const Row row = rows_.value(key);
    QStringList lines;
    bool speedup = false;
    auto line = [&](const ladder::SpeedupEffect& e, const QString& what) {
      const QString when = e.date.empty() ? QString() : QStringLiteral(" (%1)").arg(QString::fromStdString(e.date));
      lines << QStringLiteral("%1%2: %3").arg(what, when, QString::fromStdString(e.text));
      speedup = speedup || (e.speedup && *e.speedup > 1.0);
    };
    if (key == QLatin1String("workers") && probe) line(*probe, QStringLiteral("Probe"));
    // A ladder step skipped because this machine cannot do it adds nothing to the row's own reason.
    const bool unavailable = !available_.value(key, true);
    if (auto it = ladder.find(key.toStdString()); it != ladder.end() && !(unavailable && it->second.text.rfind("skipped", 0) == 0))
      line(it->second, QStringLiteral("Ladder"));
    if (auto it = tries.find(key.toStdString()); it != tries.end()) line(it->second, QStringLiteral("Try"));
    row.effect->setText(lines.isEmpty() ? QStringLiteral("Not measured on this machine yet.") : lines.join(QLatin1Char('\n')));
    row.effect->setVisible(!(lines.isEmpty() && unavailable));  // its reason is shown above
    row.effect->setProperty("speedup", speedup);
  }
  updateColors();
}

QString SpeedupsGroup::effectText(const QString& key) const {
  const Row row = rows_.value(key);
  return row.effect ? row.effect->text() : QString();
}

void SpeedupsGroup::setProbing(bool running, const QString& status) {
  if (!probe_->property("probeTip").isValid()) probe_->setProperty("probeTip", probe_->toolTip());
  probing_ = running;
  probe_->setText(running ? QStringLiteral("Cancel") : QStringLiteral("Probe"));
  updateProbeOffer();
  probe_->setToolTip(running ? QStringLiteral("Stop the probe; the result stored before it stays as it was")
                             : probe_->property("probeTip").toString());
  if (!status.isEmpty()) rows_[QString::fromUtf8(speedup::kWorkers)].effect->setText(status);
}

void SpeedupsGroup::applyProbe(const probe::ProbeResult& result) {
  if (result.recommended >= 0 && workers_->isEnabled()) workers_->setValue(std::min(result.recommended, workers_->maximum()));
}

// The probe's recommendation as a button ("Use 2 workers"), shown while it differs from the
// count set; where the probe found the data path is not the bottleneck only when it recommends
// fewer workers than are set (more cannot help; fewer free the cores), never for a contended
// probe.
void SpeedupsGroup::offerProbe(const std::optional<probe::ProbeResult>& result) {
  offered_ = result && result->recommended >= 0 && !result->contended() ? result->recommended : -1;
  offerFewerOnly_ = result && result->dataNotBottleneck();
  updateProbeOffer();
}

void SpeedupsGroup::updateProbeOffer() {
  if (!useProbe_) return;
  const int set = workers_->value();
  const bool show = offered_ >= 0 && offered_ != set && (!offerFewerOnly_ || offered_ < set) && workers_->isEnabled() && !probing_;
  useProbe_->setText(offered_ == 1 ? QStringLiteral("Use 1 worker") : QStringLiteral("Use %1 workers").arg(offered_));
  useProbe_->setToolTip(QStringLiteral("Set Loader workers to %1, the count the probe recommends for this experiment").arg(offered_));
  useProbe_->setVisible(show);
}

void SpeedupsGroup::setProbeVerdict(const QString& verdict) {
  rows_[QStringLiteral("workers")].effect->setToolTip(verdict);
}

void SpeedupsGroup::setEarlyStoppingCaveat(const QString& text) {
  esCaveat_->setText(text);
  esCaveat_->setVisible(!text.isEmpty());
  updateColors();
}

QString SpeedupsGroup::earlyStoppingCaveat() const { return esCaveat_->text(); }

QPushButton* SpeedupsGroup::tryButton(const QString& key) const { return rows_.value(key).tryButton; }

void SpeedupsGroup::changeEvent(QEvent* event) {
  QGroupBox::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) {
    updateColors();
    errors_->updateColors();
  }
}

}  // namespace wb::ui
