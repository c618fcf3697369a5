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

#include <algorithm>

#include "setup/field_errors.h"
#include "setup/json_fields.h"
#include "setup/schema_range.h"
#include "wb/proto/capabilities_record.h"
#include "wb/proto/config_json.h"
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

// A control shows doc's value of its field (wb::Config's default where doc lacks it).
void showValue(QWidget* w, const json& doc, const QString& path) {
  if (auto* box = qobject_cast<QCheckBox*>(w)) box->setChecked(configBool(doc, path));
  else if (auto* spin = qobject_cast<QSpinBox*>(w)) spin->setValue(int(configNumber(doc, path)));
  else if (auto* real = qobject_cast<QDoubleSpinBox*>(w)) real->setValue(configNumber(doc, path));
  else if (auto* combo = qobject_cast<QComboBox*>(w)) selectData(combo, configString(doc, path));
}

json shownValue(const QWidget* w) {
  if (auto* box = qobject_cast<const QCheckBox*>(w)) return box->isChecked();
  if (auto* spin = qobject_cast<const QSpinBox*>(w)) return spin->value();
  if (auto* real = qobject_cast<const QDoubleSpinBox*>(w)) return real->value();
  if (auto* combo = qobject_cast<const QComboBox*>(w)) return combo->currentData().toString().toStdString();
  return nullptr;
}

QString path(const char* dotted) { return QString::fromUtf8(dotted); }

}  // namespace

