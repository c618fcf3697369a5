#pragma once
// Dataset choice: the built-in Fashion-MNIST or a folder (ImageFolder / IDX / CIFAR-10 binary),
// picked, typed or dropped; checked as you pick with `workbench-cli dataset inspect SPEC --json`
// (classes and image counts found, problems named), without blocking the window.
// Owns data.dataset, data.limit_train and data.limit_val.
//
// Thread affinity: GUI thread.
#include <QPointer>
#include <QTimer>
#include <QWidget>

#include <nlohmann/json.hpp>

class QComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace wb::ui {

class CliQuery;
class FieldErrors;

// Which spec prefix a folder needs ("idx", "cifar10" or "folder"); *dir may be moved into the
// folder that holds the files (a CIFAR download's cifar-10-batches-bin/).
QString detectDatasetKind(QString* dir);

class DatasetPicker : public QWidget {
  Q_OBJECT
 public:
  DatasetPicker(FieldErrors* errors, QWidget* parent = nullptr);
  ~DatasetPicker() override;

  void readFrom(const nlohmann::json& doc);
  void writeTo(nlohmann::json& doc) const;
  // Uses this folder, with the kind its files say.
  void setFolder(const QString& dir);
  // data.dataset as the widgets say it ("fashion-mnist", "folder:/x", ...).
  QString spec() const;
  // The result of the last check ("" while checking).
  QString checkText() const;
  // Check state: -1 checking/unknown, 0 problems, 1 fine.
  int checkState() const { return checkState_; }
  // The last check read the dataset and found it unusable (a missing folder, no images): a run
  // on it would fail. False while checking, when fine, or when the check itself could not run.
  bool refused() const { return checkState_ == 0 && refused_; }
  // A folder kind is chosen but no folder given yet.
  bool needsFolder() const;

 Q_SIGNALS:
  void changed();
  void checkFinished(bool ok);

 private:
  void onKindChanged();
  void browse();
  void scheduleCheck();
  void runCheck();
  void showCheck(const nlohmann::json& doc, const QString& error);

  FieldErrors* errors_;
  void setPathVisible(bool visible);

  QFormLayout* form_;
  QComboBox* kind_;
  QWidget* pathRow_;
  QLineEdit* path_;
  QPushButton* browse_;
  QLabel* check_;
  QSpinBox* limitTrain_;
  QSpinBox* limitVal_;
  QTimer checkSoon_;
  QPointer<CliQuery> query_;
  QString checkedSpec_;
  int checkState_ = -1;
  bool refused_ = false;
};

}  // namespace wb::ui
