#include "wb/render/chart.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "wb/render/table.h"
#include "wb/render/escape.h"

namespace wb::render {

namespace {

const char* kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"};
const char* kAxis = "#444444";
const char* kGrid = "#DDDDDD";

std::string num(double v) {
  std::ostringstream os;
  os.precision(6);
  os << v;
  return os.str();
}

std::string tickLabel(double v, double step) {
  const int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  return fmtFixed(v, std::clamp(decimals, 0, 6));
}

const char* anchorName(Anchor a) {
  switch (a) {
    case Anchor::Start: return "start";
    case Anchor::Middle: return "middle";
    case Anchor::End: return "end";
  }
  return "start";
}

// The title, wrapped to the drawing's width: the y of the last line's baseline.
double titleLines(Drawing& d, const std::string& title) {
  const auto lines = fitLines(title, 15, d.width - 20.0, true);
  double y = 22;
  for (size_t i = 0; i < lines.size(); ++i, y += 19) d.texts.push_back({d.width / 2.0, y, lines[i], 15, Anchor::Middle, true});
  return y - 19;
}

// `text` cut with "…" to `width` px at `size`: only where the drawing has no more room for it.
std::string cutTo(const std::string& text, double size, double width) {
  if (textWidth(text, size) <= width) return text;
  std::string out;
  for (size_t i = 0; i < text.size();) {
    size_t n = 1;
    while (i + n < text.size() && (static_cast<unsigned char>(text[i + n]) & 0xC0) == 0x80) ++n;
    if (textWidth(out + text.substr(i, n) + "…", size) > width) break;
    out += text.substr(i, n);
    i += n;
  }
  return out + "…";
}

struct Plot {  // the data area and its mapping
  double left, top, right, bottom, x0, x1, y0, y1;
  double px(double x) const { return left + (x - x0) / (x1 - x0) * (right - left); }
  double py(double y) const { return bottom - (y - y0) / (y1 - y0) * (bottom - top); }
};

void axisLabels(Drawing& d, const std::string& xl, const std::string& yl, const Plot& p) {
  if (!xl.empty()) d.texts.push_back({(p.left + p.right) / 2, d.height - 8.0, xl, 12, Anchor::Middle});
  if (!yl.empty()) d.texts.push_back({16, (p.top + p.bottom) / 2, yl, 12, Anchor::Middle, false, -90});
}

void yAxis(Drawing& d, const Plot& p, const std::vector<double>& ticks) {
  const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1;
  for (double t : ticks) {
    const double y = p.py(t);
    d.lines.push_back({p.left, y, p.right, y, kGrid, 1});
    d.texts.push_back({p.left - 6, y + 4, tickLabel(t, step), 11, Anchor::End});
  }
  d.lines.push_back({p.left, p.top, p.left, p.bottom, kAxis, 1});
  d.lines.push_back({p.left, p.bottom, p.right, p.bottom, kAxis, 1});
}

}  // namespace

double textWidth(const std::string& utf8, double size, bool bold) {
  return static_cast<double>(displayWidth(utf8)) * size * (bold ? kBoldCharEm : kCharEm);
}

std::vector<std::string> fitLines(const std::string& text, double size, double width, bool bold) {
  std::vector<std::string> lines;
  std::string line;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t space = std::min(text.find(' ', at), text.size());
    const std::string word = text.substr(at, space - at);
    at = space + 1;
    if (word.empty()) continue;
    const std::string joined = line.empty() ? word : line + " " + word;
    if (line.empty() || textWidth(joined, size, bold) <= width) line = joined;
    else lines.push_back(line), line = word;
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

std::vector<std::pair<double, double>> textCorners(const DrawText& t) {
  const double w = textWidth(t.text, t.size, t.bold), up = t.size, down = t.size * 0.2;
  const double start = t.anchor == Anchor::Start ? 0 : t.anchor == Anchor::Middle ? -w / 2 : -w;
  const double a = t.rotate * std::acos(-1.0) / 180, c = std::cos(a), sn = std::sin(a);
  std::vector<std::pair<double, double>> out;
  for (auto [u, v] : {std::pair{start, -up}, std::pair{start + w, -up}, std::pair{start + w, down}, std::pair{start, down}})
    out.emplace_back(t.x + u * c - v * sn, t.y + u * sn + v * c);
  return out;
}

bool convexOverlap(const std::vector<std::pair<double, double>>& a, const std::vector<std::pair<double, double>>& b) {
  // Separating axes: the normals of both polygons' edges.
  for (const auto* poly : {&a, &b}) {
    const size_t n = poly->size();
    for (size_t i = 0; i < n; ++i) {
      const auto [x1, y1] = (*poly)[i];
      const auto [x2, y2] = (*poly)[(i + 1) % n];
      const double nx = y1 - y2, ny = x2 - x1;
      if (nx == 0 && ny == 0) continue;
      double amin = 1e300, amax = -1e300, bmin = 1e300, bmax = -1e300;
      for (auto [x, y] : a) amin = std::min(amin, x * nx + y * ny), amax = std::max(amax, x * nx + y * ny);
      for (auto [x, y] : b) bmin = std::min(bmin, x * nx + y * ny), bmax = std::max(bmax, x * nx + y * ny);
      if (amax <= bmin || bmax <= amin) return false;
    }
  }
  return true;
}

std::string seriesColor(size_t i) { return kPalette[i % (sizeof kPalette / sizeof *kPalette)]; }

std::vector<double> niceTicks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) return {0, 1};
  if (hi < lo) std::swap(lo, hi);
  if (hi - lo < 1e-12) hi = lo + (lo == 0 ? 1 : std::fabs(lo) * 0.1);
  const double raw = (hi - lo) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag * (1 + 1e-9)) {
      step = m * mag;
      break;
    }
  std::vector<double> out;
  const double first = std::floor(lo / step + 1e-9) * step;
  for (double v = first; v <= hi + step * 0.999; v += step) out.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
  return out;
}

