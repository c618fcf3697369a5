#include "compare/tune_view.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include "compare/experiment_runner.h"
#include "compare/report_table.h"
#include "runs/cli.h"
#include "wb/compare/answer.h"
#include "wb/proto/rundir.h"
#include "wb/stats/estimate_json.h"
#include "wb/proto/tune_record.h"
#include "wb/tune/tune.h"
#include "wb/proto/record_files.h"
#include "wb/kinds/experiment_kinds.h"

namespace wb::ui {
namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

TuneView::TuneView(QWidget* parent) : QWidget(parent), runner_(new ExperimentRunner(this, QLatin1String(wb::kinds::kTune))) {
  auto* layout = new QVBoxLayout(this);
  auto* row = new QHBoxLayout;
  find_ = new QPushButton(QStringLiteral("Find fastest"), this);
  find_->setObjectName(QStringLiteral("tuneFind"));
  find_->setToolTip(QStringLiteral("Search what this machine can run (workers, devices, precision, batch, evaluation) on the "
                                   "baseline's experiment: short trials first, then the finalists to the target as pairs"));
  stop_ = new QPushButton(QStringLiteral("Stop search"), this);
  stop_->hide();
  use_ = new QPushButton(QStringLiteral("Use best"), this);
  use_->setObjectName(QStringLiteral("tuneUseBest"));
  use_->setToolTip(QStringLiteral("Load the best configuration (best.json) into the set-up"));
  use_->setEnabled(false);
  auto* openButton = new QPushButton(QStringLiteral("Open…"), this);
  budget_ = new QSpinBox(this);
  budget_->setObjectName(QStringLiteral("tuneBudget"));
  budget_->setRange(1, 24 * 60);
  budget_->setValue(int(wb::tune::kDefaultBudgetS / 60));
  budget_->setSuffix(QStringLiteral(" min"));
  budget_->setToolTip(QStringLiteral("Wall time for the whole search: the trials and the finals"));
  row->addWidget(new QLabel(QStringLiteral("Budget:"), this));
  row->addWidget(budget_);
  for (auto* b : {find_, stop_, use_, openButton}) row->addWidget(b);
  row->addStretch(1);
  layout->addLayout(row);
  summary_ = new QLabel(QStringLiteral("Find fastest searches for the configuration that reaches the target accuracy soonest here."), this);
  summary_->setObjectName(QStringLiteral("tuneSummary"));
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(summary_);
  table_ = new QTableWidget(this);
  table_->setObjectName(QStringLiteral("tuneTable"));
  table_->verticalHeader()->setVisible(false);
  table_->setTextElideMode(Qt::ElideMiddle);
  layout->addWidget(table_, 1);

  connect(find_, &QPushButton::clicked, this, [this] { findFastest(); });
  connect(stop_, &QPushButton::clicked, runner_, &ExperimentRunner::cancel);
  connect(use_, &QPushButton::clicked, this, [this] {
    if (!bestConfig().isEmpty()) Q_EMIT useConfig(bestConfig());
  });
  connect(openButton, &QPushButton::clicked, this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, QStringLiteral("Open a search (written by workbench-cli tune)"), runsRoot_);
    QString error;
    if (!dir.isEmpty() && !open(dir, &error)) summary_->setText(error);
  });
  connect(runner_, &ExperimentRunner::progress, this, [this](const QString& line) {
    summary_->setText(QStringLiteral("Searching (%1): %2").arg(runner_->elapsedText(), line));
    Q_EMIT status(QStringLiteral("Find fastest: ") + line);
  });
  connect(runner_, &ExperimentRunner::finished, this, &TuneView::onFinished);
}

void TuneView::setRunning(bool running) {
  find_->setVisible(!running);
  stop_->setVisible(running);
  budget_->setEnabled(!running);
  if (running) use_->setEnabled(false);
}

