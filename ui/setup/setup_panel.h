#pragma once
// The experiment set-up: name and seed, dataset, model, optimiser and schedule, training length,
// and the speedups group. Produces the config JSON the CLI takes (the same file the window opens
// and saves); fields no widget owns are kept from the last document read. Every change is
// checked with wb::proto::configErrors and each message is shown word for word under its field;
// isValid() is false while any is shown (the window refuses to run it).
//
// Widget object names are the config paths ("optim.lr"); error labels are "error:<path>".
// Thread affinity: GUI thread.
#include <QWidget>

#include <nlohmann/json.hpp>

#include "setup/field_errors.h"

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
class SpeedupsGroup;

class SetupPanel : public QWidget {
  Q_OBJECT
 public:
  explicit SetupPanel(QWidget* parent = nullptr);

  // What the widgets say now, over the last document read (may be invalid: see isValid()).
  nlohmann::json configJson() const;
  // Fills the widgets (missing fields take the defaults) and re-validates.
  void setConfigJson(const nlohmann::json& doc);
  // The default experiment (wb::Config{}), with the machine's suggested loader workers.
  void resetToDefaults();

  bool isValid() const { return valid_; }
  QStringList errorsShown() const { return errors_.shown(); }

  void setCapabilities(const nlohmann::json& caps);
  void setCapabilitiesError(const QString& error);
  // Asks `workbench-cli capabilities --json` (async) and applies the answer.
  void queryCapabilities();
  void setDatasetFolder(const QString& dir);

  SpeedupsGroup* speedups() const { return speedups_; }
  DatasetPicker* dataset() const { return dataset_; }

 Q_SIGNALS:
  void changed();
  void validityChanged(bool valid);

 private:
  QWidget* section(const QString& title, QWidget* body);
  void addField(QFormLayout* form, const QString& label, const QString& path, QWidget* field);
  void onModelChanged();
  void onOptimChanged();
  void validate();
  void changeEvent(QEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

  nlohmann::json base_;
  FieldErrors errors_;
  bool valid_ = true;
  bool pristine_ = true;  // untouched default experiment: capabilities may tune it
  QLineEdit* name_;
  QSpinBox* seed_;
  DatasetPicker* dataset_;
  QComboBox* model_;
  QWidget* scriptRow_;
  QFormLayout* modelForm_;
  QLineEdit* scriptPath_;
  QComboBox* optim_;
  QLineEdit* lr_;
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
