#include "setup/setup_panel.h"

#include <QAbstractSpinBox>
#include <QApplication>
#include <QPointer>
#include <QScrollArea>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QKeyEvent>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <optional>

#include "runs/cli.h"
#include "setup/dataset_picker.h"
#include "setup/json_fields.h"
#include "setup/probe_runner.h"
#include "setup/schema_range.h"
#include "setup/speedups_group.h"
#include "wb/common/choices.h"
#include "wb/common/config_schema.h"
#include "wb/common/paths.h"
#include "wb/common/speedups.h"
#include "wb/proto/command_template.h"
#include "wb/proto/config_json.h"
#include "wb/proto/rundir.h"
#include "wb/probe/record.h"
#include "wb/ladder/speedup_effects.h"

namespace wb::ui {
using nlohmann::json;

namespace {
const QString kTorchScript = QStringLiteral("torchscript");

void selectData(QComboBox* box, const QString& value) {
  const int i = box->findData(value);
  box->setCurrentIndex(i >= 0 ? i : 0);
}

QString numberText(double v) { return QString::number(v, 'g', 6); }

}  // namespace

SetupPanel::SetupPanel(QWidget* parent) : QWidget(parent), base_(proto::configToJson(speedupsOff(Config{}))) {
  setObjectName(QStringLiteral("setupPanel"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);

  general_ = new QLabel(this);
  general_->setObjectName(QStringLiteral("error:general"));
  general_->setWordWrap(true);
  general_->hide();
  errors_.setGeneralLabel(general_);

  // The speedups first: they are what the workbench measures.
  speedups_ = new SpeedupsGroup(&errors_, this);
  layout->addWidget(speedups_);
  layout->addWidget(section(QStringLiteral("Experiment"), experimentBody()));
  dataset_ = new DatasetPicker(&errors_, this);
  layout->addWidget(section(QStringLiteral("Data"), dataset_));
  layout->addWidget(section(QStringLiteral("Model and optimiser"), modelBody()));
  layout->addWidget(section(QStringLiteral("Training"), trainingBody()));
  layout->addWidget(general_);
  layout->addStretch(1);

  connectFields();
  connectProbe();
  scrollSafeInputs();
  setConfigJson(base_);
  pristine_ = true;
}

QWidget* SetupPanel::experimentBody() {
  auto* body = new QWidget(this);
  auto* form = new QFormLayout(body);
  name_ = new QLineEdit(body);
  seed_ = new QSpinBox(body);
  setSchemaRange(seed_, "seed");
  addField(form, QStringLiteral("Name"), QStringLiteral("name"), name_);
  addField(form, QStringLiteral("Seed"), QStringLiteral("seed"), seed_);
  command_ = new QLineEdit(body);
  command_->setPlaceholderText(QStringLiteral("none: the workbench's own trainer"));
  command_->setToolTip(
      QStringLiteral("Your own training script instead of the workbench's trainer, recorded by workbench_recorder or its "
                     "Lightning callback into {run_dir} ($WB_RUN_DIR). Placeholders take each run's settings: %1 or any "
                     "config path such as {train.batch_size}; e.g. python3 train.py fit --trainer.precision {precision} "
                     "--data.num_workers {workers}")
          .arg(QString::fromStdString(proto::speedupPlaceholders())));
  addField(form, QStringLiteral("Your script"), QString::fromLatin1(proto::kCommandKey), command_);
  return body;
}

QString SetupPanel::userCommand() const { return command_->text().trimmed(); }

json SetupPanel::withUserCommand(json config) const {
  if (!userCommand().isEmpty()) config[proto::kCommandKey] = userCommand().toStdString();
  return config;
}

// The TorchScript file row, shown only when the model is "TorchScript file…".
QWidget* SetupPanel::scriptFileRow(QWidget* parent) {
  scriptRow_ = new QWidget(parent);
  auto* rowLayout = new QHBoxLayout(scriptRow_);
  rowLayout->setContentsMargins(0, 0, 0, 0);
  scriptPath_ = new QLineEdit(scriptRow_);
  scriptPath_->setObjectName(QStringLiteral("model.file"));
  scriptPath_->setPlaceholderText(QStringLiteral("model.pt (torch.jit.save)"));
  auto* browse = new QPushButton(QStringLiteral("Browse…"), scriptRow_);
  rowLayout->addWidget(scriptPath_, 1);
  rowLayout->addWidget(browse);
  connect(browse, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getOpenFileName(this, QStringLiteral("TorchScript model"), scriptPath_->text(),
                                                   QStringLiteral("TorchScript (*.pt *.pth);;All files (*)"));
    if (!f.isEmpty()) scriptPath_->setText(f);
  });
  return scriptRow_;
}

QWidget* SetupPanel::modelBody() {
  auto* body = new QWidget(this);
  auto* form = new QFormLayout(body);
  modelForm_ = form;
  model_ = new QComboBox(body);
  for (const Choice& c : modelChoices()) model_->addItem(QString::fromUtf8(c.label), QString::fromUtf8(c.value));
  model_->addItem(QStringLiteral("TorchScript file…"), kTorchScript);
  addField(form, QStringLiteral("Model"), QStringLiteral("model.name"), model_);
  form->addRow(QStringLiteral("File"), scriptFileRow(body));
  optim_ = new QComboBox(body);
  for (const Choice& c : optimizerChoices()) optim_->addItem(QString::fromUtf8(c.label), QString::fromUtf8(c.value));
  addField(form, QStringLiteral("Optimiser"), QStringLiteral("optim.name"), optim_);
  lr_ = new QLineEdit(body);
  lr_->setToolTip(QStringLiteral("Learning rate, e.g. 0.01 or 1e-3"));
  addField(form, QStringLiteral("Learning rate"), QStringLiteral("optim.lr"), lr_);
  form->addRow(QStringLiteral("LR scaling"), lrScalingRow(body));
  for (const char* path : {"optim.lr_scaling", "optim.lr_scaling_warmup"})
    form->addRow(QString(), errors_.makeLabel(QString::fromLatin1(path), body));
  addOptimiserNumbers(form, body);
  return body;
}

// Momentum, weight decay, the schedule and its warm-up.
void SetupPanel::addOptimiserNumbers(QFormLayout* form, QWidget* body) {
  momentum_ = new QDoubleSpinBox(body);
  momentum_->setDecimals(3);
  setSchemaRange(momentum_, "optim.momentum");
  momentum_->setSingleStep(0.05);
  addField(form, QStringLiteral("Momentum"), QStringLiteral("optim.momentum"), momentum_);
  weightDecay_ = new QDoubleSpinBox(body);
  weightDecay_->setDecimals(5);
  setSchemaRange(weightDecay_, "optim.weight_decay");
  weightDecay_->setSingleStep(0.0001);
  addField(form, QStringLiteral("Weight decay"), QStringLiteral("optim.weight_decay"), weightDecay_);
  schedule_ = new QComboBox(body);
  for (const Choice& c : scheduleChoices()) schedule_->addItem(QString::fromUtf8(c.label), QString::fromUtf8(c.value));
  addField(form, QStringLiteral("LR schedule"), QStringLiteral("optim.schedule"), schedule_);
  warmup_ = new QDoubleSpinBox(body);
  warmup_->setDecimals(2);
  setSchemaRange(warmup_, "optim.warmup_fraction");
  warmup_->setSingleStep(0.05);
  warmup_->setToolTip(QStringLiteral("Share of the steps used for a linear warm-up (cosine, one-cycle)"));
  addField(form, QStringLiteral("Schedule warm-up"), QStringLiteral("optim.warmup_fraction"), warmup_);
  // Each warm-up only where it acts: the schedule's for cosine and one-cycle, the scaled lr's when it scales.
  auto followSchedule = [this] {
    const QString v = schedule_->currentData().toString();
    warmup_->setEnabled(v == QLatin1String("cosine") || v == QLatin1String("onecycle"));
  };
  connect(schedule_, &QComboBox::currentIndexChanged, this, followSchedule);
  followSchedule();
}

QWidget* SetupPanel::trainingBody() {
  auto* body = new QWidget(this);
  auto* form = new QFormLayout(body);
  batch_ = new QSpinBox(body);
  setSchemaRange(batch_, "train.batch_size");
  addField(form, QStringLiteral("Batch size"), QStringLiteral("train.batch_size"), batch_);
  epochs_ = new QSpinBox(body);
  setSchemaRange(epochs_, "train.epochs");
  addField(form, QStringLiteral("Epochs"), QStringLiteral("train.epochs"), epochs_);
  maxSteps_ = new QSpinBox(body);
  setSchemaRange(maxSteps_, "train.max_steps");
  maxSteps_->setSpecialValueText(QStringLiteral("no cap"));
  maxSteps_->setToolTip(QStringLiteral("Stop after this many optimiser steps (0 = run every epoch)"));
  addField(form, QStringLiteral("Max steps"), QStringLiteral("train.max_steps"), maxSteps_);
  return body;
}

// Every edit marks the set-up touched, re-validates it and says so (changed()).
void SetupPanel::connectFields() {
  auto touched = [this] {
    pristine_ = false;
    validate();
    Q_EMIT changed();
  };
  auto touchedAfter = [this, touched](void (SetupPanel::*react)()) {
    return [this, touched, react] {
      (this->*react)();
      touched();
    };
  };
  connect(name_, &QLineEdit::textChanged, this, touched);
  connect(seed_, &QSpinBox::valueChanged, this, touched);
  connect(command_, &QLineEdit::textChanged, this, touched);
  connect(dataset_, &DatasetPicker::changed, this, touched);
  connect(dataset_, &DatasetPicker::checkFinished, this, [this] { validate(); });
  connect(model_, &QComboBox::currentIndexChanged, this, touchedAfter(&SetupPanel::onModelChanged));
  connect(scriptPath_, &QLineEdit::textChanged, this, touched);
  connect(optim_, &QComboBox::currentIndexChanged, this, touchedAfter(&SetupPanel::onOptimChanged));
  connect(lr_, &QLineEdit::textChanged, this, touched);
  connect(lrScaling_, &QComboBox::currentIndexChanged, this, touchedAfter(&SetupPanel::onOptimChanged));
  connect(lrScalingWarmup_, &QDoubleSpinBox::valueChanged, this, touched);
  connect(momentum_, &QDoubleSpinBox::valueChanged, this, touched);
  connect(weightDecay_, &QDoubleSpinBox::valueChanged, this, touched);
  connect(schedule_, &QComboBox::currentIndexChanged, this, touchedAfter(&SetupPanel::onOptimChanged));
  connect(warmup_, &QDoubleSpinBox::valueChanged, this, touched);
  connect(batch_, &QSpinBox::valueChanged, this, touched);
  connect(epochs_, &QSpinBox::valueChanged, this, touched);
  connect(maxSteps_, &QSpinBox::valueChanged, this, touched);
  connect(speedups_, &SpeedupsGroup::changed, this, touched);
  connect(speedups_, &SpeedupsGroup::tryRequested, this, &SetupPanel::tryRequested);
}

void SetupPanel::connectProbe() {
  connect(speedups_, &SpeedupsGroup::probeRequested, this, &SetupPanel::probeWorkers);
  connect(speedups_, &SpeedupsGroup::probeCancelRequested, this, &SetupPanel::cancelProbe);
  probe_ = new ProbeRunner(this);
  connect(probe_, &ProbeRunner::finished, this,
          [this](ProbeRunner::Outcome outcome, const QString& message) { onProbeFinished(int(outcome), message); });
  connect(probe_, &ProbeRunner::progress, this,
          [this](const QString& line) { speedups_->setProbing(true, QStringLiteral("Probing: ") + line); });
  // The stored probe is per experiment: re-read it once the data, model or batch settle.
  probeReload_ = new QTimer(this);
  probeReload_->setSingleShot(true);
  probeReload_->setInterval(300);
  connect(probeReload_, &QTimer::timeout, this, &SetupPanel::refreshProbe);
  connect(this, &SetupPanel::changed, probeReload_, qOverload<>(&QTimer::start));
}

// In a scrolling panel the wheel scrolls: a spin box or combo changes only once focused. A
// number typed outside a box's range is checked as typed (Run refused, the field named).
void SetupPanel::scrollSafeInputs() {
  for (QWidget* w : findChildren<QWidget*>()) {
    if (qobject_cast<QAbstractSpinBox*>(w) || qobject_cast<QComboBox*>(w)) {
      w->setFocusPolicy(Qt::StrongFocus);
      w->installEventFilter(this);
    }
    // The box's own editor: QSpinBox::textChanged stays silent while the text is out of range.
    auto* edit = qobject_cast<QAbstractSpinBox*>(w) ? w->findChild<QLineEdit*>() : nullptr;
    if (edit)
      connect(edit, &QLineEdit::textChanged, this, [this, w, edit] {
        if (w->hasFocus() || edit->hasFocus()) clamped_.remove(w->objectName());  // the user's own value now
        validate();
      });
  }
}

// A config field's box whose text is not a value it takes (typed "0" in Batch size): what it
// holds, the range it takes, and on leaving it, the value it went back to.
std::optional<FieldError> SetupPanel::typedOutOfRange(QAbstractSpinBox* box) const {
  if (!findFieldSpec(box->objectName().toStdString()) || !box->isEnabled() || box->hasAcceptableInput()) return std::nullopt;
  QString range, text;  // in the schema's words: "1..65536"
  if (auto* s = qobject_cast<QSpinBox*>(box)) {
    range = QStringLiteral("%1..%2").arg(s->minimum()).arg(s->maximum());
    text = s->cleanText();
  } else if (auto* d = qobject_cast<QDoubleSpinBox*>(box)) {
    range = QStringLiteral("%1..%2").arg(QString::number(d->minimum(), 'g', 6), QString::number(d->maximum(), 'g', 6));
    text = d->cleanText();
  }
  return FieldError{box->objectName().toStdString(), text.toStdString(), "must be a number in " + range.toStdString()};
}

void SetupPanel::noteRevert(QAbstractSpinBox* box) {
  auto e = typedOutOfRange(box);
  if (!e) return;
  // Qt puts the last good value back on leaving the box: say so, rather than change it silently.
  QString kept;
  if (auto* s = qobject_cast<QSpinBox*>(box)) kept = QString::number(s->value());
  else if (auto* d = qobject_cast<QDoubleSpinBox*>(box)) kept = QString::number(d->value(), 'g', 6);
  e->allowed += "; it went back to " + kept.toStdString();
  reverted_[box->objectName()] = *e;
}

// optim.lr_scaling (a combo from wb::lrScalingChoices, each value's help as its tooltip) and
// optim.lr_scaling_warmup, on one row beside the learning rate.
QWidget* SetupPanel::lrScalingRow(QWidget* parent) {
  auto* row = new QWidget(parent);
  auto* l = new QHBoxLayout(row);
  l->setContentsMargins(0, 0, 0, 0);
  lrScaling_ = new QComboBox(row);
  lrScaling_->setObjectName(QStringLiteral("optim.lr_scaling"));
  for (const Choice& c : lrScalingChoices()) {
    lrScaling_->addItem(QString::fromUtf8(c.label), QString::fromUtf8(c.value));
    lrScaling_->setItemData(lrScaling_->count() - 1, QString::fromUtf8(c.help), Qt::ToolTipRole);
  }
  lrScalingWarmup_ = new QDoubleSpinBox(row);
  lrScalingWarmup_->setObjectName(QStringLiteral("optim.lr_scaling_warmup"));
  lrScalingWarmup_->setDecimals(2);
  setSchemaRange(lrScalingWarmup_, "optim.lr_scaling_warmup");
  lrScalingWarmup_->setSingleStep(0.01);
  lrScalingWarmup_->setPrefix(QStringLiteral("scaled-lr warm-up "));
  lrScalingWarmup_->setToolTip(QStringLiteral("Share of the steps a scaled learning rate warms up over"));
  l->addWidget(lrScaling_, 1);
  l->addWidget(lrScalingWarmup_);
  auto followScaling = [this] { lrScalingWarmup_->setEnabled(lrScaling_->currentData().toString() != QLatin1String("none")); };
  connect(lrScaling_, &QComboBox::currentIndexChanged, this, followScaling);
  followScaling();
  return row;
}

QString SetupPanel::lrScaling() const { return lrScaling_->currentData().toString(); }

// A keystroke that takes a config field's box out of its range (the ninth 9 of Epochs) is one Qt
// drops, leaving 9999999 cut to what fits: the text is kept as typed instead, and validate()
// refuses it with the field and its range (typedOutOfRange). Text that is no number is Qt's.
bool SetupPanel::keepTypedNumber(QAbstractSpinBox* box, const QKeyEvent* key) {
  QLineEdit* edit = box->findChild<QLineEdit*>();
  if (!edit || !edit->validator() || key->text().isEmpty() || !key->text().at(0).isPrint() || !findFieldSpec(box->objectName().toStdString()))
    return false;
  QString text = edit->text();
  int cursor = edit->cursorPosition();
  if (edit->hasSelectedText()) {
    cursor = edit->selectionStart();
    text.remove(cursor, edit->selectedText().size());
  }
  text.insert(cursor, key->text());
  int pos = cursor + int(key->text().size());
  QString probe = text;
  if (edit->validator()->validate(probe, pos) != QValidator::Invalid) return false;
  QString number = text;
  if (auto* s = qobject_cast<QSpinBox*>(box)) number.remove(s->prefix()).remove(s->suffix());
  if (auto* d = qobject_cast<QDoubleSpinBox*>(box)) number.remove(d->prefix()).remove(d->suffix());
  bool isNumber = false;
  box->locale().toDouble(number.trimmed(), &isNumber);
  if (!isNumber) return false;
  edit->setText(text);  // setText is not validated: the typed number stands, refused by validate()
  edit->setCursorPosition(cursor + int(key->text().size()));
  return true;
}

bool SetupPanel::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::KeyPress)
    if (auto* box = qobject_cast<QAbstractSpinBox*>(watched); box && keepTypedNumber(box, static_cast<QKeyEvent*>(event))) return true;
  if (event->type() == QEvent::FocusOut)
    if (auto* box = qobject_cast<QAbstractSpinBox*>(watched)) noteRevert(box);
  if (event->type() == QEvent::FocusIn) reverted_.remove(watched->objectName());
  if (event->type() == QEvent::Wheel) {
    auto* w = qobject_cast<QWidget*>(watched);
    if (w && !w->hasFocus()) {
      event->ignore();  // handled here, not accepted: it travels on to the scroll area
      return true;
    }
  }
  return QWidget::eventFilter(watched, event);
}

