// The charts' labels: none is cut while the drawing has room for it, and none crosses a line (an
// axis, the reference line, an error bar), a bar or another label; every one lies inside the
// drawing. Judged by the layout's own text metrics (wb/render/chart.h), on the shapes the ladder,
// compare and the probes draw: many bars with long tilted names, annotations with intervals and
// details, values just under the reference line, a title longer than the drawing, long series names.
// The light grid lines are drawn under everything and left out.
#include <QtTest/QtTest>

#include <cmath>
#include <string>

#include "wb/render/chart.h"

using namespace wb::render;

namespace {

using Poly = std::vector<std::pair<double, double>>;

Poly rectPoly(const DrawRect& r) { return {{r.x, r.y}, {r.x + r.w, r.y}, {r.x + r.w, r.y + r.h}, {r.x, r.y + r.h}}; }

// Every problem with the drawing's labels, one line each ("" when none).
std::string labelProblems(const Drawing& d) {
  std::string out;
  for (size_t i = 0; i < d.texts.size(); ++i) {
    const DrawText& t = d.texts[i];
    const Poly box = textCorners(t);
    for (auto [x, y] : box)
      if (x < -0.5 || y < -0.5 || x > d.width + 0.5 || y > d.height + 0.5) {
        out += "'" + t.text + "' is cut by the drawing's edge\n";
        break;
      }
    for (size_t j = i + 1; j < d.texts.size(); ++j)
      if (convexOverlap(box, textCorners(d.texts[j]))) out += "'" + t.text + "' overlaps '" + d.texts[j].text + "'\n";
    for (const auto& l : d.lines)
      if (l.color != "#DDDDDD" && convexOverlap(box, {{l.x1, l.y1}, {l.x2, l.y2}}))
        out += "'" + t.text + "' crosses a line\n";
    for (const auto& r : d.rects)
      if (convexOverlap(box, rectPoly(r))) out += "'" + t.text + "' crosses a bar\n";
  }
  return out;
}

bool hasText(const Drawing& d, const std::string& text) {
  for (const auto& t : d.texts)
    if (t.text == text) return true;
  return false;
}

BarChartSpec ladderLike(int bars) {
  BarChartSpec spec;
  spec.title = "Speedup ladder (greedy): each step's speedup to 71.40 % val acc over the configuration kept before it; "
               "kept: over the baseline";
  spec.y_label = "speedup at equal accuracy (×)";
  const char* names[] = {"baseline", "+ loader workers 2", "+ pin memory", "+ devices 2", "+ precision bf16-mixed",
                         "+ early stopping patience 2", "+ sharding zero1 on 2 devices", "+ inference-mode eval",
                         "+ channels-last", "kept"};
  for (int i = 0; i < bars; ++i) {
    Bar b;
    b.label = names[i % 10];
    switch (i % 5) {
      case 0: b.value = 1, b.annotation = "1.00×"; break;
      case 1: b.value = 0.97, b.lo = 0.93, b.hi = 1.01, b.annotation = "0.97× [0.93, 1.01] within noise", b.bold = false,
              b.detail = "dropped · acc 71.2 %"; break;
      case 2: b.skipped = true, b.annotation = "skipped"; break;
      case 3: b.value = 1.10, b.lo = 1.04, b.hi = 1.17, b.annotation = "1.10× [1.04, 1.17] faster", b.detail = "kept · acc 71.9 %"; break;
      case 4: b.value = 0.45, b.lo = 0.03, b.hi = 3.2, b.annotation = "at most 0.45× [≤ 3.20] (a bound: no verdict)", b.bold = false; break;
    }
    spec.bars.push_back(b);
  }
  return spec;
}

}  // namespace

class TestChart : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void barLabelsAreWholeAndCrossNothing_data() {
    QTest::addColumn<int>("bars");
    QTest::addColumn<int>("width");
    QTest::newRow("two bars") << 2 << 720;
    QTest::newRow("the ladder's nine") << 9 << 720;
    QTest::newRow("ten in a narrow window") << 10 << 480;
    QTest::newRow("five in a wide one") << 5 << 1200;
  }
  void barLabelsAreWholeAndCrossNothing() {
    QFETCH(int, bars);
    QFETCH(int, width);
    BarChartSpec spec = ladderLike(bars);
    spec.width = width;
    const Drawing d = barChart(spec);
    const std::string problems = labelProblems(d);
    QVERIFY2(problems.empty(), problems.c_str());
    for (const auto& b : spec.bars) QVERIFY2(hasText(d, b.label), b.label.c_str());  // no name cut while there is room
    // Every word of every annotation and of the title is drawn (wrapped, not cut).
    std::string all;
    for (const auto& t : d.texts) all += t.text + " ";
    for (const auto& b : spec.bars)
      for (const std::string& w : fitLines(b.annotation, 12, 1e9))
        for (size_t at = 0, sp; at < w.size(); at = sp + 1) {
          sp = std::min(w.find(' ', at), w.size());
          QVERIFY2(all.find(w.substr(at, sp - at)) != std::string::npos, w.c_str());
        }
    QVERIFY2(all.find("configuration kept before it;") != std::string::npos, "the title is cut");
    QVERIFY(all.find("…") == std::string::npos);
  }

  // A name longer than half the drawing is cut, with "…": there is no room for it.
  void aNameWithNoRoomIsCutVisibly() {
    BarChartSpec spec = ladderLike(3);
    spec.bars[1].label = std::string(200, 'x');
    const Drawing d = barChart(spec);
    bool cut = false;
    for (const auto& t : d.texts) cut = cut || (t.text.size() > 3 && t.text.substr(t.text.size() - 3) == "…");
    QVERIFY(cut);
    const std::string problems = labelProblems(d);
    QVERIFY2(problems.empty(), problems.c_str());
  }

  void legendNamesAreWholeAndCrossNothing() {
    LineChartSpec spec;
    spec.title = "Validation accuracy against wall time, each run overlaid on the baseline (dashed), to 71.40 % val acc";
    spec.x_label = "wall time (s)";
    spec.y_label = "val acc";
    for (const char* name : {"baseline · lenet, 2 epochs", "loader workers 2, precision bf16-mixed · p3",
                             "channels-last, inference-mode eval · seed 1003"}) {
      Series s;
      s.name = name;
      for (int i = 0; i < 5; ++i) s.points.emplace_back(i * 10.0, 0.5 + 0.05 * i);
      spec.series.push_back(s);
    }
    const Drawing d = lineChart(spec);
    const std::string problems = labelProblems(d);
    QVERIFY2(problems.empty(), problems.c_str());
    // Every name whole: on its line, or wrapped over two, never cut.
    std::string legend;
    for (const auto& t : d.texts) legend += t.text + " ";
    for (const auto& s : spec.series) QVERIFY2(legend.find(s.name) != std::string::npos, (s.name + " in: " + legend).c_str());
  }

  void theMetricsSeeRotationAndOverlap() {
    const DrawText level{100, 100, "abcd", 10, Anchor::Start};
    const Poly box = textCorners(level);
    QCOMPARE(box[1].first - box[0].first, textWidth("abcd", 10));
    QVERIFY(convexOverlap(box, {{90, 95}, {200, 95}}));    // a line through it
    QVERIFY(!convexOverlap(box, {{90, 120}, {200, 120}}));  // one under it
    const DrawText tilted{100, 100, "abcd", 10, Anchor::End, false, -30};
    for (auto [x, y] : textCorners(tilted)) QVERIFY(x <= 102 && y >= 100 - 10);  // down and to the left
  }
};

QTEST_APPLESS_MAIN(TestChart)
#include "test_chart.moc"
