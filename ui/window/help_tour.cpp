#include "window/help_tour.h"

#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QScrollBar>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextDocument>
#include <QTimer>
#include <QVBoxLayout>

namespace wb::ui {

QStringList readmeCandidates() {
  const QString app = QCoreApplication::applicationDirPath();
  return {
      QDir::cleanPath(app + QStringLiteral("/../share/doc/speedup-workbench/README.md")),
      QStringLiteral("/usr/share/doc/speedup-workbench/README.md"),
      QString::fromUtf8(WB_SOURCE_README),
  };
}

HelpTour::HelpTour(QWidget* parent) : QDialog(parent) {
  setWindowTitle(QStringLiteral("Speedup Workbench — Tour"));
  auto* layout = new QVBoxLayout(this);
  browser_ = new QTextBrowser(this);
  browser_->setOpenExternalLinks(true);
  layout->addWidget(browser_);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);
  resize(820, 640);
}

bool HelpTour::load() {
  for (const QString& c : readmeCandidates()) {
    QFile f(c);
    if (!f.open(QIODevice::ReadOnly)) continue;
    path_ = c;
    browser_->setSearchPaths({QFileInfo(c).absolutePath()});
    browser_->setMarkdown(QString::fromUtf8(f.readAll()));
    scrollToTour();
    return true;
  }
  browser_->setPlainText(QStringLiteral("The README was not found. Looked in:\n  ") +
                         readmeCandidates().join(QStringLiteral("\n  ")));
  return false;
}

void HelpTour::showEvent(QShowEvent* event) {
  QDialog::showEvent(event);
  // Scrolling needs the laid-out document: once shown.
  if (!path_.isEmpty()) QTimer::singleShot(0, this, &HelpTour::scrollToTour);
}

QTextBlock tourHeading(const QTextDocument* doc) {
  QTextBlock first;
  for (QTextBlock b = doc->begin(); b.isValid(); b = b.next()) {
    if (b.blockFormat().headingLevel() <= 0 || !b.text().contains(QLatin1String("tour"), Qt::CaseInsensitive)) continue;
    if (b.text().contains(QLatin1String("window"), Qt::CaseInsensitive)) return b;
    if (!first.isValid()) first = b;
  }
  return first;
}

void HelpTour::scrollToTour() {
  // Markdown headings carry no anchors in Qt: find the heading of the window's tour (a user of
  // the window comes here), else the first that names a tour.
  const QTextBlock heading = tourHeading(browser_->document());
  if (!heading.isValid()) return;
  browser_->setTextCursor(QTextCursor(heading));
  // Put the heading at the top rather than wherever ensureCursorVisible leaves it.
  browser_->verticalScrollBar()->setValue(browser_->verticalScrollBar()->maximum());
  browser_->ensureCursorVisible();
}

}  // namespace wb::ui
