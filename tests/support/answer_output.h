#pragma once
// What the short default output of try, ladder, tune and compare promises, checked on a
// command's stdout: it begins with the answer (its first paragraph, wrapped over lines, is the
// record's "answer" sentence), and no line is wider than 100 columns.
#include <QByteArray>
#include <QList>
#include <QString>

#include <string>

namespace wb::test {

// The first paragraph of `out` (up to its first empty line), its lines joined by spaces.
inline std::string firstParagraph(const QByteArray& out) {
  std::string joined;
  for (const QByteArray& line : out.split('\n')) {
    if (line.trimmed().isEmpty()) break;
    joined += (joined.empty() ? "" : " ") + line.toStdString();
  }
  return joined;
}

// The widest line of `out` in terminal columns (one per code point), and that line.
inline int widestLine(const QByteArray& out, QString* which = nullptr) {
  int widest = 0;
  for (const QByteArray& line : out.split('\n')) {
    const QString s = QString::fromUtf8(line);
    const int n = static_cast<int>(s.toUcs4().size());
    if (n > widest) {
      widest = n;
      if (which) *which = s;
    }
  }
  return widest;
}

}  // namespace wb::test
