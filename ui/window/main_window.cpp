#include "window/main_window.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QIcon>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QDirIterator>
#include <QGuiApplication>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>
#include <QVBoxLayout>

#include "compare/compare_view.h"
#include "compare/experiment_view.h"
#include "compare/experiment_runner.h"
#include "compare/tune_view.h"
#include "plots/live_plots.h"
#include "runs/cli.h"
#include "runs/experiment_runs.h"
#include "runs/run_history.h"
#include "runs/run_queue.h"
#include "runs/runs_model.h"
#include "setup/setup_panel.h"
#include "setup/speedups_group.h"
#include "window/about_dialog.h"
#include "window/help_tour.h"
#include "window/runs_panel.h"
#include "wb/common/paths.h"
#include "wb/proto/config_json.h"
#include "wb/proto/rundir.h"
#include "wb/common/config_schema.h"
#include "wb/compare/compare.h"
#include "wb/ladder/ladder.h"
#include "wb/ladder/speedup_effects.h"
#include "wb/kinds/experiment_kinds.h"

namespace wb::ui {
using nlohmann::json;

QIcon applicationIcon() {
  QIcon icon = QIcon::fromTheme(QStringLiteral("speedup-workbench"));
  if (!icon.isNull()) return icon;
  const QString app = QCoreApplication::applicationDirPath();
  for (const QString& c : {QDir::cleanPath(app + QStringLiteral("/../share/icons/hicolor/scalable/apps/speedup-workbench.svg")),
                           QString::fromUtf8(WB_SOURCE_ICON)})
    if (QFileInfo::exists(c)) return QIcon(c);
  return {};
}

MainWindow::MainWindow(const Options& options, QWidget* parent) : QMainWindow(parent), options_(options) {
  setObjectName(QStringLiteral("mainWindow"));
  setWindowTitle(QStringLiteral("Speedup Workbench"));
  setWindowIcon(applicationIcon());
  setAcceptDrops(true);

  runs_ = new RunsModel(this);
  queue_ = new RunQueue(runs_, this);
  history_ = new RunHistory(runs_, this);
  setup_ = new SetupPanel;
  plots_ = new LivePlots(runs_);
  compare_ = new CompareView(runs_);
  experiments_ = new ExperimentView(runs_);
  tryRunner_ = new ExperimentRunner(this, QLatin1String(wb::kinds::kTry));
  connect(tryRunner_, &ExperimentRunner::progress, this, &MainWindow::onTryProgress);
  connect(tryRunner_, &ExperimentRunner::finished, this, &MainWindow::onTryFinished);
  tryTick_.setInterval(1000);  // a part can run for minutes without an event: the time still moves
  connect(&tryTick_, &QTimer::timeout, this, [this] { onTryProgress({}); });
  runsPanel_ = new RunsPanel(runs_, queue_);

  buildActions();
  buildLayout();

  connect(setup_, &SetupPanel::validityChanged, this, &MainWindow::updateActions);
  connect(setup_, &SetupPanel::changed, this, &MainWindow::updateActions);  // another refusal: another tooltip
  connect(setup_, &SetupPanel::tryRequested, this, &MainWindow::trySpeedup);
  connect(setup_->speedups(), &SpeedupsGroup::tryCancelRequested, this, &MainWindow::cancelTry);
  // The probe's verdict is the workers row's (word-wrapped, with its tooltip); the status bar
  // says in one short line that it ended.
  connect(setup_, &SetupPanel::probeFinished, this, [this](bool ok, const QString& text) {
    showMessage(ok ? QStringLiteral("Probe finished: its recommendation is under Loader workers.") : text.section(QLatin1Char('.'), 0, 0) + QLatin1Char('.'));
  });
  connect(queue_, &RunQueue::runStarted, this, &MainWindow::updateActions);
  connect(queue_, &RunQueue::runFinished, this, &MainWindow::onRunFinished);
  connect(queue_, &RunQueue::idle, this, [this] {
    updateActions();
    if (quitWhenIdle_) QTimer::singleShot(0, this, &QWidget::close);
  });
  connect(runsPanel_, &RunsPanel::message, this, &MainWindow::showMessage);
  connect(runsPanel_, &RunsPanel::currentRunChanged, this, &MainWindow::updateActions);
  connect(runs_, &QAbstractItemModel::dataChanged, this, &MainWindow::updateActions);
  connectExperiments();

  QString root = options_.runsRoot;
  if (options_.useSettings) restoreSettings();  // the app's window: fitted to its screen there
  if (root.isEmpty() && options_.useSettings) root = QSettings().value(QStringLiteral("runs/root")).toString();
  if (root.isEmpty()) root = QString::fromStdString(wb::defaultRunsRoot().string());
  setRunsRoot(root);
  if (options_.useSettings) {
    // The baseline and the newest run come back on the plots.
    const QString base = QSettings().value(QStringLiteral("runs/baseline")).toString();
    if (Run* b = runs_->findByDir(base)) runs_->setBaseline(b);
    if (Run* newest = runs_->runAt(0)) runs_->setShown(newest, true);
  }
  if (options_.queryCli) setup_->queryCapabilities();
  updateActions();
}

MainWindow::~MainWindow() = default;

void MainWindow::buildActions() {
  buildFileMenu();
  buildRunMenu();
  buildViewMenu();
  QMenu* help = menuBar()->addMenu(QStringLiteral("&Help"));
  help->addAction(QStringLiteral("&Tour"), QKeySequence::HelpContents, this, &MainWindow::showTour);
  help->addAction(QStringLiteral("&About Speedup Workbench"), this, &MainWindow::showAbout);

  QToolBar* bar = addToolBar(QStringLiteral("Runs"));
  bar->setObjectName(QStringLiteral("runsToolbar"));
  bar->setMovable(false);
  bar->setToolButtonStyle(Qt::ToolButtonTextOnly);
  bar->addAction(runAction_);
  bar->addAction(stopAction_);
  bar->addAction(sideBySideAction_);
  bar->addSeparator();
  bar->addAction(exportAction_);
}

void MainWindow::buildFileMenu() {
  QMenu* file = menuBar()->addMenu(QStringLiteral("&File"));
  file->addAction(QStringLiteral("&Open experiment…"), QKeySequence::Open, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, QStringLiteral("Open experiment"), QString(),
                                                      QStringLiteral("Experiment (*.json);;All files (*)"));
    QString err;
    if (!path.isEmpty() && !openExperiment(path, &err)) QMessageBox::warning(this, QStringLiteral("Open experiment"), err);
  });
  file->addAction(QStringLiteral("&Save experiment as…"), QKeySequence::Save, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, QStringLiteral("Save experiment"),
                                                      QString::fromStdString(setup_->configJson().value("name", std::string("experiment"))) +
                                                          QStringLiteral(".json"),
                                                      QStringLiteral("Experiment (*.json)"));
    QString err;
    if (!path.isEmpty() && !saveExperiment(path, &err)) QMessageBox::warning(this, QStringLiteral("Save experiment"), err);
  });
  file->addSeparator();
  file->addAction(QStringLiteral("Open &run folder…"), QKeySequence(QStringLiteral("Ctrl+Shift+O")), this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, QStringLiteral("Open run folder"), history_->root());
    if (!dir.isEmpty()) openPath(dir);
  });
  file->addAction(QStringLiteral("Runs &folder…"), this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, QStringLiteral("Runs folder"), history_->root());
    if (!dir.isEmpty()) setRunsRoot(dir);
  });
  exportAction_ = file->addAction(QStringLiteral("&Export…"), QKeySequence(QStringLiteral("Ctrl+E")), this, [this] {
    if (exportsExperiment()) return experiments_->exportDialog();
    viewTabs_->setCurrentWidget(compare_);
    compare_->exportDialog();
  });
  file->addSeparator();
  file->addAction(QStringLiteral("&Quit"), QKeySequence::Quit, this, &QWidget::close);
}

