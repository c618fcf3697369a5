#include "compare/experiment_view.h"

#include <algorithm>

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QCheckBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHash>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include "compare/report_table.h"
#include "compare/speedup_chart.h"
#include "compare/tune_view.h"
#include "runs/cli.h"
#include "runs/run.h"
#include "runs/runs_model.h"
#include "wb/common/paths.h"
#include "wb/kinds/experiment_kinds.h"
#include "wb/ladder/speedup_effects.h"
#include "wb/proto/config_json.h"
#include "wb/proto/events.h"
#include "wb/proto/try_record.h"
#include "wb/proto/rundir.h"
#include "wb/report/export.h"
#include "wb/stats/stats.h"
#include "wb/proto/record_files.h"

namespace wb::ui {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }
std::string path8(const QString& p) { return QFile::encodeName(p).toStdString(); }

// The answer sentence the record of the `kind` experiment in `dir` holds (written by core), else "".
QString answerIn(const char* kind, const QString& dir) {
  const wb::kinds::ExperimentKind* k = wb::kinds::findKind(kind);
  return k && !dir.isEmpty() ? qs(wb::kinds::answerIn(*k, path8(dir))) : QString();
}

// The registry's entry of a kind this view knows by id (wb::kinds::kLadder, kTry, kTune).
const wb::kinds::ExperimentKind& kindOf(const char* id) { return *wb::kinds::findKind(id); }

// The record file of `kind` in `dir`.
QString recordIn(const wb::kinds::ExperimentKind& kind, const QString& dir) {
  return QDir(dir).filePath(QString::fromLatin1(kind.record));
}

// What opens each kind of experiment here (wb/kinds/experiment_kinds.h), by its id.
using Opener = bool (ExperimentView::*)(const QString& dir, QString* error);
const QHash<QString, Opener>& openers() {
  static const QHash<QString, Opener> open{{QLatin1String(wb::kinds::kLadder), &ExperimentView::openLadder},
                                           {QLatin1String(wb::kinds::kTry), &ExperimentView::openTry},
                                           {QLatin1String(wb::kinds::kTune), &ExperimentView::openSearch}};
  return open;
}

const QString kNothingOpen = QStringLiteral(
    "Which speedups pay here? Run ladder tries each in turn; Find fastest (the Fastest tab) searches them together; "
    "Try on a speedup's row measures one.");

}  // namespace

