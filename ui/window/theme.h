#pragma once
// Light / dark / system look. Dark and light use the Fusion style with a full palette (every
// role, disabled group included) so text stays readable everywhere; System keeps the platform's.
#include <QString>

namespace wb::ui {

enum class Theme { System, Light, Dark };

Theme themeFromString(const QString& s);  // "dark" | "light" | anything else: System
QString themeToString(Theme theme);
// Applies to the running QApplication (widgets get PaletteChange events).
void applyTheme(Theme theme);

}  // namespace wb::ui