void MainWindow::buildRunMenu() {
  QMenu* run = menuBar()->addMenu(QStringLiteral("&Run"));
  runAction_ = run->addAction(QStringLiteral("&Run experiment"), this, [this] { runExperiment(); });
  runAction_->setShortcuts({QKeySequence(QStringLiteral("Ctrl+R")), QKeySequence(Qt::Key_F5)});
  runAction_->setObjectName(QStringLiteral("action.run"));
  stopAction_ = run->addAction(QStringLiteral("&Stop run"), this, &MainWindow::stopSelectedOrNewest);
  stopAction_->setShortcuts({QKeySequence(QStringLiteral("Ctrl+.")), QKeySequence(QStringLiteral("Shift+F5"))});
  stopAction_->setObjectName(QStringLiteral("action.stop"));
  stopAllAction_ = run->addAction(QStringLiteral("Stop &all"), this, [this] {
    queue_->stopAll();
    cancelTry();
  });
  run->addSeparator();
  sideBySideAction_ = run->addAction(QStringLiteral("Run side by side"));
  sideBySideAction_->setCheckable(true);
  sideBySideAction_->setToolTip(QStringLiteral("Start queued runs at once instead of one after another (timings then share the machine)"));
  connect(sideBySideAction_, &QAction::toggled, queue_, &RunQueue::setSideBySide);
  run->addSeparator();
  run->addAction(QStringLiteral("Reset set-up to defaults"), this, [this] {
    setup_->resetToDefaults();
    showMessage(QStringLiteral("Set-up reset to the default experiment: Fashion-MNIST, lenet, 1 epoch, every speedup off."));
  });
}