QWidget* SetupPanel::section(const QString& title, QWidget* body) {
  auto* box = new QGroupBox(title, this);
  auto* l = new QVBoxLayout(box);
  l->setContentsMargins(6, 6, 6, 6);
  body->setParent(box);
  l->addWidget(body);
  if (auto* form = qobject_cast<QFormLayout*>(body->layout())) {
    form->setContentsMargins(0, 0, 0, 0);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  }
  return box;
}

void SetupPanel::addField(QFormLayout* form, const QString& label, const QString& path, QWidget* field) {
  field->setObjectName(path);
  form->addRow(label, field);
  form->addRow(QString(), errors_.makeLabel(path, form->parentWidget()));
}

void SetupPanel::onModelChanged() { modelForm_->setRowVisible(scriptRow_, model_->currentData().toString() == kTorchScript); }

void SetupPanel::onOptimChanged() {
  // Momentum is SGD's; warm-up applies to the schedules that have one.
  const bool sgd = optim_->currentData().toString() == QLatin1String("sgd");
  momentum_->setEnabled(sgd);
  momentum_->setToolTip(sgd ? QString() : QStringLiteral("Momentum applies to SGD only."));
  const QString sched = schedule_->currentData().toString();
  warmup_->setEnabled(sched == QLatin1String("cosine") || sched == QLatin1String("onecycle"));
  // LR scaling always applies once Devices > 1 (one device trains at optim.lr as given).
  const Choice* scaling = findChoice(lrScalingChoices(), lrScaling().toStdString());
  lrScaling_->setToolTip(QStringLiteral("How the learning rate follows the global batch: applies whenever Devices > 1 "
                                        "(with one device the lr is optim.lr as given). Run ladder uses it for the "
                                        "devices step (--lr-scaling). Now: %1.")
                             .arg(QString::fromUtf8(scaling ? scaling->help : "")));
  const bool scaled = lrScaling() != QLatin1String("none");
  lrScalingWarmup_->setEnabled(scaled);
  lrScalingWarmup_->setToolTip(scaled ? QStringLiteral("Share of the steps over which the scaled lr ramps up from "
                                                       "optim.lr (optim.lr_scaling_warmup)")
                                      : QStringLiteral("The warm-up of a scaled lr: set LR scaling to linear or square "
                                                       "root to use it"));
}

