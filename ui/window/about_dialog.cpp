#include "window/about_dialog.h"

#include <QApplication>
#include <QDialogButtonBox>
#include <QLabel>
#include <QVBoxLayout>
#include <QtGlobal>

#include "plots/qcp.h"

#include "runs/cli.h"
#include "wb/proto/capabilities_record.h"
#include "wb/proto/capability_keys.h"
#include "wb/proto/events.h"
#include "wb/records/peak_store.h"
#include "wb/render/table.h"

namespace wb::ui {
using nlohmann::json;

AboutDialog::AboutDialog(QWidget* parent) : QDialog(parent) {
  setWindowTitle(QStringLiteral("About Speedup Workbench"));
  auto* layout = new QVBoxLayout(this);
  auto* title = new QLabel(this);
  title->setText(QStringLiteral("<h2>Speedup Workbench %1</h2><p>Measure which training speedups pay off on your model, "
                                "data and hardware.</p>")
                     .arg(QString::fromLatin1(WB_VERSION)));
  title->setWordWrap(true);
  layout->addWidget(title);
  body_ = new QLabel(this);
  body_->setObjectName(QStringLiteral("aboutVersions"));
  body_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  body_->setTextFormat(Qt::PlainText);
  body_->setWordWrap(true);
  layout->addWidget(body_);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);
  setMinimumWidth(440);
  render();
}

void AboutDialog::query() {
  CliQuery::run(this, {QStringLiteral("--version")}, false,
                [this](const json&, const QString& text, const QString& err) { setCliVersion(text.trimmed(), err); });
  CliQuery::run(this, {QStringLiteral("capabilities"), QStringLiteral("--json")}, true,
                [this](const json& doc, const QString&, const QString& err) { setCapabilities(doc, err); });
}

void AboutDialog::setCliVersion(const QString& line, const QString& error) {
  cliLine_ = error.isEmpty() ? line : QStringLiteral("not available (%1)").arg(error);
  render();
}

// The keys `workbench-cli capabilities --json` writes (app/cli cmdCapabilities over
// train::capabilitiesJson): libtorch, opencv (strings), cuda, nccl, gloo (bools), gpus (a count)
// and gpu_names (an array, empty when the names are not known), peak (the stored calibration).
QStringList AboutDialog::capabilityKeys() {
  return {QStringLiteral("libtorch"), QStringLiteral("cuda"), QStringLiteral("gpus"), QStringLiteral("gpu_names"),
          QStringLiteral("nccl"),     QStringLiteral("gloo"), QStringLiteral("opencv"), QStringLiteral("peak")};
}

namespace {

// The stored peak calibration (capabilities' "peak"): one line per device measured, and on a
// GPU its datasheet entry or that it has none.
QStringList peakLines(const json& caps) {
  const json& peak = proto::objectOr(caps, proto::caps::kPeak);
  auto r = records::peakFromJson(peak);
  if (!proto::boolOr(peak, "measured", false) || !r.ok())
    return {QStringLiteral("Peak: not measured on this machine (workbench-cli probe peak)")};
  QStringList lines;
  const QString date = QString::fromStdString(proto::stringOr(peak, "date", ""));
  for (const auto& d : r->devices) {
    QStringList rates;
    for (const auto& k : d.kernels)
      rates << QString::fromStdString(k.precision + " " + k.kernel + " " + wb::fmtFixed(k.gflop_per_s, 1));
    const QString where = QString::fromStdString(d.device) +
                          (d.device == "cpu" ? QStringLiteral(", %1 threads").arg(d.threads) : QString());
    lines << QStringLiteral("Peak (%1, measured %2): %3 GFLOP/s").arg(where, date, rates.join(QStringLiteral(", ")));
    if (d.device.rfind("cuda", 0) != 0) continue;
    const records::DatasheetEntry* e = records::datasheetFor(d.name);
    lines << (e ? QStringLiteral("Datasheet (dense): bf16 %1, tf32 %2 TFLOP/s (%3)")
                      .arg(e->bf16).arg(e->tf32).arg(QString::fromStdString(e->source))
                : QStringLiteral("Datasheet: %1 is not in the table").arg(QString::fromStdString(d.name)));
  }
  return lines;
}

}  // namespace

void AboutDialog::setCapabilities(const json& caps, const QString& error) {
  libs_.clear();
  if (!caps.is_object()) {
    libs_ << QStringLiteral("Machine capabilities: not available (%1)").arg(error);
    render();
    return;
  }
  const proto::Capabilities c = proto::capabilitiesFromJson(caps);
  const auto q = [](const std::string& text) { return QString::fromStdString(text); };
  if (!c.libtorch.empty()) libs_ << QStringLiteral("LibTorch: ") + q(c.libtorch);
  QString cudaText = QStringLiteral("not available");
  if (c.cuda) {
    cudaText = QStringLiteral("yes, %1 GPU(s)").arg(c.gpus);
    if (!c.cuda_version.empty()) cudaText += QStringLiteral(", CUDA ") + q(c.cuda_version);
    QStringList names;
    for (const std::string& n : c.gpu_names) names << q(n);
    if (!names.isEmpty()) cudaText += QStringLiteral(": ") + names.join(QStringLiteral(", "));
  }
  libs_ << QStringLiteral("CUDA: ") + cudaText;
  if (!c.cudnn.empty()) libs_ << QStringLiteral("cuDNN: ") + q(c.cudnn);
  libs_ << QStringLiteral("NCCL: ") + (c.nccl ? QStringLiteral("yes") : QStringLiteral("not available"));
  libs_ << QStringLiteral("Gloo: ") + (c.gloo ? QStringLiteral("yes") : QStringLiteral("no"));
  if (!c.opencv.empty()) libs_ << QStringLiteral("OpenCV: ") + q(c.opencv);
  libs_ << peakLines(caps);
  render();
}

QString AboutDialog::versionsText() const { return body_->text(); }

void AboutDialog::render() {
  QStringList lines;
  lines << QStringLiteral("Qt: %1 (built with %2)").arg(QString::fromLatin1(qVersion()), QStringLiteral(QT_VERSION_STR));
  lines << QStringLiteral("QCustomPlot: %1").arg(QStringLiteral(QCUSTOMPLOT_VERSION_STR));
  lines << QStringLiteral("workbench-cli: %1").arg(cliLine_);
  lines << libs_;
  body_->setText(lines.join(QLatin1Char('\n')));
  if (isVisible()) adjustSize();  // the answers add lines after the box is shown
  Q_EMIT versionsUpdated();
}

}  // namespace wb::ui
