#pragma once
// Finding and asking workbench-cli: where it is, and short JSON queries run asynchronously
// (capabilities, dataset inspect, --version). The window never blocks on the CLI.
//
// Thread affinity: GUI thread. A CliQuery deletes itself after done() or cancel(); destroying it
// earlier (e.g. with its parent) kills the child.
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTimer>

#include <functional>

#include <nlohmann/json.hpp>

namespace wb::ui {

// workbench-cli's path: $WB_CLI, else beside this executable, else the build tree
// (<build>/app/cli/), else PATH. Returns the name "workbench-cli" when nothing is found (starting
// it then fails with a message that says so).
QString locateCli();

// One `workbench-cli <args>` run whose stdout is read at the end.
class CliQuery : public QObject {
  Q_OBJECT
 public:
  // parseJson: stdout is one JSON document (parsed into done()'s json). timeoutMs: killed after.
  CliQuery(QString program, QStringList arguments, bool parseJson, int timeoutMs = 60000,
           QObject* parent = nullptr);
  ~CliQuery() override;
  void start();
  // Stops listening (no done() follows), kills the child and deletes this query later.
  void cancel();

  // Convenience: a query parented to context (so it dies with it) that calls fn(json, text,
  // error) when done. error is empty on success.
  using Callback = std::function<void(const nlohmann::json& doc, const QString& text, const QString& error)>;
  static CliQuery* run(QObject* context, const QStringList& arguments, bool parseJson, Callback fn,
                       int timeoutMs = 60000);

 Q_SIGNALS:
  // doc: parsed stdout (null when not JSON or not asked); text: stdout as text; error: what went
  // wrong in words (empty when the command succeeded, or when it exited non-zero but printed
  // valid JSON — `dataset inspect` reports problems that way).
  void done(const nlohmann::json& doc, const QString& text, const QString& error);

 private:
  void finish(const QString& error);
  void killChild();

  QString program_;
  QStringList arguments_;
  bool parseJson_;
  QProcess process_;
  QTimer timeout_;
  bool finished_ = false;
};

}  // namespace wb::ui
