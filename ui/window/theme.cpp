#include "window/theme.h"

#include <QApplication>
#include <QPalette>
#include <QStyle>
#include <QStyleFactory>

namespace wb::ui {

Theme themeFromString(const QString& s) {
  if (s.compare(QLatin1String("dark"), Qt::CaseInsensitive) == 0) return Theme::Dark;
  if (s.compare(QLatin1String("light"), Qt::CaseInsensitive) == 0) return Theme::Light;
  return Theme::System;
}

QString themeToString(Theme t) {
  switch (t) {
    case Theme::Dark: return QStringLiteral("dark");
    case Theme::Light: return QStringLiteral("light");
    case Theme::System: break;
  }
  return QStringLiteral("system");
}

namespace {
QPalette darkPalette() {
  QPalette p;
  const QColor window(0x2b, 0x2d, 0x31), base(0x1e, 0x1f, 0x22), text(0xe6, 0xe6, 0xe6), disabled(0x80, 0x84, 0x8a);
  const QColor highlight(0x3d, 0x7e, 0xd6), button(0x35, 0x37, 0x3c);
  p.setColor(QPalette::Window, window);
  p.setColor(QPalette::WindowText, text);
  p.setColor(QPalette::Base, base);
  p.setColor(QPalette::AlternateBase, QColor(0x26, 0x28, 0x2b));
  p.setColor(QPalette::ToolTipBase, QColor(0x3a, 0x3d, 0x42));
  p.setColor(QPalette::ToolTipText, text);
  p.setColor(QPalette::PlaceholderText, QColor(0x9a, 0x9e, 0xa5));
  p.setColor(QPalette::Text, text);
  p.setColor(QPalette::Button, button);
  p.setColor(QPalette::ButtonText, text);
  p.setColor(QPalette::BrightText, QColor(0xff, 0x6b, 0x6b));
  p.setColor(QPalette::Light, QColor(0x4a, 0x4d, 0x52));
  p.setColor(QPalette::Midlight, QColor(0x40, 0x43, 0x48));
  p.setColor(QPalette::Mid, QColor(0x25, 0x27, 0x2a));
  p.setColor(QPalette::Dark, QColor(0x18, 0x19, 0x1b));
  p.setColor(QPalette::Shadow, Qt::black);
  p.setColor(QPalette::Highlight, highlight);
  p.setColor(QPalette::HighlightedText, Qt::white);
  p.setColor(QPalette::Link, QColor(0x6c, 0xb2, 0xff));
  p.setColor(QPalette::LinkVisited, QColor(0xb3, 0x92, 0xf0));
  for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText, QPalette::HighlightedText})
    p.setColor(QPalette::Disabled, role, disabled);
  p.setColor(QPalette::Disabled, QPalette::Base, window);
  p.setColor(QPalette::Disabled, QPalette::Button, QColor(0x30, 0x32, 0x36));
  p.setColor(QPalette::Disabled, QPalette::Highlight, QColor(0x50, 0x53, 0x58));
  return p;
}
}  // namespace

void applyTheme(Theme theme) {
  static const QString systemStyle = QApplication::style() ? QApplication::style()->name() : QString();
  static const QPalette systemPalette = QApplication::palette();
  switch (theme) {
    case Theme::Dark:
      QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
      QApplication::setPalette(darkPalette());
      break;
    case Theme::Light:
      QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
      QApplication::setPalette(QApplication::style()->standardPalette());
      break;
    case Theme::System:
      if (!systemStyle.isEmpty()) QApplication::setStyle(QStyleFactory::create(systemStyle));
      QApplication::setPalette(systemPalette);
      break;
  }
}

}  // namespace wb::ui
