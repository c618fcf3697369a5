#pragma once
// The experiment set-up: name and seed, dataset, model, optimiser and schedule, training length,
// and the speedups group. Produces the config JSON the CLI takes (the same file the window opens
// and saves); fields no widget owns are kept from the last document read. Every change is
// checked with wb::proto::configErrors and each message is shown word for word under its field;
// isValid() is false while any is shown (the window refuses to run it).
//
// The speedups come first (the product: what the workbench measures), each with what it measured
// on this machine: the newest ladder under the runs root and the stored worker probe for this
// experiment (refreshMeasured). Probe runs `workbench-cli probe workers --json` as a child
// process on the current set-up (ProbeRunner) and fills Loader workers with its recommendation;
// while it runs the button cancels it.
//
// Widget object names are the config paths ("optim.lr"); error labels are "error:<path>".
// Thread affinity: GUI thread.
#include <QTimer>
#include <QWidget>

#include <QHash>

#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "setup/field_errors.h"
#include "wb/ladder/speedup_effects.h"

class QAbstractSpinBox;
class QKeyEvent;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QWidget;

namespace wb::ui {

class DatasetPicker;
class ProbeRunner;
class SpeedupsGroup;

class SetupPanel : public QWidget {
  Q_OBJECT
 public:
  explicit SetupPanel(QWidget* parent = nullptr);

  // What the widgets say now, over the last document read (may be invalid: see isValid()).
  nlohmann::json configJson() const;
  // Fills the widgets (missing fields take the defaults) and re-validates. An experiment's
  // "command" (wb/proto/config_json.h kCommandKey) fills the Your script field.
  void setConfigJson(const nlohmann::json& doc);
  // The user's own training command ("" : the workbench's trainer), and a config document with
  // it as the CLI reads it (`run/try --config` run that command).
  QString userCommand() const;
  nlohmann::json withUserCommand(nlohmann::json config) const;
  // The default experiment (wb::Config{}), with the machine's suggested loader workers.
  void resetToDefaults();

  bool isValid() const { return valid_; }
  // Why Run is refused, in words ("" when valid): the fields, the folder to pick, the dataset.
  QString whyNotValid() const;
  QStringList errorsShown() const { return errors_.shown(); }

  void setCapabilities(const nlohmann::json& caps);
  void setCapabilitiesError(const QString& error);
  // Asks `workbench-cli capabilities --json` (async) and applies the answer.
  void queryCapabilities();
  void setDatasetFolder(const QString& dir);

  // The capabilities last applied (with the stored probe attached as speedups.workers.probe,
  // for wb::ladder::withOneSpeedup and the ladder); an empty object before the answer.
  nlohmann::json capabilities() const;
  // Where ladders are looked for (besides wb::defaultRunsRoot()); re-reads the measurements.
  void setRunsRoot(const QString& root);
  // Re-reads the newest ladder and the stored probe for the current experiment.
  void refreshMeasured();
  // Runs the worker probe on the current set-up (what the Probe button does; while it runs the
  // button is Cancel: cancelProbe, which leaves the probe stored before it as it was).
  void probeWorkers();
  void cancelProbe();
  bool isProbing() const;
  ProbeRunner* probeRunner() const { return probe_; }
  // Seconds per candidate the probe is asked for (0: the CLI's default, 3 s).
  void setProbeSeconds(double seconds) { probeSeconds_ = seconds; }

  // optim.lr_scaling as set here ("none" | "linear" | "sqrt"): what the window's Run ladder
  // passes as --lr-scaling.
  QString lrScaling() const;

  SpeedupsGroup* speedups() const { return speedups_; }
  DatasetPicker* dataset() const { return dataset_; }

 Q_SIGNALS:
  void changed();
  void validityChanged(bool valid);
  // "Try vs baseline" on a speedup row (key: "workers", "precision", …).
  void tryRequested(const QString& key);
  // A probe ended: its result was stored (ok) or the reason it was not.
  void probeFinished(bool ok, const QString& message);

 private:
  QWidget* section(const QString& title, QWidget* body);
  void addField(QFormLayout* form, const QString& label, const QString& path, QWidget* field);
  void onModelChanged();
  void onOptimChanged();
  QWidget* lrScalingRow(QWidget* parent);
  QWidget* experimentBody();
  QWidget* modelBody();
  QWidget* scriptFileRow(QWidget* parent);
  void addOptimiserNumbers(QFormLayout* form, QWidget* body);
  QWidget* trainingBody();
  void connectFields();
  void connectProbe();
  void scrollSafeInputs();
  std::optional<FieldError> typedOutOfRange(QAbstractSpinBox* box) const;
  void noteRevert(QAbstractSpinBox* box);
  bool keepTypedNumber(QAbstractSpinBox* box, const QKeyEvent* key);
  void validate();
  void showCaveats();
  void revealFocusedError();
  void changeEvent(QEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

  void refreshProbe();
  void onProbeFinished(int outcome, const QString& message);

  nlohmann::json base_;
  nlohmann::json caps_ = nlohmann::json::object();
  QString runsRoot_;
  std::map<std::string, ladder::SpeedupEffect> ladderEffects_;
  std::map<std::string, ladder::SpeedupEffect> tryEffects_;  // the newest try of each speedup
  QString ladderSource_;
  double probeSeconds_ = 0;
  QTimer* probeReload_;
  ProbeRunner* probe_;
  FieldErrors errors_;
  QHash<QString, FieldError> reverted_;  // a box left with a value it does not take, by path
  QHash<QString, FieldError> clamped_;   // a document's value outside its box's range, by path
  int refusedCount_ = 0;                 // of the messages shown, those that refuse Run (the notes follow)
  bool valid_ = true;
  bool pristine_ = true;  // untouched default experiment: capabilities may tune it
  QLineEdit* name_;
  QSpinBox* seed_;
  QLineEdit* command_;
  DatasetPicker* dataset_;
  QComboBox* model_;
  QWidget* scriptRow_;
  QFormLayout* modelForm_;
  QLineEdit* scriptPath_;
  QComboBox* optim_;
  QLineEdit* lr_;
  QComboBox* lrScaling_;
  QDoubleSpinBox* lrScalingWarmup_;
  QDoubleSpinBox* momentum_;
  QDoubleSpinBox* weightDecay_;
  QComboBox* schedule_;
  QDoubleSpinBox* warmup_;
  QSpinBox* epochs_;
  QSpinBox* maxSteps_;
  QSpinBox* batch_;
  SpeedupsGroup* speedups_;
  QLabel* general_;
};

}  // namespace wb::ui