json SetupPanel::configJson() const {
  json doc = base_;
  setField(doc, QStringLiteral("name"), name_->text().toStdString());
  setField(doc, QStringLiteral("seed"), seed_->value());
  dataset_->writeTo(doc);
  const QString model = model_->currentData().toString();
  setField(doc, QStringLiteral("model.name"),
           (model == kTorchScript ? QStringLiteral("torchscript:") + scriptPath_->text().trimmed() : model).toStdString());
  setField(doc, QStringLiteral("optim.name"), optim_->currentData().toString().toStdString());
  setField(doc, QStringLiteral("optim.lr"), numberOrText(lr_->text()));
  setField(doc, QStringLiteral("optim.lr_scaling"), lrScaling().toStdString());
  setField(doc, QStringLiteral("optim.lr_scaling_warmup"), lrScalingWarmup_->value());
  setField(doc, QStringLiteral("optim.momentum"), momentum_->value());
  setField(doc, QStringLiteral("optim.weight_decay"), weightDecay_->value());
  setField(doc, QStringLiteral("optim.schedule"), schedule_->currentData().toString().toStdString());
  setField(doc, QStringLiteral("optim.warmup_fraction"), warmup_->value());
  setField(doc, QStringLiteral("train.batch_size"), batch_->value());
  setField(doc, QStringLiteral("train.epochs"), epochs_->value());
  setField(doc, QStringLiteral("train.max_steps"), maxSteps_->value());
  speedups_->writeTo(doc);
  return doc;
}

