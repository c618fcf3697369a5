#pragma once
// A chart's PNG: its SVG file rendered by librsvg's rsvg-convert (librsvg2-bin), so the PNG shows
// what the SVG shows, Unicode included ("1.85×"), in the fonts the system has. Used by the
// ladder's ladder.png and the worker probe's plot. Runs rsvg-convert as a child process and waits.
#include <filesystem>

#include "wb/common/result.h"

namespace wb::render {

// Renders `svg` to `png` at `zoom` × its pixel size, written atomically.
// Error (Io) names the file, or says how to install rsvg-convert.
Status svgToPng(const std::filesystem::path& svg, const std::filesystem::path& png, double zoom = 2.0);

}  // namespace wb::render
