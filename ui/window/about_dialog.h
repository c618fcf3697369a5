#pragma once
// Help → About: the versions in use. Qt's from qVersion(); LibTorch, CUDA (and its GPUs), NCCL,
// Gloo and OpenCV from `workbench-cli --version` and `capabilities --json` (asked
// asynchronously, so the box and the CLI always agree: the --version line is shown as the CLI
// prints it).
//
// Thread affinity: GUI thread.
#include <QDialog>

#include <nlohmann/json.hpp>

class QLabel;

namespace wb::ui {

class AboutDialog : public QDialog {
  Q_OBJECT
 public:
  explicit AboutDialog(QWidget* parent = nullptr);
  // Starts the CLI queries (the dialog fills in as they answer).
  void query();
  // The text shown now (tests).
  QString versionsText() const;
  void setCliVersion(const QString& line, const QString& error);
  void setCapabilities(const nlohmann::json& caps, const QString& error);
  // The keys of the capabilities document the box reads (each one the CLI writes).
  static QStringList capabilityKeys();

 Q_SIGNALS:
  void versionsUpdated();

 private:
  void render();

  QLabel* body_;
  QString cliLine_ = QStringLiteral("asking workbench-cli…");
  QStringList libs_;
};

}  // namespace wb::ui