ExperimentView::ExperimentView(RunsModel* model, QWidget* parent)
    : QWidget(parent), model_(model), ladderRunner_(new ExperimentRunner(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(buildAnswer());
  layout->addWidget(buildControls());
  summary_ = new QLabel(QStringLiteral("Run ladder measures the baseline's experiment with every speedup off, then adds them "
                                       "one at a time."),
                        this);
  summary_->setObjectName(QStringLiteral("experimentSummary"));
  summary_->setWordWrap(true);
  summary_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  // Three lines kept whatever it says: the tabs under it do not jump as a ladder's lines come and go.
  summary_->setMinimumHeight(3 * summary_->fontMetrics().lineSpacing() + 4);
  layout->addWidget(summary_);
  layout->addWidget(buildTabs(), 1);
  connectExperimentRunner();
  setTargetSource({});
  showLadder();
}

ExperimentView::~ExperimentView() = default;

// The answer, large and first, with the button that uses it and the way back to the list.
QWidget* ExperimentView::buildAnswer() {
  auto* row = new QWidget(this);
  auto* layout = new QHBoxLayout(row);
  layout->setContentsMargins(0, 0, 0, 0);
  answer_ = new QLabel(kNothingOpen, row);
  answer_->setObjectName(QStringLiteral("experimentAnswer"));
  answer_->setWordWrap(true);
  answer_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  QFont big = answer_->font();
  big.setPointSizeF(big.pointSizeF() * 1.25);
  big.setBold(true);
  answer_->setFont(big);
  useButton_ = new QPushButton(QStringLiteral("Use this setting"), row);
  useButton_->setObjectName(QStringLiteral("experimentUse"));
  useButton_->setToolTip(QStringLiteral("Load this result into the set-up (it says what changes before it does)"));
  useButton_->hide();
  backButton_ = new QPushButton(QStringLiteral("Back to the list"), row);
  backButton_->setObjectName(QStringLiteral("experimentBack"));
  backButton_->setToolTip(QStringLiteral("Close this experiment: the ladders, tries and searches in the runs folder"));
  backButton_->hide();
  layout->addWidget(answer_, 1);
  layout->addWidget(useButton_, 0, Qt::AlignTop);
  layout->addWidget(backButton_, 0, Qt::AlignTop);
  connect(useButton_, &QPushButton::clicked, this, [this] {
    const QString path = usePath_ == QLatin1String("kept") ? keptConfigFile() : usePath_;
    if (!path.isEmpty()) Q_EMIT useConfig(path, useButton_->text());
  });
  connect(backButton_, &QPushButton::clicked, this, &ExperimentView::closeExperiment);
  return row;
}

void ExperimentView::setAnswer(const QString& text, const QString& useText, const QString& usePath) {
  answer_->setText(text);
  usePath_ = usePath;
  useButton_->setText(useText.isEmpty() ? QStringLiteral("Use this setting") : useText);
  useButton_->setVisible(!usePath.isEmpty());
  backButton_->setVisible(!ladderRunning_ && (ladder_.has_value() || !tryDir_.isEmpty()));
}

QString ExperimentView::answerText() const { return answer_->text(); }

// Run ladder (Stop ladder in its place while one runs), Open ladder…, what it measures to, Export….
QWidget* ExperimentView::buildControls() {
  auto* row = new QWidget(this);
  auto* controls = new QHBoxLayout(row);
  controls->setContentsMargins(0, 0, 0, 0);
  ladderButton_ = new QPushButton(QStringLiteral("Run ladder"), row);
  ladderButton_->setToolTip(QStringLiteral("Run the baseline's experiment with every speedup off, then add them one at a time"));
  stopLadderButton_ = new QPushButton(QStringLiteral("Stop ladder"), row);
  stopLadderButton_->setEnabled(false);
  stopLadderButton_->hide();  // in Run ladder's place while one runs
  openLadderButton_ = new QPushButton(QStringLiteral("Open ladder…"), row);
  question_ = new QLabel(row);
  question_->setObjectName(QStringLiteral("experimentQuestion"));
  question_->setWordWrap(true);  // never wider than the row leaves it (a 1024 px window)
  question_->setToolTip(QStringLiteral("Run ladder and Find fastest measure to the Compare tab's Target and call a speedup "
                                       "faster or slower only from its Effect ≥ (set them there)"));
  // An open ladder's table: what changed, the decision and the figure, as the terminal prints it;
  // ticked, every measure, note and caveat (its pairs, the wall time, the split).
  details_ = new QCheckBox(QStringLiteral("Every figure"), row);
  details_->setObjectName(QStringLiteral("ladderDetails"));
  details_->setToolTip(QStringLiteral("Show every measure of the open ladder (pairs, wall time, throughput and samples to "
                                      "target, notes) instead of the decision and its figure"));
  connect(details_, &QCheckBox::toggled, this, [this] { showLadder(); });
  exportButton_ = new QPushButton(QStringLiteral("Export…"), row);
  exportButton_->setEnabled(false);
  for (auto* b : {ladderButton_, stopLadderButton_, openLadderButton_}) controls->addWidget(b);
  controls->addWidget(question_, 1);
  controls->addWidget(details_);
  controls->addWidget(exportButton_);
  connect(ladderButton_, &QPushButton::clicked, this, &ExperimentView::runLadder);
  connect(stopLadderButton_, &QPushButton::clicked, ladderRunner_, &ExperimentRunner::cancel);
  connect(exportButton_, &QPushButton::clicked, this, &ExperimentView::exportDialog);
  connect(openLadderButton_, &QPushButton::clicked, this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, QStringLiteral("Open a ladder folder (written by workbench-cli ladder)"),
                                                          runsRoot_);
    if (dir.isEmpty()) return;
    QString error;
    if (!openLadder(dir, &error)) QMessageBox::warning(this, QStringLiteral("Open ladder"), error);
  });
  return row;
}