void SetupPanel::setConfigJson(const json& input) {
  // Fill missing fields from the defaults, keep the rest as given (an invalid value shows its error).
  json doc = proto::configToJson(Config{});
  if (input.is_object()) doc.merge_patch(input);
  doc.erase(proto::kCommandKey);  // not a config field: the Your script field holds it
  base_ = doc;
  reverted_.clear();
  {
    const QSignalBlocker b0(command_), b1(name_), b2(seed_), b3(model_), b4(scriptPath_), b5(optim_), b6(lr_), b7(momentum_),
        b8(weightDecay_), b9(schedule_), b10(warmup_), b11(batch_), b12(epochs_), b13(maxSteps_), b14(lrScaling_),
        b15(lrScalingWarmup_);
    name_->setText(fieldString(doc, QStringLiteral("name")));
    command_->setText(QString::fromStdString(proto::commandOf(input)));
    seed_->setValue(int(configNumber(doc, QStringLiteral("seed"))));
    const QString model = configString(doc, QStringLiteral("model.name"));
    if (model.startsWith(kTorchScript + QLatin1Char(':'))) {
      selectData(model_, kTorchScript);
      scriptPath_->setText(model.mid(kTorchScript.size() + 1));
    } else {
      selectData(model_, model);
      scriptPath_->clear();
    }
    selectData(optim_, configString(doc, QStringLiteral("optim.name")));
    const json lr = fieldValue(doc, QStringLiteral("optim.lr"));
    lr_->setText(lr.is_number() ? numberText(lr.get<double>()) : QString::fromStdString(lr.is_string() ? lr.get<std::string>() : ""));
    selectData(lrScaling_, configString(doc, QStringLiteral("optim.lr_scaling")));
    lrScalingWarmup_->setValue(configNumber(doc, QStringLiteral("optim.lr_scaling_warmup")));
    momentum_->setValue(configNumber(doc, QStringLiteral("optim.momentum")));
    weightDecay_->setValue(configNumber(doc, QStringLiteral("optim.weight_decay")));
    selectData(schedule_, configString(doc, QStringLiteral("optim.schedule")));
    warmup_->setValue(configNumber(doc, QStringLiteral("optim.warmup_fraction")));
    batch_->setValue(int(configNumber(doc, QStringLiteral("train.batch_size"))));
    epochs_->setValue(int(configNumber(doc, QStringLiteral("train.epochs"))));
    maxSteps_->setValue(int(configNumber(doc, QStringLiteral("train.max_steps"))));
  }
  dataset_->readFrom(doc);
  speedups_->readFrom(doc);
  // A box holds its range only: a document's value outside it stays refused until the field is edited.
  clamped_.clear();
  for (const FieldError& e : proto::configErrors(doc))
    if (findChild<QAbstractSpinBox*>(QString::fromStdString(e.path))) clamped_.insert(QString::fromStdString(e.path), e);
  onModelChanged();
  onOptimChanged();
  pristine_ = false;
  validate();
  Q_EMIT changed();
}

