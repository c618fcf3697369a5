// The set-up panel and this machine: its capabilities, the effects measured here (ladders, tries,
// the probe) and the worker probe.
#include "setup/setup_panel.h"

#include <QAbstractSpinBox>
#include <QApplication>
#include <QPointer>
#include <QScrollArea>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <optional>

#include "runs/cli.h"
#include "setup/dataset_picker.h"
#include "setup/json_fields.h"
#include "setup/probe_runner.h"
#include "setup/schema_range.h"
#include "setup/speedups_group.h"
#include "wb/common/choices.h"
#include "wb/common/config_schema.h"
#include "wb/common/paths.h"
#include "wb/common/speedups.h"
#include "wb/proto/command_template.h"
#include "wb/proto/config_json.h"
#include "wb/proto/rundir.h"
#include "wb/probe/record.h"
#include "wb/ladder/speedup_effects.h"

namespace wb::ui {
using nlohmann::json;

json SetupPanel::capabilities() const {
  json caps = caps_;
  if (auto c = proto::configFromJson(configJson()); c.ok()) probe::attachProbe(caps, probe::loadProbe(c.value()));
  return caps;
}

void SetupPanel::setRunsRoot(const QString& root) {
  runsRoot_ = root;
  refreshMeasured();
}

void SetupPanel::refreshMeasured() {
  std::vector<std::filesystem::path> roots{wb::defaultRunsRoot()};
  if (!runsRoot_.isEmpty() && QDir(runsRoot_).absolutePath().toStdString() != roots.front().string())
    roots.insert(roots.begin(), runsRoot_.toStdString());
  ladderEffects_.clear();
  ladderSource_.clear();
  if (auto found = ladder::latestLadder(roots)) {
    // Which experiment the ladder measured: it may not be the one set up now.
    std::string source = found->date;
    if (!found->ladder.rows.empty()) {
      const Config& b = found->ladder.rows.front().step.config;
      source += " (" + b.model.name + " on " + b.data.dataset + ")";
    }
    ladderSource_ = QString::fromStdString(source);
    ladderEffects_ = ladder::ladderEffects(found->ladder, "");
  }
  tryEffects_ = ladder::latestTries(roots);  // Try vs baseline's pairs
  refreshProbe();
}

void SetupPanel::refreshProbe() {
  std::optional<ladder::SpeedupEffect> probe;
  std::optional<probe::ProbeResult> stored;
  if (auto c = proto::configFromJson(configJson()); c.ok()) stored = probe::loadProbe(c.value());
  if (stored) probe = ladder::probeEffect(*stored);
  speedups_->setEffects(ladderEffects_, probe, ladderSource_, tryEffects_);
  speedups_->offerProbe(stored);  // "Use N workers": the user decides
}

void SetupPanel::probeWorkers() {
  if (probe_->isRunning()) return;
  auto parsed = proto::configFromJson(configJson());
  if (!parsed.ok()) {
    Q_EMIT probeFinished(false, QStringLiteral("Not probed: fix the fields marked in the set-up first."));
    return;
  }
  speedups_->setProbing(true, QStringLiteral("Probing: the loader, the step, then each worker count for a few seconds…"));
  probe_->start(proto::configToJson(parsed.value()), probeSeconds_);
}

void SetupPanel::cancelProbe() { probe_->cancel(); }

bool SetupPanel::isProbing() const { return probe_->isRunning(); }

void SetupPanel::onProbeFinished(int outcome, const QString& message) {
  speedups_->setProbing(false);
  const bool ok = ProbeRunner::Outcome(outcome) == ProbeRunner::Outcome::Succeeded && probe_->result();
  refreshProbe();  // what is stored now (the new result, or the one before a cancel or failure), offered
  if (ok) speedups_->setProbeVerdict(message);
  Q_EMIT probeFinished(ok, message);
}

void SetupPanel::setCapabilitiesError(const QString& error) { speedups_->setCapabilitiesError(error); }

void SetupPanel::queryCapabilities() {
  CliQuery::run(this, {QStringLiteral("capabilities"), QStringLiteral("--json")}, true,
                [this](const json& doc, const QString&, const QString& error) {
                  if (doc.is_object() && error.isEmpty()) setCapabilities(doc);
                  else setCapabilitiesError(error.isEmpty() ? QStringLiteral("no answer") : error);
                });
}

void SetupPanel::setDatasetFolder(const QString& dir) { dataset_->setFolder(dir); }

}  // namespace wb::ui