void MainWindow::buildViewMenu() {
  QMenu* view = menuBar()->addMenu(QStringLiteral("&View"));
  QMenu* themeMenu = view->addMenu(QStringLiteral("&Theme"));
  auto* group = new QActionGroup(this);
  for (Theme t : {Theme::System, Theme::Light, Theme::Dark}) {
    const QString name = themeToString(t);
    QAction* a = themeMenu->addAction(name.left(1).toUpper() + name.mid(1), this, [this, t] { setTheme(t); });
    a->setCheckable(true);
    a->setData(name);
    group->addAction(a);
  }
  connect(themeMenu, &QMenu::aboutToShow, this, [this, group] {
    for (QAction* a : group->actions()) a->setChecked(a->data().toString() == themeToString(theme_));
  });
  // Not QKeySequence::Refresh: on Linux it is F5 and Ctrl+R, which Run experiment has.
  view->addAction(QStringLiteral("Refresh runs"), QKeySequence(QStringLiteral("Ctrl+Shift+R")), this, [this] {
    showMessage(QStringLiteral("Runs folder read again: %1 new run(s).").arg(history_->rescan()));
  });
}

void MainWindow::buildLayout() {
  // Left: the set-up, scrolling, with the Run button always in view under it.
  auto* left = new QWidget;
  auto* leftLayout = new QVBoxLayout(left);
  leftLayout->setContentsMargins(0, 0, 0, 0);
  auto* scroll = new QScrollArea(left);
  scroll->setWidgetResizable(true);
  // Never cut on the right: a pane narrower than the set-up's narrowest scrolls sideways.
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  scroll->setObjectName(QStringLiteral("setupScroll"));
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setWidget(setup_);
  leftLayout->addWidget(scroll, 1);
  runButton_ = new QPushButton(QStringLiteral("Run experiment"), left);
  runButton_->setObjectName(QStringLiteral("runButton"));
  runButton_->setDefault(true);
  runButton_->setMinimumHeight(runButton_->sizeHint().height() + 8);
  connect(runButton_, &QPushButton::clicked, runAction_, &QAction::trigger);
  auto* buttonRow = new QHBoxLayout;
  buttonRow->setContentsMargins(6, 4, 6, 6);
  buttonRow->addWidget(runButton_);
  leftLayout->addLayout(buttonRow);
  left->setMinimumWidth(setup_->minimumSizeHint().width() + 24);

  viewTabs_ = new QTabWidget;
  viewTabs_->setObjectName(QStringLiteral("viewTabs"));
  viewTabs_->addTab(plots_, QStringLiteral("Live"));
  viewTabs_->addTab(compare_, QStringLiteral("Compare"));
  viewTabs_->addTab(experiments_, QStringLiteral("Experiments"));

  vsplit_ = new QSplitter(Qt::Vertical);
  vsplit_->addWidget(viewTabs_);
  vsplit_->addWidget(runsPanel_);
  vsplit_->setStretchFactor(0, 3);
  vsplit_->setStretchFactor(1, 1);
  vsplit_->setChildrenCollapsible(false);

  hsplit_ = new QSplitter(Qt::Horizontal);
  hsplit_->addWidget(left);
  hsplit_->addWidget(vsplit_);
  hsplit_->setStretchFactor(0, 0);
  hsplit_->setStretchFactor(1, 1);
  hsplit_->setChildrenCollapsible(false);
  setCentralWidget(hsplit_);
  hsplit_->setSizes({400, 880});
  vsplit_->setSizes({480, 220});

  rootLabel_ = new QLabel(this);
  rootLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  statusBar()->addPermanentWidget(rootLabel_);
  resize(1280, 800);
}