SpeedupsGroup::SpeedupsGroup(FieldErrors* errors, QWidget* parent)
    : QGroupBox(QStringLiteral("Speedups"), parent), errors_(errors) {
  setObjectName(QStringLiteral("speedups"));
  layout_ = new QVBoxLayout(this);
  layout_->setSpacing(6);
  addHeader();
  for (const Speedup& s : speedupTable()) addSpeedupRow(s);
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

// The field's control, and its Probe or More button beside it where its descriptor asks.
void SpeedupsGroup::addSpeedupRow(const Speedup& s) {
  const Control& how = s.control;
  QWidget* box = how.probe || !how.more.empty() ? new QWidget(this) : nullptr;
  QWidget* field = fieldControl(s.config_path, box ? box : this);
  if (auto* spin = qobject_cast<QSpinBox*>(field)) {
    if (*how.zero) spin->setSpecialValueText(QString::fromUtf8(how.zero));
    if (*how.suffix) spin->setSuffix(QString::fromUtf8(how.suffix));
  }
  QWidget* control = !box ? field : how.probe ? probeBox(s, box, field) : moreButtonBox(s, box, field);
  Row row = addRow(QString::fromUtf8(s.key), path(s.config_path), QString::fromUtf8(s.label), control,
                   QString::fromUtf8(s.help));
  row.field = field;
  if (!how.more.empty()) addMoreFields(s, row);
  for (const Follows& f : how.follows) errors_->addAlias(path(f.path), path(f.from));
  rows_.insert(QString::fromUtf8(s.key), row);
}

// A count a probe measures: the count and the Probe button (Cancel while a probe runs), the
// probe's offer under them.
QWidget* SpeedupsGroup::probeBox(const Speedup& s, QWidget* box, QWidget* field) {
  box->setObjectName(path(s.config_path) + QStringLiteral(".box"));
  // The offer goes under the count, not beside it: the row keeps its width whatever it says.
  auto* boxLayout = new QGridLayout(box);
  boxLayout->setContentsMargins(0, 0, 0, 0);
  boxLayout->setVerticalSpacing(2);
  probeKey_ = QString::fromUtf8(s.key);
  probed_ = qobject_cast<QSpinBox*>(field);
  probe_ = new QPushButton(QStringLiteral("Probe"), box);
  probe_->setObjectName(path(s.config_path) + QStringLiteral(".probe"));
  probe_->setToolTip(QStringLiteral("Time the loader, the step and a few worker counts on this experiment "
                                    "(workbench-cli probe workers, under 30 s); its recommendation is offered, not set"));
  useProbe_ = new QPushButton(box);
  useProbe_->setObjectName(path(s.config_path) + QStringLiteral(".use"));
  useProbe_->hide();
  boxLayout->addWidget(field, 0, 0);
  boxLayout->addWidget(probe_, 0, 1);
  boxLayout->addWidget(useProbe_, 1, 0, 1, 2);
  boxLayout->setColumnStretch(0, 1);
  connect(useProbe_, &QPushButton::clicked, this, [this] {
    if (offered_ >= 0) probed_->setValue(std::min(offered_, probed_->maximum()));
  });
  connect(probe_, &QPushButton::clicked, this, [this] {
    if (probing_) Q_EMIT probeCancelRequested();
    else Q_EMIT probeRequested();
  });
  connect(probed_, &QSpinBox::valueChanged, this, &SpeedupsGroup::updateProbeOffer);
  return box;
}

// The field up front, a More button beside it for the fields behind it.
QWidget* SpeedupsGroup::moreButtonBox(const Speedup& s, QWidget* box, QWidget* field) {
  const QString key = QString::fromUtf8(s.key);
  auto* boxLayout = new QHBoxLayout(box);
  box->setObjectName(QStringLiteral("speedups.") + key);
  boxLayout->setContentsMargins(0, 0, 0, 0);
  auto* more = new QToolButton(box);
  more->setObjectName(QStringLiteral("speedups.%1.more").arg(key));
  more->setText(QStringLiteral("More"));
  more->setCheckable(true);
  more->setToolTip(QString::fromUtf8(s.control.more_tip));
  boxLayout->addWidget(field, 1);
  boxLayout->addWidget(more);
  return box;
}

// The fields behind More, each with its words and its error line, under the row.
void SpeedupsGroup::addMoreFields(const Speedup& s, Row& row) {
  row.more = new QWidget(row.box);
  auto* moreLayout = new QFormLayout(row.more);
  moreLayout->setContentsMargins(12, 0, 0, 0);
  for (const SubField& sub : s.control.more) {
    moreLayout->addRow(QString::fromUtf8(sub.label), fieldControl(sub.path, row.more));
    moreLayout->addRow(QString(), errors_->makeLabel(path(sub.path), row.more));
  }
  static_cast<QGridLayout*>(row.box->layout())->addWidget(row.more, 5, 0, 1, 3);
  row.more->hide();
  connect(row.control->findChild<QToolButton*>(), &QToolButton::toggled, row.more, &QWidget::setVisible);
}

// The control a field's schema asks for: a combo box of its choices, a spin box with its range
// (a count, or a real number to four decimals), else a check box (a bool).
QWidget* SpeedupsGroup::fieldControl(const char* dotted, QWidget* parent) {
  auto changed = [this] {
    updateDependencies();
    Q_EMIT this->changed();
  };
  const FieldSpec* spec = findFieldSpec(dotted);
  QWidget* control = nullptr;
  if (spec && spec->choices) {
    auto* box = new QComboBox(parent);
    for (const Choice& c : spec->choices()) box->addItem(QString::fromUtf8(c.label), QString::fromUtf8(c.value));
    connect(box, &QComboBox::currentIndexChanged, this, changed);
    control = box;
  } else if (spec && spec->number && spec->range.integer) {
    auto* box = new QSpinBox(parent);
    setSchemaRange(box, dotted);
    connect(box, &QSpinBox::valueChanged, this, changed);
    control = box;
  } else if (spec && spec->number) {
    auto* box = new QDoubleSpinBox(parent);
    box->setDecimals(4);
    setSchemaRange(box, dotted);
    box->setSingleStep(0.001);
    connect(box, &QDoubleSpinBox::valueChanged, this, changed);
    control = box;
  } else {
    auto* box = new QCheckBox(parent);
    connect(box, &QCheckBox::toggled, this, changed);
    control = box;
  }
  control->setObjectName(path(dotted));
  fields_.insert(path(dotted), control);
  return control;
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
  row.caveat = new QLabel(row.box);
  row.caveat->setObjectName(QStringLiteral("caveat:") + key);
  row.caveat->setWordWrap(true);
  row.caveat->hide();
  grid->addWidget(row.title, 0, 0);
  grid->addWidget(control, 0, 1);
  grid->addWidget(row.tryButton, 0, 2);
  grid->addWidget(explain, 1, 0, 1, 3);
  grid->addWidget(row.availability, 2, 0, 1, 3);
  grid->addWidget(row.effect, 3, 0, 1, 3);
  grid->addWidget(errors_->makeLabel(path, row.box), 4, 0, 1, 3);
  grid->addWidget(row.caveat, 6, 0, 1, 3);
  grid->setColumnStretch(0, 1);
  layout_->addWidget(row.box);
  row.control = control;
  return row;
}

void SpeedupsGroup::readFrom(const json& doc) {
  for (auto it = fields_.cbegin(); it != fields_.cend(); ++it) {
    const QSignalBlocker block(it.value());
    showValue(it.value(), doc, it.key());
  }
  updateDependencies();
}

// A speedup this machine cannot do, or that waits for another setting, is written as its
// default (off): the run would refuse it. The fields behind More are written as shown, and
// those that follow another with its value.
void SpeedupsGroup::writeFields(json& doc, bool asOffered) const {
  for (const Speedup& s : speedupTable()) {
    const QString key = QString::fromUtf8(s.key);
    const bool offered = available_.value(key, true) && !waiting_.value(key, false);
    setField(doc, path(s.config_path),
             offered || !asOffered ? shownValue(rows_.value(key).field) : fieldValue(defaultConfig(), path(s.config_path)));
    for (const SubField& sub : s.control.more) setField(doc, path(sub.path), shownValue(fields_.value(path(sub.path))));
    for (const Follows& f : s.control.follows)
      setField(doc, path(f.path), f.value(shownValue(fields_.value(path(f.from))).get<std::string>()));
  }
}

void SpeedupsGroup::writeTo(json& doc) const { writeFields(doc, true); }

Config SpeedupsGroup::shownConfig() const {
  json doc = defaultConfig();
  writeFields(doc, false);
  return proto::configAsWritten(doc);
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
  for (const Speedup& s : speedupTable()) applyCapability(s, caps);

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

// One speedup's availability and why; a count's maximum here, the probe's starting count, the
// kind of device in the title, each choice's own availability.
void SpeedupsGroup::applyCapability(const Speedup& s, const proto::Capabilities& caps) {
  const QString key = QString::fromUtf8(s.key);
  const bool available = caps.available(s.key);
  setAvailability(key, available, QString::fromStdString(caps.note(s.key)));
  const Row row = rows_.value(key);
  if (!available) {  // shown as it is written: off
    const QSignalBlocker block(row.field);
    showValue(row.field, defaultConfig(), path(s.config_path));
  }
  const proto::SpeedupCapability* cap = caps.speedup(s.key);
  if (auto* spin = qobject_cast<QSpinBox*>(row.field); spin && cap && cap->max) spin->setMaximum(std::max(1, *cap->max));
  if (s.control.probe) suggestedWorkers_ = cap && cap->suggested ? *cap->suggested : -1;
  for (const auto& [kind, words] : s.control.kinds)
    if (cap && cap->kind == kind) row.title->setText(QStringLiteral("%1 (%2)").arg(QString::fromUtf8(s.label), QString::fromStdString(words)));
  if (auto* combo = qobject_cast<QComboBox*>(row.field)) applyChoiceValues(key, combo, caps);
}

// Each value on its own (precision's): the unavailable ones are greyed with their reason, and
// named in the row when the speedup itself is usable.
void SpeedupsGroup::applyChoiceValues(const QString& key, QComboBox* box, const proto::Capabilities& caps) {
  QStringList missing, slow;
  auto* model = qobject_cast<QStandardItemModel*>(box->model());
  if (!model) return;
  for (int i = 0; i < box->count(); ++i) {
    const proto::ValueCapability* v = caps.value(key.toStdString(), box->itemData(i).toString().toStdString());
    const bool ok = !v || v->available;
    const QString note = v ? QString::fromStdString(v->note) : QString();
    QStandardItem* item = model->item(i);
    item->setEnabled(ok);
    item->setToolTip(ok ? note : QStringLiteral("Not available here: ") + note);
    if (!ok) missing << QStringLiteral("%1: %2").arg(box->itemText(i), note);
    // Emulated (no AVX-512 BF16 or AMX): on offer to measure, but slower here, and said so.
    if (ok && v && v->native && !*v->native) slow << QStringLiteral("%1 is emulated on this CPU, slower than 32-bit (the ladder skips it)").arg(box->itemText(i));
  }
  if (!model->item(box->currentIndex())->isEnabled()) box->setCurrentIndex(0);
  QStringList lines;
  if (!missing.isEmpty()) lines << QStringLiteral("Not available here: ") + missing.join(QStringLiteral("; "));
  lines << slow;
  if (caps.available(key.toStdString()) && !lines.isEmpty()) {
    QLabel* label = rows_[key].availability;
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
  const Config c = shownConfig();
  for (const Speedup& s : speedupTable()) {
    const QString key = QString::fromUtf8(s.key);
    const Row row = rows_.value(key);
    if (s.control.waits) updateWaiting(s, row, c);
    // The fields behind More matter only while the speedup is on.
    const bool on = row.control->isEnabled() && speedupRequested(s, c);
    for (const SubField& sub : s.control.more) fields_.value(path(sub.path))->setEnabled(on);
  }
  updateColors();
}

// A speedup that waits for another setting (sharding for devices > 1) is disabled, says what to
// set, and shows its default (off).
void SpeedupsGroup::updateWaiting(const Speedup& s, const Row& row, const Config& c) {
  const QString key = QString::fromUtf8(s.key);
  const QString why = QString::fromStdString(s.control.waits(c));
  const bool available = available_.value(key, true);
  const bool possible = available && why.isEmpty();
  waiting_.insert(key, !why.isEmpty());
  row.control->setEnabled(possible);
  if (!available) {
    // setAvailability's reason stays
  } else if (!possible) {
    row.availability->setText(why);
    row.availability->setProperty("unavailable", true);
    row.availability->show();
  } else {
    row.availability->clear();
    row.availability->setProperty("unavailable", false);
    row.availability->hide();
  }
  row.control->setToolTip(possible ? QString() : row.availability->text());
  if (!possible) {
    const QSignalBlocker block(row.field);
    showValue(row.field, defaultConfig(), path(s.config_path));
  }
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
    row.caveat->setStyleSheet(QStringLiteral("color: %1;").arg(unavailableColor(this)));
  }
  capsStatus_->setStyleSheet(QStringLiteral("color: %1;").arg(mutedColor(this)));
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
    if (key == probeKey_ && probe) line(*probe, QStringLiteral("Probe"));
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
  if (!status.isEmpty()) rows_[probeKey_].effect->setText(status);
}

void SpeedupsGroup::applyProbe(const probe::ProbeResult& result) {
  if (result.recommended >= 0 && probed_->isEnabled()) probed_->setValue(std::min(result.recommended, probed_->maximum()));
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
  const int set = probed_->value();
  const bool show = offered_ >= 0 && offered_ != set && (!offerFewerOnly_ || offered_ < set) && probed_->isEnabled() && !probing_;
  useProbe_->setText(offered_ == 1 ? QStringLiteral("Use 1 worker") : QStringLiteral("Use %1 workers").arg(offered_));
  useProbe_->setToolTip(QStringLiteral("Set %1 to %2, the count the probe recommends for this experiment")
                            .arg(QString::fromUtf8(findSpeedup(probeKey_.toStdString())->label))
                            .arg(offered_));
  useProbe_->setVisible(show);
}

void SpeedupsGroup::setProbeVerdict(const QString& verdict) {
  rows_[probeKey_].effect->setToolTip(verdict);
}

void SpeedupsGroup::setCaveat(const QString& key, const QString& text) {
  QLabel* caveat = rows_.value(key).caveat;
  caveat->setText(text);
  caveat->setVisible(!text.isEmpty());
  updateColors();
}

QStringList SpeedupsGroup::caveats() const {
  QStringList out;
  for (const QString& key : keys())
    if (const QString text = rows_.value(key).caveat->text(); !text.isEmpty()) out << text;
  return out;
}

QPushButton* SpeedupsGroup::tryButton(const QString& key) const { return rows_.value(key).tryButton; }

void SpeedupsGroup::changeEvent(QEvent* event) {
  QGroupBox::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) {
    updateColors();
    errors_->updateColors();
  }
}

}  // namespace wb::ui
