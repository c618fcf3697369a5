#include "runs/run.h"

#include <QDir>
#include <QFileInfo>

#include "wb/proto/event_types.h"
#include "wb/proto/events.h"
#include "wb/proto/rundir.h"
#include "wb/compare/compare.h"

namespace wb::ui {
using nlohmann::json;

QString statusWord(RunStatus s) {
  switch (s) {
    case RunStatus::Queued: return QStringLiteral("queued");
    case RunStatus::Starting: return QStringLiteral("starting");
    case RunStatus::Running: return QStringLiteral("running");
    case RunStatus::Stopping: return QStringLiteral("stopping");
    case RunStatus::Ok: return QStringLiteral("ok");
    case RunStatus::Failed: return QStringLiteral("failed");
    case RunStatus::Cancelled: return QStringLiteral("cancelled");
    case RunStatus::EarlyStopped: return QStringLiteral("early-stopped");
    case RunStatus::Diverged: return QStringLiteral("diverged");
    case RunStatus::Incomplete: return QStringLiteral("incomplete");
  }
  return QStringLiteral("?");
}

void Run::setClusterTask(const QString& job, const QString& state, const QString& reason) {
  if (job == clusterJob_ && state == clusterState_ && reason == clusterReason_) return;
  clusterJob_ = job, clusterState_ = state, clusterReason_ = reason;
  Q_EMIT changed();
}

RunStatus statusFromString(const std::string& s) {
  if (s == proto::kStatusOk) return RunStatus::Ok;
  if (s == proto::kStatusCancelled) return RunStatus::Cancelled;
  if (s == proto::kStatusEarlyStopped) return RunStatus::EarlyStopped;
  if (s == proto::kStatusDiverged) return RunStatus::Diverged;
  return RunStatus::Failed;
}

bool isFinal(RunStatus s) {
  switch (s) {
    case RunStatus::Ok:
    case RunStatus::Failed:
    case RunStatus::Cancelled:
    case RunStatus::EarlyStopped:
    case RunStatus::Diverged:
      return true;
    default:
      return false;
  }
}

bool isActive(RunStatus s) {
  return s == RunStatus::Starting || s == RunStatus::Running || s == RunStatus::Stopping;
}

// ---- RunSeries ---------------------------------------------------------------

namespace {
double positiveOrNaN(double v) { return v > 0 ? v : kNaN; }
}  // namespace

void RunSeries::addStep(const records::StepSample& s) {
  StepPoint p;
  p.step = double(s.step);
  p.epoch = double(s.epoch);
  p.t = s.t;
  p.samples = double(s.samples);
  p.loss = s.loss;
  p.lr = s.lr;
  p.samplesPerS = positiveOrNaN(s.samples_per_s);
  if (s.ms) p.ms = {s.ms->data, s.ms->h2d, s.ms->fwd, s.ms->bwd, s.ms->opt, s.ms->comm};
  if (s.mem) {
    p.alloc = s.mem->alloc, p.reserved = s.mem->reserved, p.peak = s.mem->peak, p.rss = s.mem->rss;
    if (device_.isEmpty()) device_ = QString::fromStdString(s.mem->device);
  }
  if (s.amp_scale) p.ampScale = *s.amp_scale;
  p.gflopPerS = s.gflop_per_s.value_or(kNaN);
  p.pctOfPeak = s.pct_of_peak.value_or(kNaN);
  p.pctOfDatasheet = s.pct_of_datasheet.value_or(kNaN);
  // A fractional epoch makes the epoch axis continuous between evaluations.
  if (stepsPerEpoch_ > 0) p.epoch = p.step / stepsPerEpoch_;
  appendStep(p);
}

void RunSeries::appendStep(const StepPoint& p) {
  if (std::isfinite(p.ampScale)) hasAmpScale_ = true;
  steps_.push_back(p);
  stepKeys_[size_t(XKey::Step)].push_back(p.step);
  stepKeys_[size_t(XKey::Epoch)].push_back(p.epoch);
  stepKeys_[size_t(XKey::Wall)].push_back(p.t);
  stepKeys_[size_t(XKey::Samples)].push_back(p.samples);
}

void RunSeries::addEval(const records::EvalSample& e, double samples) {
  EvalPoint p;
  p.step = double(e.step);
  p.epoch = double(e.epoch);
  p.t = e.t;
  p.samples = samples;
  p.valLoss = e.val_loss;
  p.valAcc = e.val_acc;
  evals_.push_back(p);
}

void RunSeries::clear() {
  steps_.clear();
  for (auto& keys : stepKeys_) keys.clear();
  evals_.clear();
  hasAmpScale_ = false;
}

// ---- Run ----------------------------------------------------------------------

Run::Run(Origin origin, QObject* parent) : QObject(parent), origin_(origin) {
  if (origin == Origin::Launched) eventsLoaded_ = true;  // events arrive from the process
}

double Run::trainSamplesPerSecond() const {
  for (double v : {summaryTrainSps_, epochTrainSps_, stepTrainSps_})  // steadiest first
    if (std::isfinite(v)) return v;
  return kNaN;
}

QString Run::runId() const { return runDir_.isEmpty() ? QString() : QFileInfo(runDir_).fileName(); }

void Run::setName(const QString& name) {
  if (name == name_) return;
  name_ = name;
  Q_EMIT changed();
}

Run* Run::fromDirectory(const QString& dir, QObject* parent) {
  proto::RunDir rd{dir.toStdString()};
  if (!rd.looksLikeRun()) return nullptr;
  auto* run = new Run(Origin::History, parent);
  run->runDir_ = QDir(dir).absolutePath();
  run->name_ = QFileInfo(dir).fileName();
  if (auto cfg = proto::readJsonFile(rd.config()); cfg.ok() && cfg->is_object()) {
    run->config_ = *cfg;
    if (cfg->contains("name") && (*cfg)["name"].is_string())
      run->name_ = QString::fromStdString((*cfg)["name"].get<std::string>());
  }
  run->status_ = RunStatus::Incomplete;
  if (auto sum = proto::readJsonFile(rd.summary()); sum.ok() && sum->is_object()) {
    run->applySummary(proto::readRunSummary(*sum));
    run->status_ = statusFromString(run->summary_.status.value_or(proto::kStatusFailed));
    if (run->status_ == RunStatus::Ok || run->status_ == RunStatus::EarlyStopped) run->progress_ = 1.0;
  }
  return run;
}

void Run::applySummary(const proto::RunSummary& summary) {
  summary_ = summary;
  hasSummary_ = true;
  if (summary.name) name_ = QString::fromStdString(*summary.name);
  if (const auto best = proto::finite(summary.best_val_acc)) bestValAcc_ = *best;
  const double sps = proto::finite(summary.train_samples_per_s).value_or(kNaN);
  summaryTrainSps_ = sps > 0 ? sps : kNaN;  // a run cancelled before its first step wrote 0: no figure
  const std::optional<records::CpuUse> cpu = records::cpuUse(summary);
  summaryCpu_ = cpu.has_value();
  if (summaryCpu_) contention_ = QString::fromStdString(compare::contentionOf(*cpu).note);
  const QString err = QString::fromStdString(summary.error.value_or(std::string()));
  if (!err.isEmpty() && error_.isEmpty()) error_ = err;
}

// With one rank, whatever else keeps the machine busy is another process (with more, the other
// ranks' load is the run's own, and only the summary can tell).
void Run::noteStepCpu(const json& ev) {
  const auto cpu = records::decodeStepCpu(ev);
  if (summaryCpu_ || !cpu || record_.start.world_size > 1) return;
  stepLoad_.add(*cpu);
  if (auto use = stepLoad_.use()) contention_ = QString::fromStdString(compare::contentionOf(*use).note);
}

void Run::ingest(const json& event) {
  const bool grew = ingestOne(event);
  Q_EMIT changed();
  if (grew) Q_EMIT dataAppended();
}

void Run::ingest(const std::vector<json>& events) {
  if (events.empty()) return;
  bool grew = false;
  for (const auto& ev : events) grew = ingestOne(ev) || grew;
  Q_EMIT changed();
  if (grew) Q_EMIT dataAppended();
}

bool Run::ingestOne(const json& ev) {
  records::addEvent(record_, ev);  // the run's record: core/records decodes every event once
  const proto::Envelope envelope = proto::readEnvelope(ev);
  const std::string& type = envelope.type;
  const int rank = envelope.rank.value_or(0);
  if (std::isfinite(envelope.wall)) lastWall_ = envelope.wall;
  if (!isFinal(status_) && status_ != RunStatus::Stopping && type != proto::EndEvent::kType) status_ = RunStatus::Running;

  if (type == proto::RunEvent::kType) {
    const proto::RunEvent run = proto::readRunEvent(ev);
    if (!run.run_dir.empty()) runDir_ = QString::fromStdString(run.run_dir);
    if (!run.name.empty()) name_ = QString::fromStdString(run.name);
    if (run.config.is_object()) config_ = run.config;
  } else if (type == proto::StartEvent::kType) {
    if (rank == 0) {
      const proto::StartEvent& start = record_.start;  // what addEvent just read
      if (start.steps_per_epoch > 0) series_.setStepsPerEpoch(double(start.steps_per_epoch));
      if (!start.device.empty()) series_.setDevice(QString::fromStdString(start.device));
      if (start.config.is_object() && config_.empty()) config_ = start.config;
    }
  } else if (type == proto::StepEvent::kType) {
    if (rank != 0) return false;
    series_.addStep(record_.steps.back());
    const proto::StepEvent step = proto::readStepEvent(ev);
    if (ev.contains("progress")) progress_ = step.progress;
    if (ev.contains("eta_s")) eta_ = step.eta_s;
    if (step.samples_per_s > 0) stepTrainSps_ = step.samples_per_s;  // the log interval's training steps
    noteStepCpu(ev);
    return true;
  } else if (type == proto::EvalEvent::kType) {
    if (rank != 0) return false;
    const proto::EvalEvent eval = proto::readEvalEvent(ev);
    series_.addEval(record_.evals.back(), double(eval.samples));
    const double acc = eval.val_acc;
    if (std::isfinite(acc) && (!std::isfinite(bestValAcc_) || acc > bestValAcc_)) bestValAcc_ = acc;
    return true;
  } else if (type == proto::EpochEvent::kType) {
    const proto::EpochEvent epoch = proto::readEpochEvent(ev);
    // Older writers gave only samples_per_s (the epoch less its evaluation).
    const double sps = epoch.train_samples_per_s > 0 ? epoch.train_samples_per_s : epoch.samples_per_s;
    if (rank == 0 && sps > 0) epochTrainSps_ = sps;
  } else if (type == proto::WarningEvent::kType) {
    const proto::WarningEvent w = proto::readWarningEvent(ev);
    const QString msg = QString::fromStdString(w.message);
    const QString path = QString::fromStdString(w.path.value_or(std::string()));
    if (!msg.isEmpty()) warnings_ << (path.isEmpty() ? msg : msg + QStringLiteral(" (") + path + QLatin1Char(')'));
    if (warnings_.size() > 50) warnings_.removeFirst();
  } else if (type == proto::ErrorEvent::kType) {
    const proto::ErrorEvent e = proto::readErrorEvent(ev);
    if (!e.message.empty()) error_ = QString::fromStdString(e.message);
    if (e.log_tail && !e.log_tail->empty()) appendLogTail(QString::fromStdString(*e.log_tail));
  } else if (type == proto::EndEvent::kType) {
    const proto::EndEvent end = proto::readEndEvent(ev);
    status_ = statusFromString(end.status);
    proto::RunSummary sum = end.summary;
    sum.status = end.status;
    applySummary(sum);
    if (status_ == RunStatus::Ok || status_ == RunStatus::EarlyStopped) progress_ = 1.0;
    eta_ = kNaN;
  }
  return false;
}

records::RunRecord Run::record() const {
  records::RunRecord r = record_;
  if (!runDir_.isEmpty()) {
    r.dir = runDir_.toStdString();
    r.id = runId().toStdString();
    const proto::RunDir rd{r.dir};
    if (env_.empty())
      if (auto env = proto::readJsonFile(rd.env()); env.ok() && env->is_object()) env_ = *env;
  }
  if (!config_.empty()) r.config = config_;
  if (hasSummary_) {
    r.summary = summary_;
    r.finished = true;
    r.status = summary_.status.value_or(r.status);
  }
  r.env = env_;
  records::finishRecord(r);
  return r;
}

void Run::setStatus(RunStatus status, const QString& detail) {
  status_ = status;
  if (!detail.isEmpty()) error_ = detail;
  Q_EMIT changed();
}

void Run::appendLogTail(const QString& text) {
  if (!logTail_.isEmpty() && !logTail_.endsWith(QLatin1Char('\n'))) logTail_ += QLatin1Char('\n');
  logTail_ += text;
  constexpr int kMax = 8000;  // enough to show what went wrong, bounded for long runs
  if (logTail_.size() > kMax) logTail_ = logTail_.right(kMax);
}

void Run::ensureEventsLoaded() {
  if (eventsLoaded_ || runDir_.isEmpty()) return;
  eventsLoaded_ = true;
  proto::RunDir rd{runDir_.toStdString()};
  const RunStatus keep = status_;
  std::vector<json> events = proto::readEventsFile(rd.events().string());
  series_.clear();
  record_ = {};
  bool grew = false;
  for (const auto& ev : events) grew = ingestOne(ev) || grew;
  // summary.json is the source of truth for a finished run's status; a run without an end
  // event keeps the status its owner gave it (the follower decides between running and
  // incomplete).
  if (isFinal(keep) || !isFinal(status_)) status_ = keep;
  Q_EMIT changed();
  if (grew) Q_EMIT dataAppended();
}

}  // namespace wb::ui