// The Ladder tab (its table, or the experiments on disk), its Chart (once a ladder is open) and
// Fastest, each with the whole height: a 1024x700 window has no room for the table over the chart.
QWidget* ExperimentView::buildTabs() {
  tabs_ = new QTabWidget(this);
  tabs_->setObjectName(QStringLiteral("experimentTabs"));
  ladderTable_ = new QTableWidget(tabs_);
  ladderTable_->setObjectName(QStringLiteral("ladderTable"));
  ladderTable_->verticalHeader()->setVisible(false);
  chart_ = new SpeedupChart(tabs_);
  chart_->setObjectName(QStringLiteral("ladderChart"));
  tabs_->addTab(ladderTable_, QStringLiteral("Ladder"));
  tabs_->addTab(chart_, QStringLiteral("Chart"));
  tune_ = new TuneView(tabs_);
  tabs_->addTab(tune_, QStringLiteral("Fastest"));
  tune_->setConfigSource([this](QString* why) { return experimentFile(why); });  // as Run ladder's
  connect(ladderTable_, &QTableWidget::cellDoubleClicked, this, [this](int row, int) { openListed(row); });
  // A search that ended leads the tab with its answer (tune.json's), and Use best.
  connect(tune_->runner(), &ExperimentRunner::finished, this, [this](const QString& dir, bool cancelled, const QString&) {
    if (ladderRunning_ || dir.isEmpty() || ladder_ || !tryDir_.isEmpty()) return;
    const QString answer = answerIn(wb::kinds::kTune, dir);
    setAnswer(!answer.isEmpty() ? answer
              : cancelled       ? QStringLiteral("Search cancelled: Find fastest on the same experiment continues it.")
                                : QStringLiteral("Search finished: its finals and best are on the Fastest tab."),
              QStringLiteral("Use best"), cancelled ? QString() : tune_->bestConfig());
  });
  return tabs_;
}

void ExperimentView::setTargetSource(std::function<QStringList()> source) {
  targetSource_ = std::move(source);
  tune_->setTargetSource([this] { return targetSource_ ? targetSource_() : QStringList(); });
  showQuestion();
}

void ExperimentView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  showQuestion();
}

// "Target 84.00 % · effect ≥ 2 %", as the Compare tab sets them.
void ExperimentView::showQuestion() {
  const QStringList target = targetSource_ ? targetSource_() : QStringList();
  const double effect = minEffectSource_ ? minEffectSource_() : wb::stats::kDefaultMinEffect;
  const QString to = target.size() == 2 ? qs(wb::fmtAccuracy(target[1].toDouble())) : QStringLiteral("auto");
  question_->setText(QStringLiteral("Target %1 · effect ≥ %2 % (set on Compare)").arg(to).arg(effect * 100, 0, 'g', 3));
}

void ExperimentView::connectExperimentRunner() {
  connect(ladderRunner_, &ExperimentRunner::progress, this, [this](const QString& line) {
    summary_->setText(QStringLiteral("Ladder (%1): %2").arg(ladderRunner_->progressText(), line));
    // The tab counts what the header counts, at the same moment.
    if (ladderRunner_->stepsPlanned() > 0)
      setLadderTabText(QStringLiteral("Ladder %1/%2").arg(ladderRunner_->stepsDone()).arg(ladderRunner_->stepsPlanned()));
  });
  connect(ladderRunner_, &ExperimentRunner::finished, this, &ExperimentView::onLadderFinished);
  connect(ladderRunner_, &ExperimentRunner::planned, this, [this] {
    livePlan_ = ladderRunner_->plan();
    for (auto& step : livePlan_) {
      const bool skipped = wb::proto::boolOr(step, "skipped", false);
      step["status"] = skipped ? "skipped: " + wb::proto::stringOr(step, "note", "not available here") : std::string("waiting");
    }
    tabs_->setCurrentIndex(0);
    showLivePlan();
  });
  connect(ladderRunner_, &ExperimentRunner::rungStarted, this,
          [this](int index, int steps, const QString& key, const QString&) { onRungStarted(index, steps, key); });
  connect(ladderRunner_, &ExperimentRunner::rungEnded, this,
          [this](int index, const QString& key, const QString&, const QString& status) { onRungEnded(index, key, status); });
}

