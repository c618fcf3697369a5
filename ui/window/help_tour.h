#pragma once
// Help → Tour: the README shown in the window, scrolled to its tour. The README is looked for
// beside an installed workbench (share/doc/speedup-workbench/), then in the source tree this
// build came from.
#include <QDialog>
#include <QStringList>

class QTextBlock;
class QTextBrowser;
class QTextDocument;

namespace wb::ui {

// Where README.md may be, most specific first.
QStringList readmeCandidates();
// The heading Help → Tour opens at: "A tour of the window", else the first that names a tour.
QTextBlock tourHeading(const QTextDocument* doc);

class HelpTour : public QDialog {
  Q_OBJECT
 public:
  explicit HelpTour(QWidget* parent = nullptr);
  // Loads the README (false: not found; the dialog says where it looked).
  bool load();
  QString loadedPath() const { return path_; }
  QTextBrowser* browser() const { return browser_; }

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void scrollToTour();

  QTextBrowser* browser_;
  QString path_;
};

}  // namespace wb::ui