std::string toSvg(const Drawing& d) {
  std::ostringstream os;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << d.width << "\" height=\"" << d.height
     << "\" viewBox=\"0 0 " << d.width << ' ' << d.height << "\" font-family=\"sans-serif\">\n";
  os << "<title>" << xmlEscape(d.title) << "</title>\n";
  os << "<rect x=\"0\" y=\"0\" width=\"" << d.width << "\" height=\"" << d.height << "\" fill=\"#ffffff\"/>\n";
  for (const auto& r : d.rects)
    os << "<rect x=\"" << num(r.x) << "\" y=\"" << num(r.y) << "\" width=\"" << num(r.w) << "\" height=\"" << num(r.h)
       << "\" fill=\"" << (r.fill.empty() ? "none" : r.fill) << "\" stroke=\"" << (r.stroke.empty() ? "none" : r.stroke)
       << "\"/>\n";
  for (const auto& l : d.lines)
    os << "<line x1=\"" << num(l.x1) << "\" y1=\"" << num(l.y1) << "\" x2=\"" << num(l.x2) << "\" y2=\"" << num(l.y2)
       << "\" stroke=\"" << l.color << "\" stroke-width=\"" << num(l.width) << "\""
       << (l.dashed ? " stroke-dasharray=\"6 4\"" : "") << "/>\n";
  for (const auto& p : d.polylines) {
    os << "<polyline fill=\"none\" stroke=\"" << p.color << "\" stroke-width=\"" << num(p.width) << "\""
       << (p.dashed ? " stroke-dasharray=\"6 4\"" : "") << " points=\"";
    for (size_t i = 0; i < p.points.size(); ++i) os << (i ? " " : "") << num(p.points[i].first) << ',' << num(p.points[i].second);
    os << "\"/>\n";
  }
  for (const auto& t : d.texts) {
    os << "<text x=\"" << num(t.x) << "\" y=\"" << num(t.y) << "\" font-size=\"" << num(t.size) << "\" text-anchor=\""
       << anchorName(t.anchor) << "\" fill=\"" << t.color << "\"" << (t.bold ? " font-weight=\"bold\"" : "");
    if (t.rotate != 0) os << " transform=\"rotate(" << num(t.rotate) << ' ' << num(t.x) << ' ' << num(t.y) << ")\"";
    os << '>' << xmlEscape(t.text) << "</text>\n";
  }
  os << "</svg>\n";
  return os.str();
}

