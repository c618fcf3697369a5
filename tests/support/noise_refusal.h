#pragma once
// What `workbench-cli noise` promises whatever else runs on the machine (ctest runs a test beside
// each): it measures when two of its repeats or more finished alone, and otherwise refuses (exit 1)
// naming each repeat that did not count. The repeats' own summaries decide which, not the test.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QString>
#include <QStringList>

#include <nlohmann/json.hpp>

namespace wb::test {

// "" when the command's exit and words agree with its repeats' records, else what disagrees.
inline QString noiseRefusalProblem(int rc, const QString& said, const QStringList& runDirs) {
  int alone = 0;
  QStringList unnamed;
  for (const QString& dir : runDirs) {
    QFile f(dir + QStringLiteral("/summary.json"));
    if (!f.open(QIODevice::ReadOnly)) return QStringLiteral("no summary in ") + dir;
    const auto s = nlohmann::json::parse(f.readAll().toStdString(), nullptr, false);
    const bool finished = s.is_object() && (s.value("status", "") == "ok" || s.value("status", "") == "early-stopped");
    if (finished && !s.value("cpu", nlohmann::json::object()).value("contended", false)) ++alone;
    else if (!said.contains(QFileInfo(dir).fileName() + QStringLiteral(" ("))) unnamed << dir;
  }
  if (rc == 0) return alone >= 2 ? QString() : QStringLiteral("measured with fewer than 2 repeats alone: ") + said;
  if (alone >= 2) return QStringLiteral("refused though %1 repeats ran alone: %2").arg(alone).arg(said);
  if (rc != 1 || !said.contains(QStringLiteral("finished uncontended: no spread to measure")))
    return QStringLiteral("not the refusal (exit %1): %2").arg(rc).arg(said);
  if (!unnamed.isEmpty()) return QStringLiteral("the refusal does not name ") + unnamed.join(QStringLiteral(", ")) + QStringLiteral(": ") + said;
  return {};
}

}  // namespace wb::test