// A listed experiment, double-clicked: its runs join the runs list as a group (they stay out of
// it until then), and it opens here: a ladder's table, a try's answer, a search's on the Fastest tab.
void ExperimentView::openListed(int row) {
  const QTableWidgetItem* item = ladderTable_->item(row, 0);
  const QString dir = item ? item->data(Qt::UserRole).toString() : QString();
  QString error;
  if (!dir.isEmpty() && !openFolder(dir, &error) && !error.isEmpty()) summary_->setText(error);
}

bool ExperimentView::openFolder(const QString& dir, QString* error) {
  const wb::kinds::ExperimentKind* k = wb::kinds::kindOfFolder(dir.toStdString());
  if (!k) {
    QStringList records;
    for (const auto& kind : wb::kinds::experimentKinds()) records << QLatin1String(kind.record);
    if (error) *error = QStringLiteral("%1 holds no experiment (none of %2).").arg(dir, records.join(QStringLiteral(", ")));
    return false;
  }
  Q_EMIT openRunsRequested(dir);  // its runs, as a group, only now that it is opened
  const Opener open = openers().value(QLatin1String(k->id));
  return open && (this->*open)(dir, error);
}

bool ExperimentView::openSearch(const QString& dir, QString* error) {
  if (!tune_->open(dir, error)) return false;
  tabs_->setCurrentWidget(tune_);
  const QString answer = answerIn(wb::kinds::kTune, dir);
  setAnswer(answer.isEmpty() ? QStringLiteral("Search in %1: its finals and best are on the Fastest tab.").arg(QFileInfo(dir).fileName())
                             : answer,
            QStringLiteral("Use best"), tune_->bestConfig());
  return true;
}

void ExperimentView::showLadder() {
  chart_->setBars(ladder_ ? wb::ladder::ladderBars(*ladder_) : wb::render::BarChartSpec{});
  tabs_->setTabEnabled(tabs_->indexOf(chart_), ladder_.has_value());
  if (ladderRunning_) showLivePlan();
  else if (ladder_) showLadderTable();
  else showLaddersOnDisk();
  exportButton_->setEnabled(ladder_.has_value());
  details_->setEnabled(ladder_.has_value() && !ladderRunning_);
}

// The open ladder: its decisions (Step, What changed, Decision, the figure), the figure never
// behind a scroll (What changed gives up its width first); or, ticked, every figure.
void ExperimentView::showLadderTable() {
  QHeaderView* header = ladderTable_->horizontalHeader();
  header->setSectionResizeMode(QHeaderView::Interactive);
  if (details_->isChecked()) return fillTable(ladderTable_, wb::ladder::ladderTable(*ladder_));
  fillTable(ladderTable_, wb::ladder::ladderAnswerTable(*ladder_));
  header->setSectionResizeMode(1, QHeaderView::Stretch);
}

void ExperimentView::setRunsRoot(const QString& root) {
  runsRoot_ = root;
  tune_->setRunsRoot(root);
  if (!ladder_ && !ladderRunning_) showLaddersOnDisk();
}

QStringList ExperimentView::laddersOnDisk() const {
  QStringList dirs;
  const wb::kinds::ExperimentKind& ladder = kindOf(wb::kinds::kLadder);
  for (const auto& [dir, kind] : experimentsOnDisk())
    if (kind == QLatin1String(ladder.name)) dirs << dir;
  if (!runsRoot_.isEmpty() && QFileInfo(recordIn(ladder, runsRoot_)).isFile()) dirs.prepend(QDir(runsRoot_).absolutePath());
  return dirs;
}