Drawing lineChart(const LineChartSpec& spec) {
  Drawing d;
  d.width = spec.width;
  d.height = spec.height;
  d.title = spec.title;
  double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
  bool any = false;
  for (const auto& s : spec.series)
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      if (!any) x0 = x1 = x, y0 = y1 = y, any = true;
      x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
    }
  x0 = std::min(x0, 0.0);
  const auto xt = niceTicks(x0, x1, 6), yt = niceTicks(y0, y1, 5);
  // The legend as wide as its longest name needs, up to 45 % of the drawing (then names are cut).
  double names = 0;
  for (const auto& s : spec.series) names = std::max(names, textWidth(s.name, 11));
  const double legendW = std::clamp(names + 54, 120.0, d.width * 0.45);
  const double top = titleLines(d, spec.title) + 18;
  // A name longer than the legend's room wraps onto more lines; rows past the plot grow the drawing.
  std::vector<std::vector<std::string>> legend;
  double legendH = 0;
  for (const auto& s : spec.series) {
    legend.push_back(fitLines(s.name, 11, legendW - 54));
    legendH += std::max(18.0, 14.0 * legend.back().size() + 4);
  }
  d.height = std::max(d.height, static_cast<int>(std::ceil(top + 16 + legendH + 46)));
  Plot p{62, top, d.width - legendW - 10, d.height - 46.0, xt.front(), xt.back(), yt.front(), yt.back()};
  axisLabels(d, spec.x_label, spec.y_label, p);
  yAxis(d, p, yt);
  const double xstep = xt.size() > 1 ? xt[1] - xt[0] : 1;
  for (double t : xt) {
    d.lines.push_back({p.px(t), p.bottom, p.px(t), p.bottom + 4, kAxis, 1});
    d.texts.push_back({p.px(t), p.bottom + 17, tickLabel(t, xstep), 11, Anchor::Middle});
  }
  if (!any) d.texts.push_back({(p.left + p.right) / 2, (p.top + p.bottom) / 2, "no data yet", 13, Anchor::Middle});
  double ly = p.top + 8;  // the legend's next row
  for (size_t i = 0; i < spec.series.size(); ++i) {
    const auto& s = spec.series[i];
    DrawPolyline line{{}, seriesColor(i), 2, s.dashed};
    for (const auto& [x, y] : s.points)
      if (std::isfinite(x) && std::isfinite(y)) line.points.emplace_back(p.px(x), p.py(y));
    if (line.points.size() == 1) {  // a lone point is invisible as a line: mark it
      const auto [cx, cy] = line.points.front();
      d.rects.push_back({cx - 3, cy - 3, 6, 6, line.color, ""});
    }
    d.polylines.push_back(std::move(line));
    d.lines.push_back({p.right + 14, ly, p.right + 38, ly, seriesColor(i), 2, s.dashed});
    for (size_t k = 0; k < legend[i].size(); ++k)
      d.texts.push_back({p.right + 44, ly + 4 + 14.0 * k, cutTo(legend[i][k], 11, d.width - p.right - 48), 11, Anchor::Start});
    ly += std::max(18.0, 14.0 * legend[i].size() + 4);
  }
  return d;
}

namespace {

// A bar's annotation and detail as lines that fit its slot, bottom line last.
struct BarText {
  std::vector<std::string> annotation, detail;
  double size = 12;  // the annotation's; the detail's is 2 px less
  double height() const { return 6 + size * 1.25 * annotation.size() + (size - 2) * 1.4 * detail.size(); }
};

// The widest word of the bars' annotations (and details, 2 px smaller) at `size`: a word is never broken.
double widestWord(const BarChartSpec& spec, double size) {
  double w = 0;
  for (const auto& b : spec.bars) {
    for (const auto& word : fitLines(b.annotation, size, 0, b.bold && !b.skipped)) w = std::max(w, textWidth(word, size, b.bold && !b.skipped));
    for (const auto& word : fitLines(b.detail, size - 2, 0)) w = std::max(w, textWidth(word, size - 2));
  }
  return w;
}

// How the labels under the bars go: level when every one fits its slot, else tilted by 30° with
// the room below (and to the left) that the longest needs.
struct LabelLayout {
  bool tilted = false;
  double depth = 30;  // px below the plot the labels take
  std::vector<std::string> text;
};

constexpr double kTilt = -30;
constexpr double kLabelSize = 11;

LabelLayout labelLayout(const BarChartSpec& spec, double slot, double maxLabel) {
  LabelLayout l;
  double widest = 0;
  for (const auto& b : spec.bars) widest = std::max(widest, textWidth(b.label, kLabelSize));
  l.tilted = widest > slot - 6;
  for (const auto& b : spec.bars) l.text.push_back(l.tilted ? cutTo(b.label, kLabelSize, maxLabel) : b.label);
  if (l.tilted) {
    double longest = 0;
    for (const auto& t : l.text) longest = std::max(longest, textWidth(t, kLabelSize));
    l.depth = 14 + longest * 0.5 + kLabelSize * 0.87 + 8;
  }
  return l;
}

}  // namespace

