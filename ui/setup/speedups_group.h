#pragma once
// The speedups of wb/common/speedups.h's table, as one group: a row each, in the table's order,
// its control built from its descriptor (Speedup::control) and its field's schema. Each toggle has
// a one-line
// explanation and its availability on this machine (from `workbench-cli capabilities --json`):
// a speedup this machine cannot do is disabled with the reason beside it, never hidden.
// Widgets prevent invalid combinations (sharding needs devices > 1; the early-stopping mode
// follows the monitor); the JSON they produce is the speedups.* part of the config.
//
// Each row also shows what the speedup measured on this machine (setEffects: the newest ladder,
// the stored worker probe, with their dates) and has a "Try vs baseline" button (tryRequested:
// the window runs the baseline with only that speedup changed). The workers row has a "Probe"
// button (probeRequested; applyProbe fills the toggle with the recommended count), a Cancel
// button while the probe runs (probeCancelRequested).
//
// Widget object names are the config paths ("speedups.workers"), for tests and error labels;
// "effect:<key>", "try:<key>", "speedups.workers.probe" for the measured lines and buttons.
// Thread affinity: GUI thread.
#include <QGroupBox>
#include <QHash>

#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "wb/common/speedups.h"
#include "wb/ladder/speedup_effects.h"

class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QWidget;
class QVBoxLayout;

namespace wb::proto {
struct Capabilities;
}

namespace wb::ui {

class FieldErrors;

class SpeedupsGroup : public QGroupBox {
  Q_OBJECT
 public:
  SpeedupsGroup(FieldErrors* errors, QWidget* parent = nullptr);

  void readFrom(const nlohmann::json& doc);
  void writeTo(nlohmann::json& doc) const;

  // caps: the capabilities document. Enables/disables each toggle with its reason.
  void setCapabilities(const nlohmann::json& caps);
  // The capabilities could not be read: every toggle stays enabled, and the reason is shown.
  void setCapabilitiesError(const QString& error);
  // The machine's suggested loader workers (capabilities speedups.workers.default), or -1.
  int suggestedWorkers() const { return suggestedWorkers_; }
  // The availability line shown for a toggle key ("pin_memory", "precision", ...).
  QString availabilityText(const QString& key) const;

  // What each speedup measured here: the newest ladder's effects and the stored probe (either
  // may be empty). Rows without a measurement say "not measured on this machine yet".
  // ladderSource names the ladder once, above the rows ("2026-12-01 08:55 UTC, lenet on …").
  // tries: the newest Try vs baseline of each speedup (its estimate with interval and verdict).
  void setEffects(const std::map<std::string, ladder::SpeedupEffect>& ladder,
                  const std::optional<ladder::SpeedupEffect>& probe, const QString& ladderSource = QString(),
                  const std::map<std::string, ladder::SpeedupEffect>& tries = {});
  QString effectText(const QString& key) const;
  // A probe is running (the button turns into Cancel: probeCancelRequested) or has finished.
  void setProbing(bool running, const QString& status = QString());
  bool isProbing() const { return probing_; }
  // Sets Loader workers to the probe's recommendation.
  void applyProbe(const probe::ProbeResult& result);
  // Offers the probe's recommendation as a "Use N" button beside Probe (the count set is never
  // changed without a click); nullopt withdraws the offer.
  void offerProbe(const std::optional<probe::ProbeResult>& result);
  // The probe's whole verdict, as the tooltip of the workers row's measured line.
  void setProbeVerdict(const QString& verdict);
  QPushButton* useProbeButton() const { return useProbe_; }
  // A warning under a speedup's row (early stopping cannot trigger in this experiment), "" to hide
  // it; its label is "caveat:<key>".
  void setCaveat(const QString& key, const QString& text);
  // The warnings shown, in the rows' order.
  QStringList caveats() const;
  QPushButton* tryButton(const QString& key) const;
  // A try is running on `key`: its button turns into "Cancel try" (tryCancelRequested), the
  // other rows' Try buttons wait, and `status` (its pairs so far) stands under the row; "" when
  // none runs (the buttons come back; setEffects writes the rows).
  void setTrying(const QString& key, const QString& status = QString());
  const QString& trying() const { return trying_; }
  QPushButton* probeButton() const { return probe_; }

  // The speedup keys in display order.
  static QStringList keys();

 Q_SIGNALS:
  void changed();
  void tryRequested(const QString& key);
  void tryCancelRequested();
  void probeRequested();
  void probeCancelRequested();

 private:
  struct Row {
    QWidget* box = nullptr;
    QLabel* title = nullptr;
    QWidget* control = nullptr;  // the field's control, or the box holding it and its buttons
    QWidget* field = nullptr;    // the field's own control (QCheckBox, QSpinBox or QComboBox)
    QLabel* availability = nullptr;
    QLabel* effect = nullptr;
    QLabel* caveat = nullptr;
    QWidget* more = nullptr;     // the fields behind "More", or nullptr
    QPushButton* tryButton = nullptr;
  };
  void addHeader();
  // One row per speedup of wb/common/speedups.h's table: a control built from its descriptor's
  // control and its field's schema (range, choices), read and written by the field's path.
  void addSpeedupRow(const Speedup& s);
  QWidget* probeBox(const Speedup& s, QWidget* box, QWidget* field);
  QWidget* moreButtonBox(const Speedup& s, QWidget* box, QWidget* field);
  void addMoreFields(const Speedup& s, Row& row);
  QWidget* fieldControl(const char* path, QWidget* parent);
  Row addRow(const QString& key, const QString& path, const QString& title, QWidget* control, const QString& explanation);
  // asOffered: as the run gets them (writeTo); else as the controls show them.
  void writeFields(nlohmann::json& doc, bool asOffered) const;
  // The config the controls show, over wb::Config's defaults (for the descriptors' rules).
  Config shownConfig() const;
  void setAvailability(const QString& key, bool available, const QString& note);
  void applyCapability(const Speedup& s, const proto::Capabilities& caps);
  void applyChoiceValues(const QString& key, QComboBox* box, const proto::Capabilities& caps);
  void updateDependencies();
  void updateWaiting(const Speedup& s, const Row& row, const Config& c);
  void updateProbeOffer();
  void updateColors();
  void changeEvent(QEvent* event) override;

  FieldErrors* errors_;
  QVBoxLayout* layout_;
  QLabel* capsStatus_;
  QHash<QString, Row> rows_;
  QHash<QString, QWidget*> fields_;  // config path -> its control, in the rows and behind "More"
  QHash<QString, bool> available_;
  QHash<QString, bool> waiting_;     // a speedup the other settings leave waiting (its Control::waits)
  QHash<QString, QString> notes_;
  QString probeKey_;                 // the row with the Probe button (Control::probe)
  QSpinBox* probed_ = nullptr;       // its count
  QPushButton* probe_ = nullptr;
  QPushButton* useProbe_ = nullptr;
  int offered_ = -1;
  QString trying_;  // the speedup whose try is running
  bool offerFewerOnly_ = false;  // the probe found the data path is not the bottleneck
  QLabel* hint_;
  QLabel* source_;
  int suggestedWorkers_ = -1;
  bool capsKnown_ = false;
  bool probing_ = false;
};

}  // namespace wb::ui