// Never larger than the screen it opens on (1280x800 on a 1024x700 screen: its edges unreachable).
void MainWindow::fitScreen() {
  const QScreen* screen = this->screen() ? this->screen() : QGuiApplication::primaryScreen();
  if (!screen) return;
  const QRect avail = screen->availableGeometry();
  const QSize frame = frameGeometry().size() - geometry().size();  // the title bar and borders, once shown
  const QSize fits = size().boundedTo(avail.size() - frame).expandedTo(minimumSizeHint());
  if (fits != size()) resize(fits);
  if (!avail.contains(frameGeometry())) move(avail.topLeft());
}

// The whole message is the status bar's tooltip: a long one is cut at the runs folder's label.
void MainWindow::showMessage(const QString& text) {
  // Elided before the runs folder's label, not drawn into it; the whole message is the tooltip.
  const int room = statusBar()->width() - (rootLabel_ ? rootLabel_->width() : 0) - 32;
  const QString line = QString(text).replace(QLatin1Char('\n'), QLatin1Char(' '));
  statusBar()->showMessage(room > 100 ? statusBar()->fontMetrics().elidedText(line, Qt::ElideRight, room) : line, 10000);
  statusBar()->setToolTip(text);
}

int MainWindow::openExperimentRuns(const QString& dir) {
  // Its runs lie in its folder at any depth (a search's trials/<id>/, finals/<id>/pair-1/...).
  QList<Run*> opened;
  QDirIterator it(dir, QDir::Dirs | QDir::NoDotAndDotDot, QDirIterator::Subdirectories);
  while (it.hasNext()) {
    const QString sub = it.next();
    if (!proto::RunDir{sub.toStdString()}.looksLikeRun()) continue;
    if (Run* run = history_->openDirectory(sub)) opened << run;
  }
  QString which;
  const QList<Run*> drawn = answerRuns(dir, opened, &which);
  for (Run* r : runs_->runs()) runs_->setShown(r, drawn.contains(r) || r == runs_->baseline());
  const QString name = QFileInfo(dir).fileName();
  if (opened.isEmpty()) showMessage(QStringLiteral("%1 has no runs yet.").arg(name));
  else if (drawn.size() == opened.size()) showMessage(QStringLiteral("%1: its %2 run(s) are listed and on the plots.").arg(name).arg(opened.size()));
  else
    showMessage(QStringLiteral("%1: its %2 runs are listed; %3 on the plots (%4): tick others in the list.")
                    .arg(name).arg(opened.size()).arg(drawn.size()).arg(which));
  return int(opened.size());
}

