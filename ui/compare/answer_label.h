#pragma once
// An answer sentence, large and bold, wrapped to at most a few lines: when the whole sentence
// does not fit the width it ends in "…" at a word (never cut mid-line), and its tooltip holds it
// whole. text() is what is shown; answer() is the whole sentence.
#include <QLabel>

namespace wb::ui {

class AnswerLabel : public QLabel {
 public:
  explicit AnswerLabel(int maxLines, QWidget* parent = nullptr);
  void setAnswer(const QString& sentence);
  QString answer() const { return answer_; }

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void fit();
  int linesHeight() const;
  QString answer_;
  int maxLines_;
};

}  // namespace wb::ui