QList<QPair<QString, QString>> ExperimentView::experimentsOnDisk() const {
  if (runsRoot_.isEmpty()) return {};
  QList<QPair<QFileInfo, QString>> found;
  const QDir root(runsRoot_);
  for (const QString& sub : root.entryList(QDir::Dirs | QDir::NoDotAndDotDot))
    if (const wb::kinds::ExperimentKind* kind = wb::kinds::kindOfFolder(path8(root.filePath(sub))))
      found.append({QFileInfo(recordIn(*kind, root.filePath(sub))), QString::fromLatin1(kind->name)});
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first.lastModified() > b.first.lastModified(); });
  QList<QPair<QString, QString>> out;
  for (const auto& [f, kind] : found) out.append({f.absolutePath(), kind});
  return out;
}

// No ladder open: the experiments under the runs root, newest first (double-click opens one).
void ExperimentView::showLaddersOnDisk() {
  const auto found = experimentsOnDisk();
  ladderTable_->clear();
  ladderTable_->setColumnCount(3);
  ladderTable_->setHorizontalHeaderLabels({QStringLiteral("Experiments in the runs folder (double-click to open)"),
                                           QStringLiteral("Kind"), QStringLiteral("Written")});
  ladderTable_->setRowCount(found.isEmpty() ? 1 : int(found.size()));
  if (found.isEmpty()) {
    auto* hint = new QTableWidgetItem(QStringLiteral("None yet: Run ladder measures the baseline, then each speedup added in turn."));
    hint->setFlags(Qt::ItemIsEnabled);
    ladderTable_->setItem(0, 0, hint);
  }
  for (int r = 0; r < int(found.size()); ++r) {
    const auto& [dir, kind] = found[r];
    const wb::kinds::ExperimentKind* k = wb::kinds::findKind(kind.toStdString());
    const QString opens = QString::fromUtf8(k->opens);
    auto* name = new QTableWidgetItem(QFileInfo(dir).fileName());
    name->setData(Qt::UserRole, dir);
    name->setData(Qt::UserRole + 1, kind);
    name->setToolTip(opens.isEmpty() ? dir : dir + QStringLiteral("\nDouble-click: ") + opens);
    auto* kindItem = new QTableWidgetItem(kind);
    auto* when = new QTableWidgetItem(QFileInfo(recordIn(*k, dir)).lastModified().toString(QStringLiteral("yyyy-MM-dd HH:mm")));
    int c = 0;
    for (auto* item : {name, kindItem, when}) {
      item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
      ladderTable_->setItem(r, c++, item);
    }
  }
  ladderTable_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  ladderTable_->resizeColumnToContents(1);
  ladderTable_->resizeColumnToContents(2);
}

// A running ladder: every step of its plan with where it stands (waiting, running, its status).
void ExperimentView::showLivePlan() {
  ladderTable_->clear();
  ladderTable_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
  ladderTable_->setColumnCount(3);
  ladderTable_->setHorizontalHeaderLabels({QStringLiteral("Step"), QStringLiteral("Adds"), QStringLiteral("Status")});
  ladderTable_->setRowCount(int(livePlan_.size()));
  const QStringList numbers = stepNumbers(livePlan_);  // as the ladder's table numbers them
  for (int r = 0; r < int(livePlan_.size()); ++r) {
    const auto& step = livePlan_[size_t(r)];
    const QString status = qs(wb::proto::stringOr(step, "status", {}));
    const QStringList cells{numbers.value(r), qs(wb::proto::stringOr(step, "added", {})), status};
    for (int c = 0; c < cells.size(); ++c) {
      auto* item = new QTableWidgetItem(cells[c]);
      item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
      item->setToolTip(cells[c]);
      if (status == QLatin1String("running")) {
        QFont bold = item->font();
        bold.setBold(true);
        item->setFont(bold);
      }
      ladderTable_->setItem(r, c, item);
    }
  }
  ladderTable_->resizeColumnsToContents();
}

void ExperimentView::setLadderTabText(const QString& text) { tabs_->setTabText(0, text); }

// A run of the ladder's step `index`, not one of a part's own short trials (their "baseline" and
// "variant", while a step by parts measures its throughput).
bool ExperimentView::isLadderStep(int index, const QString& key) const {
  return ladderRunner_->phase().isEmpty() && index >= 0 && index < int(livePlan_.size()) &&
         qs(wb::proto::stringOr(livePlan_[size_t(index)], "key", {})) == key;
}