void MainWindow::setRunsRoot(const QString& root) {
  // Runs of the previous root that are not running and not open elsewhere leave the list.
  if (!history_->root().isEmpty() && QDir(root).absolutePath() != history_->root()) {
    const QString old = history_->root() + QLatin1Char('/');
    const auto runs = runs_->runs();
    for (Run* r : runs)
      if (r->origin() == Run::Origin::History && r->runDir().startsWith(old) && r != runs_->baseline()) runs_->removeRun(r);
  }
  queue_->setRunsRoot(QDir(root).absolutePath());
  history_->setRoot(root);
  setup_->setRunsRoot(history_->root());
  compare_->setRunsRoot(history_->root());
  experiments_->setRunsRoot(history_->root());
  // The folder elided in the middle: the status bar's messages keep most of the width.
  const QString folder = QDir::toNativeSeparators(history_->root());
  rootLabel_->setText(QStringLiteral("Runs: %1").arg(rootLabel_->fontMetrics().elidedText(folder, Qt::ElideMiddle, 260)));
  rootLabel_->setToolTip(QStringLiteral("Runs folder: %1\nworkbench-cli: %2").arg(folder, queue_->cliPath()));
}

void MainWindow::updateActions() {
  const bool valid = setup_->isValid();
  runAction_->setEnabled(valid);
  runButton_->setEnabled(valid);
  // Refused: the tooltip names the field (its own label) and what it takes.
  runButton_->setToolTip(valid ? QStringLiteral("Ctrl+R") : setup_->whyNotValid());
  runAction_->setToolTip(valid ? runAction_->text().remove(QLatin1Char('&')) : setup_->whyNotValid());
  bool anyActive = false;
  for (Run* r : runs_->runs())
    if (isActive(r->status()) || r->status() == RunStatus::Queued) anyActive = true;
  anyActive = anyActive || tryRunner_->isRunning();
  stopAction_->setEnabled(anyActive);
  stopAllAction_->setEnabled(anyActive);
  runButton_->setText(queue_->activeCount() > 0 && !queue_->sideBySide() ? QStringLiteral("Queue experiment")
                                                                          : QStringLiteral("Run experiment"));
}

bool MainWindow::openExperiment(const QString& path, QString* error) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) {
    if (error) *error = QStringLiteral("Cannot open %1: %2").arg(path, f.errorString());
    return false;
  }
  const QByteArray bytes = f.readAll();
  json doc = json::parse(bytes.constData(), bytes.constData() + bytes.size(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    if (error) *error = QStringLiteral("%1 is not a JSON experiment (an object like the one Save writes).").arg(path);
    return false;
  }
  // Invalid fields still load: each shows its message beside its widget.
  setup_->setConfigJson(doc);
  showMessage(QStringLiteral("Opened %1").arg(path));
  return true;
}

QStringList MainWindow::setupChanges(const QString& path) const {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  const QByteArray bytes = f.readAll();
  auto next = proto::configFromJson(json::parse(bytes.constData(), bytes.constData() + bytes.size(), nullptr, false));
  auto now = proto::configFromJson(setup_->configJson());
  if (!next.ok() || !now.ok()) return {};
  QStringList out;
  for (const auto& c : compare::configDiff(proto::configToJson(now.value()), proto::configToJson(next.value()))) {
    const FieldSpec* spec = findFieldSpec(c.path);
    out << QStringLiteral("%1: %2 \u2192 %3")
               .arg(spec ? QString::fromUtf8(spec->label) : QString::fromStdString(c.path), QString::fromStdString(c.before),
                    QString::fromStdString(c.after));
  }
  return out;
}