void SetupPanel::resetToDefaults() {
  setConfigJson(proto::configToJson(speedupsOff(Config{})));  // every speedup off, as the first baseline
  pristine_ = true;
}

void SetupPanel::setCapabilities(const json& caps) {
  if (caps.contains("models") && caps["models"].is_array()) {
    const QSignalBlocker block(model_);
    const QString current = model_->currentData().toString();
    for (const auto& m : caps["models"]) {
      if (!m.is_string()) continue;
      const QString name = QString::fromStdString(m.get<std::string>());
      if (model_->findData(name) < 0) model_->insertItem(model_->count() - 1, name, name);
    }
    selectData(model_, current);
  }
  caps_ = caps;
  speedups_->setCapabilities(caps);
  // The default experiment keeps Loader workers at 0: the first run, which becomes the baseline,
  // has every speedup off (as the ladder's baseline). A stored probe is offered, not applied.
  refreshProbe();
}

void SetupPanel::validate() {
  std::vector<FieldError> errors = proto::configErrors(configJson());
  if (const QString command = userCommand(); !command.isEmpty())
    if (auto fields = proto::commandFields(command.toStdString()); !fields.ok()) {
      std::string why = fields.error().message;
      if (why.rfind("--command: ", 0) == 0) why.erase(0, 11);
      errors.push_back({proto::kCommandKey, command.toStdString(), why});
    }
  // A folder kind chosen before its folder: the picker asks for one ("Pick a folder."), in place
  // of the config's raw message about an empty spec.
  const bool needsFolder = dataset_->needsFolder();
  if (needsFolder)
    errors.erase(std::remove_if(errors.begin(), errors.end(), [](const FieldError& e) { return e.path == "data.dataset"; }),
                 errors.end());
  for (QAbstractSpinBox* box : findChildren<QAbstractSpinBox*>())
    if (auto typed = typedOutOfRange(box)) errors.push_back(*typed);
  for (const FieldError& e : clamped_)
    if (std::none_of(errors.begin(), errors.end(), [&](const FieldError& o) { return o.path == e.path; })) errors.push_back(e);
  refusedCount_ = int(errors.size());
  std::vector<FieldError> shown = errors;
  for (const FieldError& note : reverted_) shown.push_back(note);  // said, not refused: the box holds a good value
  errors_.show(shown);
  showCaveats();
  revealFocusedError();
  // Invalid fields, a folder still to pick, or a dataset its check found unusable: a run would fail.
  const bool valid = errors.empty() && !needsFolder && !dataset_->refused();
  if (valid != valid_) {
    valid_ = valid;
    Q_EMIT validityChanged(valid);
  }
}