bool TuneView::findFastest() {
  if (runner_->isRunning()) return false;
  QString why;
  const QString config = configSource_ ? configSource_(&why) : QString();
  if (config.isEmpty()) {
    summary_->setText(why.isEmpty() ? QStringLiteral("Set a baseline first: the search starts from its experiment.") : why);
    return false;
  }
  const QStringList options = QStringList{QStringLiteral("--budget"), QString::number(budget_->value()) + QLatin1Char('m')} +
                              searchArgs_ + (targetSource_ ? targetSource_() : QStringList());
  // A search cut short on the same experiment and options is continued in its folder (the CLI's rule).
  const CutExperiment asked{QString(), options, readAll(config)};
  const bool continuing = cut_.continues(asked);
  dir_ = continuing ? cut_.dir
                    : QDir(runsRoot_.isEmpty() ? QDir::homePath() : runsRoot_)
                          .filePath(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")) + QLatin1Char('-') + QLatin1String(wb::kinds::kTune));
  cut_ = asked;
  cut_.dir = dir_;
  runner_->start(locateCli(), QStringList{QStringLiteral("--config"), config, QStringLiteral("--out"), dir_} + options);
  setRunning(true);
  summary_->setText(continuing ? QStringLiteral("Searching: continuing the search cut short in %1 (its finished trials and pairs are kept)…").arg(dir_)
                               : QStringLiteral("Searching: starting…"));
  return true;
}

QString TuneView::bestConfig() const {
  const QString f = QDir(dir_).filePath(QString::fromLatin1(proto::kBestConfigFile));
  return !dir_.isEmpty() && QFile::exists(f) ? f : QString();
}

namespace {

// "Best: <its settings>. To the target against the config as given: <its figure>.", read from its
// finalist's estimate (a search written before the figures read as the answers do says the same).
QString bestLine(const proto::TuneRecord& r) {
  for (const proto::TuneFinalist& f : r.finals) {
    if (f.candidate != r.best) continue;
    const stats::SpeedupEstimate e = stats::estimateFromJson(f.estimate.value("to_target", nlohmann::json()));
    return QStringLiteral("Best: %1. To the target against the config as given: %2%3.")
        .arg(qs(r.best_label), qs(compare::figureWithReading(e)), f.method == "composed" ? QStringLiteral(" (by parts)") : QString());
  }
  return QStringLiteral("Best: %1: %2.").arg(qs(r.best_label), qs(r.note));
}

}  // namespace

bool TuneView::open(const QString& dir, QString* error) {
  auto doc = proto::readJsonFile(QFile::encodeName(QDir(dir).filePath(QString::fromLatin1(proto::kTuneFile))).toStdString());
  if (!doc.ok()) {
    if (error) *error = qs(doc.error().message);
    return false;
  }
  const proto::TuneRecord r = proto::readTuneRecord(*doc);
  dir_ = dir;
  fillTable(table_, wb::tune::finalsTable(r));
  QString note = qs(r.note);
  if (!note.isEmpty()) note[0] = note[0].toUpper();
  QString text = r.best.empty() ? QStringLiteral("No pick (%1): %2").arg(qs(r.status), note) : bestLine(r);
  text += QStringLiteral("\n%1 trial(s) in %2, finals %3 · %4")
              .arg(r.trials.size())
              .arg(qs(wb::fmtSeconds(r.trials_s)), qs(wb::fmtSeconds(r.finals_s)), dir);
  summary_->setText(text);
  use_->setEnabled(!bestConfig().isEmpty());
  return true;
}

void TuneView::onFinished(const QString& outDir, bool cancelled, const QString& error) {
  setRunning(false);
  if (!cancelled || outDir.isEmpty()) cut_ = {};  // only a cut search is continued
  QString openError;
  const bool shown = !outDir.isEmpty() && open(outDir, &openError);
  if (cancelled) summary_->setText(summary_->text() + QStringLiteral("\nStopped: the trials and pairs that finished are kept; Find fastest "
                                                                      "on the same experiment and budget continues this search in %1.")
                                                          .arg(outDir));
  else if (!error.isEmpty()) summary_->setText(error + (shown ? QStringLiteral("\n") + summary_->text() : QString()));
  Q_EMIT status(cancelled ? QStringLiteral("Find fastest stopped.") : error.isEmpty() ? QStringLiteral("Find fastest finished.") : error);
}

}  // namespace wb::ui