// An experiment's result into the set-up (Find fastest's best, a try's setting, a ladder's kept
// one): what it changes is said, field by field, before it does.
void MainWindow::useResult(const QString& path, const QString& what) {
  const QStringList changes = setupChanges(path);
  if (!changes.isEmpty() && options_.askBeforeUse &&
      QMessageBox::question(this, what,
                            QStringLiteral("%1 changes the set-up:\n\n\u2022 %2\n\nChange it?").arg(what, changes.join(QStringLiteral("\n\u2022 ")))) !=
          QMessageBox::Yes)
    return;
  QString error;
  if (!openExperiment(path, &error)) return showMessage(error);
  showMessage(changes.isEmpty() ? QStringLiteral("%1: the set-up already has it.").arg(what)
                                : QStringLiteral("%1 changed %2").arg(what, changes.join(QStringLiteral("; "))));
}

// What Run ladder and Find fastest start from with Your script set: the set-up (its runs are the
// script's, whose config.json is the script's own), written with the command into the runs
// folder's .window/. Without it, nothing: they take the baseline's.
QString MainWindow::searchExperiment(QString* why) {
  if (setup_->userCommand().isEmpty()) return QString();  // the baseline's (ExperimentView's own rule)
  auto parsed = proto::configFromJson(setup_->configJson());
  if (!parsed.ok() || !setup_->isValid()) {
    *why = QStringLiteral("Fix the set-up first: with Your script, the ladder and Find fastest start from it.");
    return QString();
  }
  const QString dir = QDir(history_->root()).filePath(QStringLiteral(".window"));
  const QString path = QDir(dir).filePath(QString::fromStdString(makeRunId("experiment")) + QStringLiteral(".json"));
  if (!QDir().mkpath(dir) || !proto::writeJsonAtomic(path.toStdString(), setup_->withUserCommand(proto::configToJson(parsed.value()))).ok()) {
    *why = QStringLiteral("Cannot write the experiment into %1.").arg(dir);
    return QString();
  }
  return path;
}

bool MainWindow::saveExperiment(const QString& path, QString* error) {
  const json doc = setup_->configJson();
  // Save what the CLI would run: every field, defaults filled in (invalid set-ups as they are).
  auto parsed = proto::configFromJson(doc);
  const json out = setup_->withUserCommand(parsed.ok() ? proto::configToJson(parsed.value()) : doc);
  if (auto st = proto::writeJsonAtomic(path.toStdString(), out); !st.ok()) {
    if (error) *error = QString::fromStdString(st.error().message);
    return false;
  }
  showMessage(QStringLiteral("Saved %1").arg(path));
  return true;
}

bool MainWindow::openPath(const QString& path) {
  const QFileInfo fi(path);
  if (fi.isFile() && fi.suffix().compare(QLatin1String("json"), Qt::CaseInsensitive) == 0) {
    QString err;
    if (!openExperiment(fi.absoluteFilePath(), &err)) showMessage(err);
    return err.isEmpty();
  }
  if (!fi.isDir()) {
    showMessage(QStringLiteral("%1: drop a dataset folder, a run folder, the folder of a try, ladder or search, or an experiment .json.").arg(path));
    return false;
  }
  if (wb::kinds::kindOfFolder(fi.absoluteFilePath().toStdString())) return openExperimentFolder(fi.absoluteFilePath());
  if (proto::RunDir{fi.absoluteFilePath().toStdString()}.looksLikeRun()) {
    QString err;
    Run* run = history_->openDirectory(fi.absoluteFilePath(), &err);
    if (!run) {
      showMessage(err);
      return false;
    }
    runs_->setShown(run, true);
    runsPanel_->selectRun(run);
    showMessage(QStringLiteral("Opened run %1").arg(run->name()));
    return true;
  }
  setup_->setDatasetFolder(fi.absoluteFilePath());
  showMessage(QStringLiteral("Dataset folder: %1 (checking it…)").arg(fi.absoluteFilePath()));
  return true;
}

// A try's, a ladder's or a search's folder: the Experiments tab, its answer first.
bool MainWindow::openExperimentFolder(const QString& dir) {
  QString err;
  if (!experiments_->openFolder(dir, &err)) {
    showMessage(err);
    return false;
  }
  viewTabs_->setCurrentWidget(experiments_);
  showMessage(QStringLiteral("Opened %1").arg(dir));
  return true;
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (!event->mimeData()->hasUrls()) return;
  for (const QUrl& u : event->mimeData()->urls())
    if (u.isLocalFile()) {
      event->acceptProposedAction();
      return;
    }
}

