// What an experiment opened in the window draws (experiment_runs.h).
#include "runs/experiment_runs.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include "wb/kinds/experiment_kinds.h"

namespace wb::ui {

QList<Run*> answerRuns(const QString& dir, const QList<Run*>& runs, QString* why) {
  QList<Run*> toTarget, finals;
  const wb::kinds::ExperimentKind* kind = wb::kinds::kindOfFolder(QFile::encodeName(dir).toStdString());
  const QString answerRunsDir = kind ? QString::fromLatin1(kind->answer_runs) : QString();
  const QString finalsDir = QDir::cleanPath(QDir(dir).absoluteFilePath(answerRunsDir)) + QLatin1Char('/');
  for (Run* r : runs) {
    const auto train = r->config().find("train");
    if (train != r->config().end() && train->is_object() && train->value("stop_at_accuracy", 0.0) > 0) toTarget << r;
    if (!answerRunsDir.isEmpty() && QDir::cleanPath(QFileInfo(r->runDir()).absoluteFilePath()).startsWith(finalsDir)) finals << r;
  }
  QList<Run*> drawn = !toTarget.isEmpty() ? toTarget : !finals.isEmpty() ? finals : runs;
  *why = !toTarget.isEmpty() ? QStringLiteral("its runs to the target") : !finals.isEmpty() ? QStringLiteral("its finalists' runs")
                                                                                             : QStringLiteral("its runs");
  if (drawn.size() > kDrawnAtOpen) {
    drawn = drawn.mid(0, kDrawnAtOpen);
    *why = QStringLiteral("the first %1 of %2").arg(kDrawnAtOpen).arg(*why);
  }
  return drawn;
}

QString experimentFolderOf(const QString& runDir) {
  QDir dir(QFileInfo(runDir).absoluteFilePath());
  while (dir.cdUp())  // the run's own folder holds no experiment's record; its parents may
    if (wb::kinds::kindOfFolder(QFile::encodeName(dir.absolutePath()).toStdString())) return dir.absolutePath();
  return {};
}

}  // namespace wb::ui