QString SetupPanel::whyNotValid() const {
  if (valid_) return {};
  if (const QStringList shown = errors_.shown().mid(0, refusedCount_); !shown.isEmpty())  // not the notes after them
    return QStringLiteral("Fix %1").arg(shown.first()) +
           (shown.size() > 1 ? QStringLiteral("\n(and %1 more marked in red)").arg(shown.size() - 1) : QString());
  if (dataset_->needsFolder()) return QStringLiteral("Pick the dataset folder first.");
  return dataset_->refusal();
}

// Each speedup's warning for this experiment under its row (early stopping that cannot stop it:
// too few evaluations for its patience), as the ladder says for its step.
void SetupPanel::showCaveats() {
  Config c = proto::configAsWritten(configJson());
  c.train.epochs = epochs_->value();
  for (const Speedup& s : speedupTable())
    if (s.control.caveat) speedups_->setCaveat(QString::fromUtf8(s.key), QString::fromStdString(s.control.caveat(c)));
}

// An error that appears under the field being edited is scrolled into view (it may sit below
// the scroll area's edge).
void SetupPanel::revealFocusedError() {
  QWidget* focus = window()->focusWidget();  // the field being edited (also while the window is inactive)
  if (!focus || !isAncestorOf(focus)) return;
  QLabel* label = nullptr;
  for (QWidget* w = focus; w && w != this && !label; w = w->parentWidget())
    label = errors_.visibleLabel(w->objectName());
  if (!label) return;
  for (QWidget* p = parentWidget(); p; p = p->parentWidget())
    if (auto* scroll = qobject_cast<QScrollArea*>(p)) {
      QTimer::singleShot(0, scroll, [scroll, label = QPointer<QLabel>(label)] {
        if (!label) return;
        for (int i = 0; i < 4; ++i) QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);  // where it lands now
        scroll->ensureWidgetVisible(label, 8, 16);
      });
      return;
    }
}

void SetupPanel::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) errors_.updateColors();
}

}  // namespace wb::ui
