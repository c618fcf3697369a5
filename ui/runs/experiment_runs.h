#pragma once
// What an experiment's folder (a try's, a ladder's, a search's) draws when the window opens it:
// its answer, not its dozens of runs.
#include <QList>
#include <QString>

#include "runs/run.h"

namespace wb::ui {

// At most this many of an experiment's runs are drawn when it is opened: more curves than that
// bury the plot under their legend.
inline constexpr int kDrawnAtOpen = 10;

// The runs that carry the answer of the experiment in `dir`, from its `runs`: its runs to the
// target (a try's or a finalist's variant runs) when it has any, else the runs in its kind's
// answer_runs folder (a search's finals/: wb/kinds/experiment_kinds.h), else all; the first
// kDrawnAtOpen of those. *why says which, in words.
QList<Run*> answerRuns(const QString& dir, const QList<Run*>& runs, QString* why);

// The folder of the experiment (a try, a ladder, a search) that `runDir` lies in, at any depth;
// "" for a run of its own.
QString experimentFolderOf(const QString& runDir);

}  // namespace wb::ui
