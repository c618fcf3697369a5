#include "runs/cli.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QPointer>
#include <QStandardPaths>

#include "runs/run_process.h"

namespace wb::ui {

namespace {
bool isExecutable(const QString& path) {
  QFileInfo fi(path);
  return fi.isFile() && fi.isExecutable();
}
}  // namespace

QString locateCli() {
  const QString env = qEnvironmentVariable("WB_CLI");
  if (!env.isEmpty()) return env;
  const QString name = QStringLiteral("workbench-cli");
  const QString appDir = QCoreApplication::applicationDirPath();
  const QStringList candidates = {
      appDir + QLatin1Char('/') + name,                                // installed side by side
      QDir::cleanPath(appDir + QStringLiteral("/../cli/") + name),     // build tree: app/gui -> app/cli
      QString::fromUtf8(WB_BUILD_TREE_CLI),                            // tests, bench: this build
  };
  for (const auto& c : candidates)
    if (isExecutable(c)) return c;
  const QString onPath = QStandardPaths::findExecutable(name);
  return onPath.isEmpty() ? name : onPath;
}

CliQuery::CliQuery(QString program, QStringList arguments, bool parseJson, int timeoutMs, QObject* parent)
    : QObject(parent), program_(std::move(program)), arguments_(std::move(arguments)), parseJson_(parseJson) {
  timeout_.setSingleShot(true);
  timeout_.setInterval(timeoutMs);
  connect(&timeout_, &QTimer::timeout, this, [this] {
    process_.kill();
    finish(QStringLiteral("%1 %2 did not answer within %3 s.")
               .arg(QFileInfo(program_).fileName(), arguments_.join(QLatin1Char(' ')))
               .arg(timeout_.interval() / 1000));
  });
  connect(&process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
    if (e == QProcess::FailedToStart) finish(RunProcess::describeError(e, program_, process_.errorString()));
  });
  connect(&process_, &QProcess::finished, this, [this](int code, QProcess::ExitStatus st) {
    if (st == QProcess::CrashExit) {
      finish(RunProcess::describeError(QProcess::Crashed, QFileInfo(program_).fileName(), {}));
      return;
    }
    if (code == 0) {
      finish({});
      return;
    }
    QString err = QString::fromUtf8(process_.readAllStandardError()).trimmed();
    if (err.isEmpty()) err = QStringLiteral("exit code %1").arg(code);
    finish(QStringLiteral("%1 %2: %3").arg(QFileInfo(program_).fileName(), arguments_.value(0), err));
  });
}

CliQuery::~CliQuery() { killChild(); }

void CliQuery::start() {
  timeout_.start();
  process_.start(program_, arguments_, QIODevice::ReadOnly);
}

void CliQuery::cancel() {
  killChild();
  deleteLater();
}

void CliQuery::killChild() {
  finished_ = true;
  timeout_.stop();
  if (process_.state() != QProcess::NotRunning) {
    process_.kill();
    process_.waitForFinished(2000);
  }
}

void CliQuery::finish(const QString& error) {
  if (finished_) return;
  finished_ = true;
  timeout_.stop();
  const QByteArray out = process_.readAllStandardOutput();
  const QString text = QString::fromUtf8(out);
  nlohmann::json doc;
  QString why = error;
  if (parseJson_) {
    doc = nlohmann::json::parse(out.constData(), out.constData() + out.size(), nullptr, false);
    if (doc.is_discarded()) {
      doc = nullptr;
      if (why.isEmpty()) why = QStringLiteral("%1 %2 printed no JSON.").arg(QFileInfo(program_).fileName(), arguments_.value(0));
    } else if (doc.is_object()) {
      why.clear();  // a JSON answer speaks for itself (e.g. dataset inspect: ok=false, problems)
    }
  }
  Q_EMIT done(doc, text, why);
  deleteLater();
}

CliQuery* CliQuery::run(QObject* context, const QStringList& arguments, bool parseJson, Callback fn, int timeoutMs) {
  auto* q = new CliQuery(locateCli(), arguments, parseJson, timeoutMs, context);
  QPointer<QObject> guard(context);
  connect(q, &CliQuery::done, context, [guard, fn](const nlohmann::json& doc, const QString& text, const QString& err) {
    if (guard) fn(doc, text, err);
  });
  q->start();
  return q;
}

}  // namespace wb::ui
