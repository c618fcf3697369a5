#pragma once
// Charts as resolution-free drawings: a chart is laid out once into a Drawing (rectangles, lines,
// polylines, text in pixel coordinates) which toSvg() writes as a standalone SVG and which
// app/cli rasterises to PNG with OpenCV (core/report stays OpenCV-free). Values only.
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace wb::render {

struct DrawRect { double x, y, w, h; std::string fill; std::string stroke; };
struct DrawLine { double x1, y1, x2, y2; std::string color; double width = 1; bool dashed = false; };
struct DrawPolyline { std::vector<std::pair<double, double>> points; std::string color; double width = 2; bool dashed = false; };
enum class Anchor { Start, Middle, End };
struct DrawText {
  double x, y;            // baseline point
  std::string text;       // UTF-8
  double size = 12;       // px
  Anchor anchor = Anchor::Start;
  bool bold = false;
  double rotate = 0;      // degrees, around (x, y); -90 = reads upwards
  std::string color = "#222222";
};

struct Drawing {
  int width = 720, height = 400;
  std::string title;      // also the SVG <title>
  std::vector<DrawRect> rects;
  std::vector<DrawLine> lines;
  std::vector<DrawPolyline> polylines;
  std::vector<DrawText> texts;
};

// The layout's text metrics (no font at hand: the SVG's sans-serif may be any): a character's
// advance is kCharEm of its size (bold: kBoldCharEm), a line's height its size. Labels are laid out
// with them so that none is cut while the drawing has room for it, and none crosses a line, a bar
// or another label (tests/core/render check the drawings by the same measure).
inline constexpr double kCharEm = 0.62, kBoldCharEm = 0.68;
double textWidth(const std::string& utf8, double size, bool bold = false);
// `text` broken at spaces into lines no wider than `width` px at `size` (a word wider than that
// stays whole on its own line).
std::vector<std::string> fitLines(const std::string& text, double size, double width, bool bold = false);
// The four corners of the box a text takes (its advance by its height above the baseline, a
// fifth of its size below it), rotated about its anchor point as drawn.
std::vector<std::pair<double, double>> textCorners(const DrawText& t);
// Whether two convex polygons (corners in order; a segment is a polygon of two) overlap.
bool convexOverlap(const std::vector<std::pair<double, double>>& a, const std::vector<std::pair<double, double>>& b);

// A standalone SVG document (XML, every element closed), text escaped.
std::string toSvg(const Drawing& d);

// The colour of series i (a fixed colour-blind-safe palette, "#rrggbb").
std::string seriesColor(size_t i);

// Round tick values covering [lo, hi], about `target` of them (1-2-5 steps).
std::vector<double> niceTicks(double lo, double hi, int target = 5);

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), x ascending
  bool dashed = false;    // the baseline is drawn dashed
};
struct LineChartSpec {
  std::string title, x_label, y_label;
  std::vector<Series> series;
  int width = 720, height = 400;
};
Drawing lineChart(const LineChartSpec& spec);

struct Bar {
  std::string label;      // under the bar
  double value = 0;       // bar height
  std::string annotation; // above the bar ("1.85×", "skipped")
  bool skipped = false;   // drawn as an empty outline at the reference line
  std::string detail;     // a smaller line between the annotation and the bar ("acc 84.1 %")
  double lo = std::numeric_limits<double>::quiet_NaN();  // error bar (95 % interval), drawn when both finite
  double hi = std::numeric_limits<double>::quiet_NaN();
  bool bold = true;       // the annotation in bold (only a clear verdict should be)
};
struct BarChartSpec {
  std::string title, y_label;
  std::vector<Bar> bars;
  double reference = 1.0; // a dashed line (1× = the baseline)
  int width = 720, height = 420;
};
Drawing barChart(const BarChartSpec& spec);

}  // namespace wb::render