void ExperimentView::onRungStarted(int index, int steps, const QString& key) {
  // A part's own short trials ("baseline", "variant" inside a step by parts) are not steps.
  if (!isLadderStep(index, key)) return;
  livePlan_[size_t(index)]["status"] = "running";
  // Steps done, never the running step's index: the runner revisits steps in rounds.
  setLadderTabText(QStringLiteral("Ladder %1/%2").arg(ladderRunner_->stepsDone()).arg(steps));
  // The step by what it adds and by the number the table gives it.
  const QString added = qs(wb::proto::stringOr(livePlan_[size_t(index)], "added", {}));
  summary_->setText(QStringLiteral("Ladder: %1; now step %2, %3.")
                        .arg(ladderRunner_->progressText(), stepNumbers(livePlan_).value(index), added.isEmpty() ? key : added));
  answer_->setText(QStringLiteral("Ladder running: %1.").arg(ladderRunner_->progressText()));
  showLivePlan();
}

// A step ended: its status in the plan, and the ladder so far (ladder.json is rewritten after
// each step) on the chart.
void ExperimentView::onRungEnded(int index, const QString& key, const QString& status) {
  if (!isLadderStep(index, key)) return;
  livePlan_[size_t(index)]["status"] = status.toStdString();
  const QString out = ladderRunner_->outDir();
  if (!out.isEmpty() && QFileInfo::exists(recordIn(kindOf(wb::kinds::kLadder), out)))
    if (auto partial = wb::ladder::loadLadder(path8(out)); partial.ok()) {
      ladder_ = std::move(partial.value());
      ladderDir_ = out;
      Q_EMIT canExportChanged(true);
    }
  showLadder();
}

bool ExperimentView::openLadder(const QString& dirOrFile, QString* error) {
  auto ladder = wb::ladder::loadLadder(path8(dirOrFile));
  if (!ladder.ok()) {
    if (error) *error = qs(ladder.error().message);
    return false;
  }
  ladder_ = std::move(ladder.value());
  ladderDir_ = QFileInfo(dirOrFile).isDir() ? dirOrFile : QFileInfo(dirOrFile).absolutePath();
  tryDir_.clear();
  tabs_->setCurrentIndex(0);
  summary_->setText(QStringLiteral("Ladder in %1 (its tables, verdicts and runs are in its ladder.html).").arg(ladderDir_));
  showLadder();
  showLadderAnswer(QStringLiteral("Ladder in %1.").arg(QFileInfo(ladderDir_).fileName()));
  Q_EMIT canExportChanged(true);
  return true;
}

// The open ladder's answer (ladder.json's "answer", else `fallback`), and Use the kept setting
// when a greedy ladder kept something.
void ExperimentView::showLadderAnswer(const QString& fallback) {
  const QString answer = answerIn(wb::kinds::kLadder, ladderDir_);
  const wb::ladder::LadderRow* kept = ladder_ ? wb::ladder::keptRow(*ladder_) : nullptr;
  const bool keptSomething = kept && !ladder_->rows.empty() &&
                             wb::proto::configToJson(kept->step.config) != wb::proto::configToJson(ladder_->rows.front().step.config);
  setAnswer(answer.isEmpty() ? fallback : answer, QStringLiteral("Use the kept setting"),
            keptSomething ? QStringLiteral("kept") : QString());
}

// A greedy ladder's kept configuration, written for the set-up to load (into the runs folder's
// .window/); "" when it kept nothing beyond the baseline.
QString ExperimentView::keptConfigFile() const {
  const wb::ladder::LadderRow* kept = ladder_ ? wb::ladder::keptRow(*ladder_) : nullptr;
  if (!kept) return QString();
  const nlohmann::json config = wb::proto::configToJson(kept->step.config);
  const QString dir = QDir(runsRoot_.isEmpty() ? ladderDir_ : runsRoot_).filePath(QStringLiteral(".window"));
  const QString file = QDir(dir).filePath(qs(wb::makeRunId("kept")) + QStringLiteral(".json"));
  if (!QDir().mkpath(dir) || !wb::proto::writeJsonAtomic(path8(file), config).ok()) return QString();
  return file;
}