Drawing barChart(const BarChartSpec& spec) {
  Drawing d;
  d.width = spec.width;
  d.height = spec.height;
  d.title = spec.title;
  const double top = titleLines(d, spec.title) + 22;
  const size_t n = std::max<size_t>(1, spec.bars.size());
  double left = 62;
  const double right = d.width - 16.0;
  // Labels: the room they need below the plot, and to the left of the first bars when tilted.
  const double maxLabel = d.width * 0.5;
  LabelLayout labels = labelLayout(spec, (right - left) / n, maxLabel);
  if (labels.tilted)
    for (int pass = 0; pass < 2; ++pass)
      for (size_t i = 0; i < spec.bars.size(); ++i) {
        const double cx = left + (right - left) / n * (i + 0.5), reach = textWidth(labels.text[i], kLabelSize) * 0.87 + 4;
        left = std::max(left, left + reach - cx);
      }
  // Annotations shrink to 9 px to fit their slots; past that the drawing grows wider.
  double right2 = right;
  if (const double need = widestWord(spec, 9) + 6; (right2 - left) / n < need) {
    d.width += static_cast<int>(std::ceil(n * need - (right2 - left)));
    right2 = d.width - 16.0;
  }
  const double slot = (right2 - left) / n, barW = std::min(80.0, slot * 0.62);
  double annSize = 12;
  while (annSize > 9 && widestWord(spec, annSize) > slot - 6) annSize -= 0.5;
  const double bottomRoom = std::max(46.0, labels.depth + 12);
  d.height = std::max(d.height, static_cast<int>(std::ceil(top + 240 + bottomRoom)));
  const double bottom = d.height - bottomRoom, plotH = bottom - top;
  // Annotations wrap to their slot, and the axis leaves each its room above its bar (and above the
  // reference line where it would cross it).
  std::vector<BarText> texts;
  for (const auto& b : spec.bars)
    texts.push_back({b.annotation.empty() ? std::vector<std::string>{} : fitLines(b.annotation, annSize, slot - 6, b.bold && !b.skipped),
                     b.detail.empty() ? std::vector<std::string>{} : fitLines(b.detail, annSize - 2, slot - 6), annSize});
  std::vector<double> base(spec.bars.size());  // the value each bar's texts stand on
  for (size_t i = 0; i < spec.bars.size(); ++i) {
    const Bar& b = spec.bars[i];
    base[i] = b.skipped ? spec.reference : std::max(0.0, std::isfinite(b.value) ? b.value : 0.0);
    if (!b.skipped && std::isfinite(b.lo) && std::isfinite(b.hi)) base[i] = std::max(base[i], b.hi);
  }
  std::vector<double> yt;
  for (int pass = 0; pass < 4; ++pass) {
    double ymax = spec.reference * 1.05;
    for (size_t i = 0; i < base.size(); ++i)
      ymax = std::max(ymax, base[i] * plotH / std::max(1.0, plotH - texts[i].height() - 4));
    yt = niceTicks(0, ymax, 5);
    const Plot q{left, top, right2, bottom, 0, 1, yt.front(), yt.back()};
    bool moved = false;
    for (size_t i = 0; i < base.size(); ++i) {  // a block that would cross the reference line goes above it
      const double below = q.py(base[i]) - 6, above = below - texts[i].height() + 6;
      if (base[i] < spec.reference && above < q.py(spec.reference) + 2) base[i] = spec.reference, moved = true;
    }
    if (!moved) break;
  }
  Plot p{left, top, right2, bottom, 0, 1, yt.front(), yt.back()};
  axisLabels(d, "", spec.y_label, p);
  yAxis(d, p, yt);
  for (size_t i = 0; i < spec.bars.size(); ++i) {
    const Bar& b = spec.bars[i];
    const double cx = p.left + slot * (i + 0.5);
    const double barTop = p.py(b.skipped ? spec.reference : std::max(0.0, b.value));
    d.rects.push_back({cx - barW / 2, barTop, barW, p.bottom - barTop, b.skipped ? "" : seriesColor(0), b.skipped ? "#999999" : ""});
    if (!b.skipped && std::isfinite(b.lo) && std::isfinite(b.hi)) {  // the 95 % interval as an error bar
      const double yl = p.py(std::max(0.0, b.lo)), yh = p.py(b.hi), cap = barW / 4;
      d.lines.push_back({cx, yl, cx, yh, kAxis, 1.5});
      d.lines.push_back({cx - cap, yl, cx + cap, yl, kAxis, 1.5});
      d.lines.push_back({cx - cap, yh, cx + cap, yh, kAxis, 1.5});
    }
    double y = p.py(base[i]) - 6;  // the bottom line of the block first, then upwards
    for (auto it = texts[i].detail.rbegin(); it != texts[i].detail.rend(); ++it, y -= (annSize - 2) * 1.4)
      d.texts.push_back({cx, y, *it, annSize - 2, Anchor::Middle, false, 0, "#555555"});
    for (auto it = texts[i].annotation.rbegin(); it != texts[i].annotation.rend(); ++it, y -= annSize * 1.25)
      d.texts.push_back({cx, y, *it, annSize, Anchor::Middle, !b.skipped && b.bold, 0, b.skipped ? "#777777" : "#222222"});
    if (labels.text[i].empty()) continue;
    if (labels.tilted) d.texts.push_back({cx, p.bottom + 14, labels.text[i], kLabelSize, Anchor::End, false, kTilt});
    else d.texts.push_back({cx, p.bottom + 16, labels.text[i], kLabelSize, Anchor::Middle});
  }
  const double ry = p.py(spec.reference);
  d.lines.push_back({p.left, ry, p.right, ry, "#D55E00", 1.5, true});
  return d;
}

}  // namespace wb::render