void MainWindow::dropEvent(QDropEvent* event) {
  for (const QUrl& u : event->mimeData()->urls())
    if (u.isLocalFile()) openPath(u.toLocalFile());
  event->acceptProposedAction();
}

void MainWindow::setTheme(Theme theme) {
  theme_ = theme;
  applyTheme(theme);
  if (options_.useSettings) QSettings().setValue(QStringLiteral("view/theme"), themeToString(theme));
}

void MainWindow::showAbout() {
  if (!about_) {
    about_ = new AboutDialog(this);
    about_->setAttribute(Qt::WA_DeleteOnClose);
    about_->query();
  }
  about_->show();
  about_->raise();
}

void MainWindow::showTour() {
  if (!tour_) {
    tour_ = new HelpTour(this);
    tour_->setAttribute(Qt::WA_DeleteOnClose);
    tour_->load();
  }
  tour_->show();
  tour_->raise();
}

void MainWindow::restoreSettings() {
  QSettings s;
  restoreGeometry(s.value(QStringLiteral("window/geometry")).toByteArray());
  fitScreen();  // the default size, or one saved on a larger screen
  hsplit_->restoreState(s.value(QStringLiteral("window/hsplit")).toByteArray());
  vsplit_->restoreState(s.value(QStringLiteral("window/vsplit")).toByteArray());
  sideBySideAction_->setChecked(s.value(QStringLiteral("runs/sideBySide"), false).toBool());
  theme_ = themeFromString(s.value(QStringLiteral("view/theme")).toString());
  const QByteArray last = s.value(QStringLiteral("setup/lastExperiment")).toString().toUtf8();
  if (!last.isEmpty()) {
    json doc = json::parse(last.constData(), last.constData() + last.size(), nullptr, false);
    if (doc.is_object()) setup_->setConfigJson(doc);
  }
}

void MainWindow::saveSettings() {
  QSettings s;
  s.setValue(QStringLiteral("window/geometry"), saveGeometry());
  s.setValue(QStringLiteral("window/hsplit"), hsplit_->saveState());
  s.setValue(QStringLiteral("window/vsplit"), vsplit_->saveState());
  s.setValue(QStringLiteral("runs/sideBySide"), sideBySideAction_->isChecked());
  s.setValue(QStringLiteral("runs/root"), history_->root());
  s.setValue(QStringLiteral("runs/baseline"), runs_->baseline() ? runs_->baseline()->runDir() : QString());
  s.setValue(QStringLiteral("setup/lastExperiment"), QString::fromStdString(setup_->withUserCommand(setup_->configJson()).dump()));
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (queue_->isBusy()) {
    QMessageBox box(QMessageBox::Question, QStringLiteral("Runs are still going"),
                    QStringLiteral("%1 run(s) running and %2 queued. No run is left behind when the window closes.")
                        .arg(queue_->activeCount())
                        .arg(queue_->queuedCount()),
                    QMessageBox::NoButton, this);
    QPushButton* stop = box.addButton(QStringLiteral("Stop them and quit"), QMessageBox::DestructiveRole);
    QPushButton* wait = box.addButton(QStringLiteral("Quit when they finish"), QMessageBox::AcceptRole);
    box.addButton(QMessageBox::Cancel);
    box.exec();
    if (box.clickedButton() == stop) {
      quitWhenIdle_ = true;
      queue_->stopAll();
      showMessage(QStringLiteral("Stopping the runs; the window closes when they have ended."));
    } else if (box.clickedButton() == wait) {
      quitWhenIdle_ = true;
      showMessage(QStringLiteral("The window closes when the runs have finished."));
    } else {
      quitWhenIdle_ = false;
    }
    event->ignore();
    return;
  }
  if (options_.useSettings) saveSettings();
  event->accept();
}

}  // namespace wb::ui