bool ExperimentView::openTry(const QString& dir, QString* error) {
  const wb::kinds::ExperimentKind& kind = kindOf(wb::kinds::kTry);
  const wb::proto::StoredRecord stored = wb::proto::readRecordFile(path8(recordIn(kind, dir)));
  const nlohmann::json& doc = stored.doc;
  if (!stored.read()) {
    if (error) *error = QStringLiteral("%1 holds no readable %2.").arg(dir, QString::fromLatin1(kind.record));
    return false;
  }
  ladder_.reset();
  ladderDir_.clear();
  tryDir_ = dir;
  showLadder();
  Q_EMIT canExportChanged(false);
  const wb::proto::TryRecord record = wb::proto::tryRecordFromJson(doc);
  const wb::ladder::SpeedupEffect effect = wb::ladder::tryEffect(doc, "");
  QString answer = qs(kind.answer(doc));
  if (answer.isEmpty()) answer = QStringLiteral("Try %1").arg(qs(effect.text));
  // Clearly faster: its variant's config is what Use loads.
  const QString variant = QDir(dir).filePath(QString::fromLatin1(proto::kVariantConfigFile));
  const bool use = effect.speedup.has_value() && QFileInfo::exists(variant);
  setAnswer(answer, QStringLiteral("Use %1").arg(qs(record.setting)), use ? variant : QString());
  summary_->setText(QStringLiteral("Try in %1: its runs are in the runs list (double-click opened them).").arg(dir));
  return true;
}

void ExperimentView::closeExperiment() {
  if (ladderRunning_) return;
  ladder_.reset();
  ladderDir_.clear();
  tryDir_.clear();
  setAnswer(kNothingOpen);
  summary_->setText(QStringLiteral("Double-click an experiment to open it."));
  showLadder();
  Q_EMIT canExportChanged(false);
}

void ExperimentView::refreshList() {
  if (!ladder_ && !ladderRunning_) showLaddersOnDisk();
}

void ExperimentView::showRunningTry(const QString& dir, const QString& setting) {
  if (ladderRunning_) return;  // the ladder keeps the answer line; the speedup's row shows the try
  ladder_.reset();
  ladderDir_.clear();
  tryDir_ = dir;
  showLadder();
  setAnswer(QStringLiteral("Trying %1…").arg(setting));
  backButton_->hide();
}

void ExperimentView::showTryProgress(const QString& text) {
  if (!ladderRunning_ && !tryDir_.isEmpty()) answer_->setText(text);
}

// The experiment a ladder or a search starts from: the source's when it names one (or why not),
// else the baseline's config.json.
QString ExperimentView::experimentFile(QString* why) const {
  if (experimentSource_)
    if (const QString file = experimentSource_(why); !file.isEmpty() || !why->isEmpty()) return file;
  Run* base = model_->baseline();
  if (base && !base->runDir().isEmpty()) return QString::fromStdString(wb::proto::RunDir{path8(base->runDir())}.config().string());
  *why = QStringLiteral("Set a baseline first: the ladder and Find fastest start from the baseline's experiment.");
  return QString();
}

// The ladder's options: the set-up's lr scaling rule when it has one ("none" lets the ladder pick
// by the optimiser: linear for SGD, sqrt for Adam, so its devices step compares at equal
// accuracy), and the Compare tab's threshold and target.
QStringList ExperimentView::ladderArguments(const QString& config) const {
  QStringList args{QStringLiteral("--config"), config};
  if (const QString rule = ladderLrScaling_ ? ladderLrScaling_() : QString(); !rule.isEmpty() && rule != QLatin1String("none"))
    args << QStringLiteral("--lr-scaling") << rule;
  const double effect = minEffectSource_ ? minEffectSource_() : wb::stats::kDefaultMinEffect;
  args << QStringLiteral("--min-effect") << QString::number(effect);
  if (targetSource_) args << targetSource_();
  return args;
}

