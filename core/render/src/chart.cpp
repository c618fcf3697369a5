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

struct Plot {  // the data area and its mapping
  double left, top, right, bottom, x0, x1, y0, y1;
  double px(double x) const { return left + (x - x0) / (x1 - x0) * (right - left); }
  double py(double y) const { return bottom - (y - y0) / (y1 - y0) * (bottom - top); }
};

void titleAndLabels(Drawing& d, const std::string& title, const std::string& xl, const std::string& yl, const Plot& p) {
  d.texts.push_back({d.width / 2.0, 22, title, 15, Anchor::Middle, true});
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
  const double legendW = 170;
  Plot p{62, 40, d.width - legendW - 10, d.height - 46.0, xt.front(), xt.back(), yt.front(), yt.back()};
  titleAndLabels(d, spec.title, spec.x_label, spec.y_label, p);
  yAxis(d, p, yt);
  const double xstep = xt.size() > 1 ? xt[1] - xt[0] : 1;
  for (double t : xt) {
    d.lines.push_back({p.px(t), p.bottom, p.px(t), p.bottom + 4, kAxis, 1});
    d.texts.push_back({p.px(t), p.bottom + 17, tickLabel(t, xstep), 11, Anchor::Middle});
  }
  if (!any) d.texts.push_back({(p.left + p.right) / 2, (p.top + p.bottom) / 2, "no data yet", 13, Anchor::Middle});
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
    const double ly = p.top + 8 + 18.0 * i;
    d.lines.push_back({p.right + 14, ly, p.right + 38, ly, seriesColor(i), 2, s.dashed});
    std::string name = s.name.size() > 22 ? s.name.substr(0, 21) + "…" : s.name;
    d.texts.push_back({p.right + 44, ly + 4, name, 11, Anchor::Start});
  }
  return d;
}

Drawing barChart(const BarChartSpec& spec) {
  Drawing d;
  d.width = spec.width;
  d.height = spec.height;
  d.title = spec.title;
  double hi = spec.reference;
  for (const auto& b : spec.bars) {
    if (!b.skipped && std::isfinite(b.value)) hi = std::max(hi, b.value);
    if (!b.skipped && std::isfinite(b.hi)) hi = std::max(hi, b.hi);
  }
  const auto yt = niceTicks(0, hi * 1.18, 5);  // head room for two annotation lines
  Plot p{62, 44, d.width - 16.0, d.height - 92.0, 0, 1, yt.front(), yt.back()};
  titleAndLabels(d, spec.title, "", spec.y_label, p);
  yAxis(d, p, yt);
  const size_t n = std::max<size_t>(1, spec.bars.size());
  const double slot = (p.right - p.left) / n;
  const double barW = std::min(80.0, slot * 0.62);
  for (size_t i = 0; i < spec.bars.size(); ++i) {
    const Bar& b = spec.bars[i];
    const double cx = p.left + slot * (i + 0.5);
    if (b.skipped) {
      const double top = p.py(spec.reference);
      d.rects.push_back({cx - barW / 2, top, barW, p.bottom - top, "", "#999999"});
    } else {
      const double top = p.py(std::max(0.0, b.value));
      d.rects.push_back({cx - barW / 2, top, barW, p.bottom - top, seriesColor(0), ""});
    }
    double annY = (b.skipped ? p.py(spec.reference) : p.py(std::max(0.0, b.value))) - 6;
    if (!b.skipped && std::isfinite(b.lo) && std::isfinite(b.hi)) {  // the 95 % interval as an error bar
      const double yl = p.py(std::max(0.0, b.lo)), yh = p.py(b.hi), cap = barW / 4;
      d.lines.push_back({cx, yl, cx, yh, kAxis, 1.5});
      d.lines.push_back({cx - cap, yl, cx + cap, yl, kAxis, 1.5});
      d.lines.push_back({cx - cap, yh, cx + cap, yh, kAxis, 1.5});
      annY = std::min(annY, yh - 6);
    }
    if (!b.detail.empty()) {
      d.texts.push_back({cx, annY, b.detail, 10, Anchor::Middle, false, 0, "#555555"});
      annY -= 14;
    }
    d.texts.push_back({cx, annY, b.annotation, 12, Anchor::Middle, !b.skipped && b.bold, 0, b.skipped ? "#777777" : "#222222"});
    // Labels under the bars, tilted so long names fit.
    d.texts.push_back({cx, p.bottom + 14, b.label, 11, Anchor::End, false, -30});
  }
  const double ry = p.py(spec.reference);
  d.lines.push_back({p.left, ry, p.right, ry, "#D55E00", 1.5, true});
  return d;
}

}  // namespace wb::render
