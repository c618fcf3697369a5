#pragma once
// Dataset choice: the built-in Fashion-MNIST or a folder (ImageFolder / IDX / CIFAR-10 binary),
// picked, typed or dropped; checked as you pick with `workbench-cli dataset inspect SPEC --json`
// (classes and image counts found, problems named), without blocking the window.
// Owns data.dataset, data.val_fraction, data.limit_train and data.limit_val. A folder without a
// test split gets 10 % of its train images held out for validation, said under the field; with
// none held out it is refused (a run on it would fail).
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
  bool refused() const { return (checkState_ == 0 && refused_) || !holdOutProblem().isEmpty(); }
  // Why the data set-up would fail, in words ("" when it would not, or is not known yet).
  QString refusal() const;
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
  QString checkKey() const;
  void showCheck(const nlohmann::json& doc, const QString& error);
  void takeSplits(const nlohmann::json& doc);
  QString holdOutProblem() const;
  void showHoldOut();

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
  QSpinBox* holdOut_;  // data.val_fraction, in percent
  QLabel* holdOutNote_;
  int testSplit_ = -1;       // the checked dataset has a test split: -1 not known, 0 no, 1 yes
  long long trainSize_ = 0;  // its train images (0: not known)
  bool holdOutByUs_ = false;  // the hold-out was set for a folder without a test split
  QTimer checkSoon_;
  QPointer<CliQuery> query_;
  QString checkedSpec_;       // the spec and allowed share the last check was asked for
  double maxBadFraction_ = -1;  // data.max_bad_fraction of the document read (-1: the CLI's default)
  int checkState_ = -1;
  QString refusalText_;  // why the last check refused the dataset
  bool refused_ = false;
};

}  // namespace wb::ui