void ExperimentView::runLadder() {
  QString why;
  const QString config = experimentFile(&why);
  if (config.isEmpty()) {
    QMessageBox::information(this, QStringLiteral("Run ladder"),
                             why + QStringLiteral(" The ladder runs it with every speedup off, then adds them one at a time."));
    return;
  }
  QStringList args = ladderArguments(config);
  // A ladder cut short on the same experiment and options is continued, as the CLI does with its
  // folder; else a new one, into the runs folder the window shows (listed there after a restart).
  const CutExperiment asked{QString(), args.mid(2), readAll(config)};  // the config by its content, not its path
  const bool continuing = cutLadder_.continues(asked);
  const QString out = continuing ? cutLadder_.dir
                      : runsRoot_.isEmpty()
                          ? QString()
                          : QDir(runsRoot_).filePath(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")) + QStringLiteral("-ladder"));
  cutLadder_ = asked;
  cutLadder_.dir = out;
  if (!out.isEmpty()) args << QStringLiteral("--out") << out;
  ladderRunning_ = true;
  tryDir_.clear();
  livePlan_ = nlohmann::json::array();
  setAnswer(QStringLiteral("Ladder running: starting…"));
  ladderRunner_->start(locateCli(), args);
  setRunning(true);
  showQuestion();
  summary_->setText(continuing ? QStringLiteral("Ladder: continuing the one cut short in %1 (its finished pairs are kept)…").arg(out)
                               : QStringLiteral("Ladder: starting…"));
}

void ExperimentView::setRunning(bool running) {
  ladderButton_->setEnabled(!running);
  ladderButton_->setVisible(!running);
  stopLadderButton_->setEnabled(running);
  stopLadderButton_->setVisible(running);
}

void ExperimentView::onLadderFinished(const QString& outDir, bool cancelled, const QString& error) {
  ladderRunning_ = false;
  if (!cancelled || outDir.isEmpty()) cutLadder_ = {};  // only a cut ladder is continued
  else cutLadder_.dir = outDir;
  setLadderTabText(QStringLiteral("Ladder"));
  setRunning(false);
  QString loadError;
  const bool opened = !outDir.isEmpty() && QFileInfo::exists(recordIn(kindOf(wb::kinds::kLadder), outDir)) &&
                      openLadder(outDir, &loadError);
  if (!opened) showLadder();
  QString text = cancelled ? QStringLiteral("Ladder cancelled; the steps that finished are shown. Run ladder on the same "
                                           "experiment continues it.")
                 : error.isEmpty() ? QStringLiteral("Ladder finished: %1").arg(outDir)
                                   : error;
  if (!opened && !loadError.isEmpty()) text += QStringLiteral("\n") + loadError;
  summary_->setText(text);
  if (opened && cancelled) setAnswer(QStringLiteral("Ladder cancelled: the steps that finished are below; Run ladder continues it."));
  else if (opened) showLadderAnswer(text);
  else setAnswer(cancelled ? QStringLiteral("Ladder cancelled before a step finished.") : text);
}

bool ExperimentView::exportTo(const QString& path, QString* error) const {
  if (!ladder_) {
    if (error) *error = QStringLiteral("Nothing to export yet: run or open a ladder.");
    return false;
  }
  return writeReportOrChart(path, wb::ladder::buildLadderReport(*ladder_, {}), *chart_, error);
}

void ExperimentView::exportDialog() {
  if (!canExport()) {
    QMessageBox::information(this, QStringLiteral("Export"), QStringLiteral("Nothing to export yet: run or open a ladder."));
    return;
  }
  const QString path = exportWithDialog(this, QStringLiteral("Export ladder"), exportStartPath(),
                                        [this](const QString& to, QString* error) { return exportTo(to, error); });
  if (path.isEmpty()) return;
  summary_->setText(QStringLiteral("Wrote ") + path);
  lastExportDir_ = QFileInfo(path).absolutePath();
}

QString ExperimentView::exportStartPath() const {
  const QString dir = !lastExportDir_.isEmpty() ? lastExportDir_ : !ladderDir_.isEmpty() ? ladderDir_ : runsRoot_;
  return QDir(dir.isEmpty() ? QDir::homePath() : dir).filePath(QStringLiteral("ladder.html"));
}

}  // namespace wb::ui
