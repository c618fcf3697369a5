#pragma once
// The runs root as a history: every run directory under it appears in the RunsModel (CLI runs
// included), new ones as they are created, and a run whose events.jsonl is still growing (no
// summary.json yet) is followed live with wb::proto::EventFileReader. Run directories from
// anywhere else (copied from a cluster, dropped on the window) can be opened too. A run sent to a
// Slurm cluster as an array task shows its job's id and state (wb/proto/cluster_jobs.h): queued
// while the job is pending, failed with Slurm's words when Slurm ended it before its summary.
//
// Thread affinity: GUI thread. Ownership: QObject tree; the Runs belong to the model.
#include <QElapsedTimer>
#include <QFileSystemWatcher>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QTimer>

#include <memory>
#include <vector>

#include "runs/run.h"
#include "wb/proto/events.h"

namespace wb::ui {

class RunsModel;

class RunHistory : public QObject {
  Q_OBJECT
 public:
  explicit RunHistory(RunsModel* model, QObject* parent = nullptr);
  ~RunHistory() override;

  // Scans root now and watches it for new run directories. The folder need not exist yet.
  void setRoot(const QString& root);
  const QString& root() const { return root_; }

  // Adds the run directories under root that the model does not have yet, and drops history
  // runs whose directory is gone. Returns how many were added.
  int rescan();

  // Opens one run directory from anywhere (or returns the Run already listed for it). On
  // failure returns nullptr and says why in *error.
  Run* openDirectory(const QString& dir, QString* error = nullptr);

  // How often growing event files are read, and how long a run may stay silent before it is
  // shown as incomplete rather than running (it is still followed).
  void setPollIntervalMs(int ms) { poll_.setInterval(ms); }
  void setQuietAfterSeconds(double s) { quietAfterS_ = s; }

  bool isFollowing(const Run* run) const;

 Q_SIGNALS:
  void scanned(int added);

 private:
  struct Followed {
    QPointer<Run> run;
    std::unique_ptr<proto::EventFileReader> reader;
    QElapsedTimer sinceGrowth;
    qint64 lastSize = 0;  // a file that shrinks was rewritten: its curves start over
    QElapsedTimer sinceCluster;  // when its cluster job's state was last read
  };
  Run* addDirectory(const QString& dir, bool atTop);
  void follow(Run* run);
  void pollFollowed();
  bool pollOne(Followed& f);  // false when the run is over (stop following)

  RunsModel* model_;
  QString root_;
  QFileSystemWatcher watcher_;
  QTimer rescanSoon_;
  QTimer poll_;
  double quietAfterS_ = 120.0;
  std::vector<Followed> followed_;
};

}  // namespace wb::ui
