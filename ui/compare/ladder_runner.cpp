#include "compare/ladder_runner.h"

#include "runs/run_process.h"
#include "wb/proto/events.h"

namespace wb::ui {
using nlohmann::json;

namespace {
QString str(const json& ev, const char* key) { return QString::fromStdString(proto::stringOr(ev, key, {})); }
}  // namespace

LadderRunner::LadderRunner(QObject* parent) : QObject(parent) {}

LadderRunner::~LadderRunner() = default;  // RunProcess kills a ladder still running

bool LadderRunner::isRunning() const { return process_ && !process_->isFinished(); }

void LadderRunner::start(const QString& program, const QStringList& arguments) {
  if (isRunning()) return;
  if (process_) process_->deleteLater();
  outDir_.clear();
  rungsEnded_.clear();
  failedRung_.clear();
  endStatus_.clear();
  plan_ = nullptr;
  arguments_ = QStringList{QStringLiteral("ladder"), QStringLiteral("--events-stdout")} + arguments;
  process_ = new RunProcess(this);
  connect(process_, &RunProcess::eventReceived, this, &LadderRunner::onEvent);
  connect(process_, &RunProcess::finished, this,
          [this](RunProcess::Outcome outcome, const QString& status, const QString& message) {
            onFinished(int(outcome), status, message);
          });
  process_->start(program, arguments_);
}

void LadderRunner::cancel() {
  if (isRunning()) process_->stop();
}

void LadderRunner::onEvent(const json& ev) {
  const std::string type = proto::stringOr(ev, "type", {});
  if (type == "ladder") {
    outDir_ = str(ev, "out_dir");
    plan_ = ev.value("steps", json());
    Q_EMIT progress(QStringLiteral("writing into %1").arg(outDir_));
  } else if (type == "rung_start") {
    Q_EMIT progress(QStringLiteral("[%1/%2] %3: %4")
                        .arg(proto::intOr(ev, "index", 0) + 1)
                        .arg(proto::intOr(ev, "steps", 0))
                        .arg(str(ev, "key"), str(ev, "added")));
  } else if (type == "rung_end") {
    const QString status = str(ev, "status");
    QString line = QStringLiteral("%1: %2").arg(str(ev, "key"), status);
    rungsEnded_ << line;
    if (const QString error = str(ev, "error"); !error.isEmpty()) line += QStringLiteral(" (") + error + QLatin1Char(')');
    if (status != QLatin1String(proto::kStatusOk) && status != QLatin1String(proto::kStatusEarlyStopped)) failedRung_ = line;
    Q_EMIT progress(line);
  } else if (type == "warning") {
    Q_EMIT progress(str(ev, "message"));
  } else if (type == "end") {
    endStatus_ = str(ev, "status");
    if (outDir_.isEmpty()) outDir_ = str(ev, "out_dir");
  }
}

void LadderRunner::onFinished(int outcome, const QString& status, const QString& message) {
  Q_UNUSED(status);
  const auto o = RunProcess::Outcome(outcome);
  QString error;
  if (o == RunProcess::Outcome::Failed) {
    error = endStatus_ == QLatin1String(proto::kStatusFailed) && !failedRung_.isEmpty()
                ? QStringLiteral("A ladder step failed: ") + failedRung_
                : message;
  }
  Q_EMIT finished(outDir_, o == RunProcess::Outcome::Cancelled, error);
}

}  // namespace wb::ui
