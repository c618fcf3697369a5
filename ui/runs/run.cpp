#include "runs/run.h"

#include <QDir>
#include <QFileInfo>

#include "wb/proto/events.h"
#include "wb/proto/rundir.h"
#include "wb/report/compare.h"

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

double jsonNumber(const json& ev, const char* key) { return proto::numberOr(ev, key, kNaN); }

namespace {
QString jsonString(const json& ev, const char* key) { return QString::fromStdString(proto::stringOr(ev, key, {})); }
int jsonRank(const json& ev) { return static_cast<int>(proto::intOr(ev, "rank", 0)); }
}  // namespace

// ---- RunSeries ---------------------------------------------------------------

namespace {
double positiveOrNaN(double v) { return v > 0 ? v : kNaN; }
}  // namespace

void RunSeries::addStep(const report::StepSample& s) {
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
  // A fractional epoch makes the epoch axis continuous between evaluations.
  if (stepsPerEpoch_ > 0) p.epoch = p.step / stepsPerEpoch_;
  appendStep(p);
}

void RunSeries::appendStep(const StepPoint& p) {
  if (std::isfinite(p.ampScale)) hasAmpScale_ = true;
  steps_.push_back(p);
}

void RunSeries::addEval(const report::EvalSample& e, double samples) {
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
    run->applySummary(*sum);
    run->status_ = statusFromString(proto::stringOr(*sum, "status", "failed"));
    if (run->status_ == RunStatus::Ok || run->status_ == RunStatus::EarlyStopped) run->progress_ = 1.0;
  }
  return run;
}

void Run::applySummary(const json& summary) {
  summary_ = summary;
  if (summary.contains("name") && summary["name"].is_string())
    name_ = QString::fromStdString(summary["name"].get<std::string>());
  const double best = jsonNumber(summary, "best_val_acc");
  if (std::isfinite(best)) bestValAcc_ = best;
  const report::RunSummary measured = report::decodeSummary(summary);
  summaryTrainSps_ = measured.train_samples_per_s.value_or(kNaN);
  summaryCpu_ = measured.cpu.has_value();
  if (summaryCpu_) contention_ = QString::fromStdString(report::contentionOf(*measured.cpu).note);
  const QString err = jsonString(summary, "error");
  if (!err.isEmpty() && error_.isEmpty()) error_ = err;
}

// With one rank, whatever else keeps the machine busy is another process (with more, the other
// ranks' load is the run's own, and only the summary can tell).
void Run::noteStepCpu(const json& ev) {
  const double worldSize = jsonNumber(start_, "world_size");
  const auto cpu = report::decodeStepCpu(ev);
  if (summaryCpu_ || !cpu || (std::isfinite(worldSize) && worldSize > 1)) return;
  stepLoad_.add(*cpu);
  if (auto use = stepLoad_.use()) contention_ = QString::fromStdString(report::contentionOf(*use).note);
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
  report::addEvent(record_, ev);
  const std::string type = proto::stringOr(ev, "type", {});
  const int rank = jsonRank(ev);
  const double wall = jsonNumber(ev, "wall");
  if (std::isfinite(wall)) lastWall_ = wall;
  if (!isFinal(status_) && status_ != RunStatus::Stopping && type != "end") status_ = RunStatus::Running;

  if (type == "run") {
    const QString dir = jsonString(ev, "run_dir");
    if (!dir.isEmpty()) runDir_ = dir;
    const QString nm = jsonString(ev, "name");
    if (!nm.isEmpty()) name_ = nm;
    if (ev.contains("config") && ev["config"].is_object()) config_ = ev["config"];
  } else if (type == "start") {
    if (rank == 0) {
      start_ = ev;
      const double spe = jsonNumber(ev, "steps_per_epoch");
      if (std::isfinite(spe) && spe > 0) series_.setStepsPerEpoch(spe);
      const QString device = jsonString(ev, "device");
      if (!device.isEmpty()) series_.setDevice(device);
      if (ev.contains("config") && ev["config"].is_object() && config_.empty()) config_ = ev["config"];
    }
  } else if (type == "step") {
    if (rank != 0) return false;
    series_.addStep(record_.steps.back());
    const double p = jsonNumber(ev, "progress");
    if (std::isfinite(p)) progress_ = p;
    const double eta = jsonNumber(ev, "eta_s");
    if (std::isfinite(eta)) eta_ = eta;
    const double sps = jsonNumber(ev, "samples_per_s");  // the log interval's training steps
    if (std::isfinite(sps) && sps > 0) stepTrainSps_ = sps;
    noteStepCpu(ev);
    return true;
  } else if (type == "eval") {
    if (rank != 0) return false;
    series_.addEval(record_.evals.back(), jsonNumber(ev, "samples"));
    const double acc = jsonNumber(ev, "val_acc");
    if (std::isfinite(acc) && (!std::isfinite(bestValAcc_) || acc > bestValAcc_)) bestValAcc_ = acc;
    return true;
  } else if (type == "epoch") {
    double sps = jsonNumber(ev, "train_samples_per_s");
    if (!std::isfinite(sps)) sps = jsonNumber(ev, "samples_per_s");  // older: epoch less evaluation
    if (rank == 0 && std::isfinite(sps) && sps > 0) epochTrainSps_ = sps;
  } else if (type == "warning") {
    const QString msg = jsonString(ev, "message");
    const QString path = jsonString(ev, "path");
    if (!msg.isEmpty()) warnings_ << (path.isEmpty() ? msg : msg + QStringLiteral(" (") + path + QLatin1Char(')'));
    if (warnings_.size() > 50) warnings_.removeFirst();
  } else if (type == "error") {
    const QString msg = jsonString(ev, "message");
    if (!msg.isEmpty()) error_ = msg;
    const QString tail = jsonString(ev, "log_tail");
    if (!tail.isEmpty()) appendLogTail(tail);
  } else if (type == "end") {
    const auto st = statusFromString(proto::stringOr(ev, "status", "failed"));
    status_ = st;
    if (ev.contains("summary") && ev["summary"].is_object()) {
      json sum = ev["summary"];
      sum["status"] = proto::stringOr(ev, "status", "failed");
      applySummary(sum);
    }
    if (st == RunStatus::Ok || st == RunStatus::EarlyStopped) progress_ = 1.0;
    eta_ = kNaN;
  }
  return false;
}

report::RunRecord Run::record() const {
  report::RunRecord r = record_;
  if (!runDir_.isEmpty()) {
    r.dir = runDir_.toStdString();
    r.id = runId().toStdString();
    const proto::RunDir rd{r.dir};
    if (env_.empty())
      if (auto env = proto::readJsonFile(rd.env()); env.ok() && env->is_object()) env_ = *env;
  }
  if (!config_.empty()) r.config = config_;
  if (!summary_.empty()) {
    r.summary = summary_;
    r.finished = true;
    r.status = proto::stringOr(summary_, "status", r.status);
  }
  r.env = env_;
  report::finishRecord(r);
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
