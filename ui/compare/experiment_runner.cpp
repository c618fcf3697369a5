#include "compare/experiment_runner.h"

#include <algorithm>

#include <QFile>
#include <QFileInfo>

#include "runs/run_process.h"
#include "wb/proto/event_types.h"
#include "wb/proto/experiment_events.h"
#include "wb/proto/events.h"
#include "wb/stats/estimate_json.h"
#include "wb/render/table.h"

namespace wb::ui {
using nlohmann::json;

bool CutExperiment::continues(const CutExperiment& asked) const {
  return !dir.isEmpty() && QFileInfo(dir).isDir() && args == asked.args && config == asked.config;
}

QStringList stepNumbers(const json& plan) {
  QStringList out;
  int index = 0;
  for (const auto& step : plan.is_array() ? plan : json::array()) {
    const std::string key = proto::stringOr(step, "key", {});
    out << (proto::boolOr(step, "isolated", false) ? QStringLiteral("alone")
            : key == "kept"                          ? QStringLiteral("kept")
                                                     : QString::number(index++));
  }
  return out;
}

QByteArray readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

namespace {

// Whether `key` names a step of the plan other than its reference (a part's short trials run a
// "baseline" and a "variant" of their own).
bool isPlanStep(const json& plan, const std::string& key) {
  if (!plan.is_array() || key == "baseline") return false;
  return std::any_of(plan.begin(), plan.end(), [&](const json& step) { return step.value("key", std::string()) == key; });
}

}  // namespace

ExperimentRunner::ExperimentRunner(QObject* parent, const QString& command) : QObject(parent), command_(command) {}

ExperimentRunner::~ExperimentRunner() = default;  // RunProcess kills a ladder still running

bool ExperimentRunner::isRunning() const { return process_ && !process_->isFinished(); }

void ExperimentRunner::start(const QString& program, const QStringList& arguments) {
  if (isRunning()) return;
  if (process_) process_->deleteLater();
  outDir_.clear();
  rungsEnded_.clear();
  failedRung_.clear();
  endStatus_.clear();
  plan_ = nullptr;
  result_ = nullptr;
  settled_.clear();
  pairsSoFar_.clear();
  phase_.clear();
  trialsDone_ = 0;
  clock_.start();
  arguments_ = QStringList{command_, QStringLiteral("--events-stdout")} + arguments;
  process_ = new RunProcess(this);
  connect(process_, &RunProcess::eventReceived, this, &ExperimentRunner::onEvent);
  connect(process_, &RunProcess::finished, this,
          [this](RunProcess::Outcome outcome, const QString& status, const QString& message) {
            onFinished(int(outcome), status, message);
          });
  process_->start(program, arguments_);
}

int ExperimentRunner::stepsPlanned() const { return plan_.is_array() ? int(plan_.size()) : 0; }

int ExperimentRunner::stepsDone() const {
  if (endStatus_ == QLatin1String(proto::kStatusOk)) return stepsPlanned();  // a step with no pair of its own (the kept one) too
  int done = 0, reference = 0;
  if (plan_.is_array())
    for (const auto& step : plan_) {
      const std::string key = step.value("key", std::string());
      if (key == "baseline") ++reference;  // the reference: done with the last variant
      else done += step.value("skipped", false) || settled_.contains(QString::fromStdString(key));
    }
  return done + (done + reference == stepsPlanned() ? reference : 0);
}

QString ExperimentRunner::elapsedText() const {
  const qint64 s = clock_.isValid() ? clock_.elapsed() / 1000 : 0;
  return s >= 60 ? QStringLiteral("%1 min %2 s").arg(s / 60).arg(s % 60) : QStringLiteral("%1 s").arg(s);
}

QString ExperimentRunner::progressText() const {
  if (command_ == QLatin1String(wb::kinds::kTune)) return QStringLiteral("%1 trial(s) done · %2").arg(trialsDone_).arg(elapsedText());
  return QStringLiteral("%1/%2 steps done · %3").arg(stepsDone()).arg(stepsPlanned()).arg(elapsedText());
}

void ExperimentRunner::cancel() {
  if (isRunning()) process_->stop();
}

void ExperimentRunner::onEvent(const json& ev) {
  const auto qs = [](const std::string& s) { return QString::fromStdString(s); };
  const std::string type = proto::stringOr(ev, "type", {});
  if (type == proto::LadderEvent::kType) {
    const proto::LadderEvent ladder = proto::readLadderEvent(ev);
    outDir_ = qs(ladder.out_dir);
    plan_ = ladder.steps;
    Q_EMIT progress(QStringLiteral("writing into %1").arg(outDir_));
    Q_EMIT planned(outDir_);
  } else if (type == proto::PhaseEvent::kType) {
    const proto::PhaseEvent p = proto::readPhaseEvent(ev);
    phase_ = qs(p.phase);
    if (p.kept) phase_ += QStringLiteral(" (kept from before)");
    else if (p.total > 0) phase_ += QStringLiteral(": %1 of %2 done").arg(p.done).arg(p.total);
    Q_EMIT progress(phase_);
  } else if (type == proto::RungStartEvent::kType) {
    const proto::RungStartEvent rung = proto::readRungStartEvent(ev);
    if (isPlanStep(plan_, rung.key)) phase_.clear();  // a step of the plan begins: its parts come next
    // A step by the number its table gives it and what it adds (its key is no word for people).
    const QString number = stepNumbers(plan_).value(int(rung.index));
    Q_EMIT progress(number.isEmpty() ? qs(rung.added) : QStringLiteral("step %1: %2").arg(number, qs(rung.added)));
    Q_EMIT rungStarted(int(rung.index), int(rung.steps), qs(rung.key), qs(rung.run_dir));
  } else if (type == proto::RungEndEvent::kType) {
    const proto::RungEndEvent rung = proto::readRungEndEvent(ev);
    const QString status = qs(rung.status);
    QString line = QStringLiteral("%1: %2").arg(qs(rung.key), status);
    rungsEnded_ << line;
    if (rung.error && !rung.error->empty()) line += QStringLiteral(" (") + qs(*rung.error) + QLatin1Char(')');
    if (status != QLatin1String(proto::kStatusOk) && status != QLatin1String(proto::kStatusEarlyStopped)) failedRung_ = line;
    if (rung.run_dir.empty()) {  // a step by parts: one rung, no run folder, then done
      settled_.insert(qs(rung.key));
      phase_.clear();
    }
    Q_EMIT progress(line);
    Q_EMIT rungEnded(int(rung.index), qs(rung.key), qs(rung.run_dir), status);
  } else if (type == proto::PairEndEvent::kType) {
    const proto::PairEndEvent pair = proto::readPairEndEvent(ev);
    if (!phase_.isEmpty()) {  // a pair of short trials inside a part: no estimate of the step
      Q_EMIT progress(QStringLiteral("%1, pair %2").arg(phase_).arg(pair.pair));
      return;
    }
    if (!pair.settled.empty()) settled_.insert(qs(pair.key));
    const json wall = pair.estimate.value("wall", json::object());
    pairsSoFar_ = QStringLiteral("%1 pair(s): %2 on wall time%3")
                      .arg(pair.pair)
                      .arg(qs(stats::formatEstimate(stats::estimateFromJson(wall))))
                      .arg(pair.settled.empty() ? QString() : QStringLiteral(" (") + qs(pair.settled) + QLatin1Char(')'));
    Q_EMIT progress(QStringLiteral("%1 after %2").arg(qs(pair.key), pairsSoFar_));
  } else if (type == "tune") {  // `tune`: where it writes; then a trial_end per cheap trial
    outDir_ = qs(proto::stringOr(ev, "out_dir", {}));
    Q_EMIT progress(QStringLiteral("writing into %1").arg(outDir_));
    Q_EMIT planned(outDir_);
  } else if (type == "trial_end") {
    const json& t = ev.contains("trial") ? ev["trial"] : json::object();
    const double epoch = proto::numberOr(t, "epoch_s", -1), left = proto::numberOr(ev, "left_s", -1);
    ++trialsDone_;
    QString line = QStringLiteral("trial %1 (%2): %3").arg(qs(proto::stringOr(t, "candidate", {})), qs(proto::stringOr(ev, "label", {})),
                                                         epoch > 0 ? QStringLiteral("est. epoch ") + qs(wb::fmtSeconds(epoch))
                                                                   : qs(proto::stringOr(t, "status", {})));
    if (left >= 0) line += QStringLiteral(" · about %1 left").arg(qs(wb::fmtSeconds(left)));
    Q_EMIT progress(line);
  } else if (type == proto::WarningEvent::kType) {
    Q_EMIT progress(qs(proto::readWarningEvent(ev).message));
  } else if (type == proto::LadderEndEvent::kType) {
    const proto::LadderEndEvent end = proto::readLadderEndEvent(ev);
    endStatus_ = qs(end.status);
    if (outDir_.isEmpty()) outDir_ = qs(end.out_dir);
    result_ = ev.contains("result") ? ev["result"] : end.ladder;  // try's end, or the ladder's
  }
}

void ExperimentRunner::onFinished(int outcome, const QString& status, const QString& message) {
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
