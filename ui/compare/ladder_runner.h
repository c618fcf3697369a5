#pragma once
// Runs `workbench-cli ladder` as one child process (the window never links the trainer): reads
// its stderr line by line for progress, learns the output folder from its "ladder -> DIR" line,
// and ends in exactly one of succeeded / failed / cancelled. cancel() sends SIGTERM (the ladder
// stops its current run and writes the tables so far), then kills after a grace period; the
// destructor never leaves the child running.
//
// Thread affinity: GUI thread.
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTimer>

namespace wb::ui {

class LadderRunner : public QObject {
  Q_OBJECT
 public:
  explicit LadderRunner(QObject* parent = nullptr);
  ~LadderRunner() override;

  // arguments: after "ladder" (e.g. --config F --out DIR). program: workbench-cli's path.
  void start(const QString& program, const QStringList& arguments);
  void cancel();
  bool isRunning() const { return process_.state() != QProcess::NotRunning; }
  const QString& outDir() const { return outDir_; }

  static constexpr int kKillGraceMs = 15000;

 Q_SIGNALS:
  void progress(const QString& line);
  // outDir may be empty when the ladder failed before creating it. error: in words, empty on success.
  void finished(const QString& outDir, bool cancelled, const QString& error);

 private:
  void readStderr();
  void onFinished(int exitCode, QProcess::ExitStatus status);

  QProcess process_;
  QTimer killTimer_;
  QByteArray pending_;
  QString outDir_;
  QString lastLine_;
  bool cancelled_ = false;
};

}  // namespace wb::ui
