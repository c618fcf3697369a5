#pragma once
// Reading an experiment's events as it runs (`ladder` / `try --events-stdout`), for tests that
// stop it at a chosen point.
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QString>

#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/proto/events.h"

namespace wb::test {

// Reads events into `events` until `until` holds for one (true), the process ends or the time
// runs out (false).
inline bool readEvents(QProcess& p, std::vector<nlohmann::json>& events,
                       const std::function<bool(const nlohmann::json&)>& until, int timeoutMs) {
  QElapsedTimer clock;
  clock.start();
  while (clock.elapsed() < timeoutMs) {
    while (p.canReadLine()) {
      auto ev = wb::proto::decodeEvent(p.readLine().trimmed().toStdString());
      if (!ev) continue;
      events.push_back(*ev);
      if (until(*ev)) return true;
    }
    if (p.state() == QProcess::NotRunning) return false;
    p.waitForReadyRead(100);
  }
  return false;
}

// True once the run folder's events hold a training step (the run is mid-training).
inline bool trainingIn(const QString& runDir) {
  QFile f(runDir + QStringLiteral("/events.jsonl"));
  return f.open(QIODevice::ReadOnly) && f.readAll().contains("\"type\":\"step\"");
}

}  // namespace wb::test
