// workbench-cli ladder: the baseline, then each speedup added in turn (the recipe's order), each
// run through wb::launch::launchRun; writes the runs, the ladder table in every format, the
// cumulative-speedup chart as SVG and PNG. The plan and the maths live in wb/report/ladder.h;
// this file runs the steps and rasterises the chart (OpenCV stays out of core/report).
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "args.h"
#include "experiment.h"
#include "commands.h"
#include "wb/common/fs.h"
#include "wb/common/paths.h"
#include "wb/launch/launcher.h"
#include "wb/proto/config_json.h"
#include "wb/report/export.h"
#include "wb/report/ladder.h"
#include "wb/report/probe.h"
#include "wb/train/trainer.h"

namespace wb::cli {
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const char* kHelp = R"(Usage: workbench-cli ladder [options]

Runs the baseline (every speedup off: workers 0, pin memory off, devices 1, precision 32-true,
no early stopping, sharding off, grad-enabled evaluation), then adds the speedups one at a time,
cumulatively: workers (the stored `probe workers` result for this experiment, else
min(cores, 4)) -> pin memory -> devices (the GPUs, or 2 CPU processes) ->
precision (16-mixed on CUDA, bf16-mixed on CPU) -> early stopping (patience 2) -> sharding
(zero1, needs devices > 1) -> inference-mode evaluation. What this machine cannot do (see
`workbench-cli capabilities`) is skipped with the reason.

Writes into --out: runs/<step>/ (one run folder per step and repeat), ladder.md, ladder.csv,
ladder.tex, ladder.json, ladder.html (self-contained, with the chart and the advisor's verdicts),
ladder.svg and ladder.png (the speedup-to-target bar chart). The tables are rewritten after each
run, so a cancelled ladder keeps what it measured.

Options:
  --config FILE      the experiment (model, data, epochs...); its speedups are replaced by the ladder's
  --set KEY=VALUE    override one field (repeatable), e.g. --set data.limit_train=2000
  --out DIR          output folder (default <runs-root>/<timestamp>-ladder-<id>); must be new or empty
  --runs-root DIR    where the default --out goes (default $WB_RUNS_ROOT or ~/.local/share/speedup-workbench/runs)
  --repeats N        runs per step (default 1), in interleaved rounds (every step once, then
                     again); n >= 3 gives a median with its min-max range. A run measured while
                     other processes used the CPU (contended) is run once more and left out
  --rerun-contended N  run a contended measurement up to N more times (default 1)
  --steps KEY,...    run only these steps besides the baseline (workers, pin_memory, devices,
                     precision, early_stopping, sharding, inference_eval); the others are listed
                     as left out. Each step keeps its place in the cumulative order
  --isolated         also run each speedup alone against the baseline
  --target-acc X     target val accuracy (default: the lowest best val acc of the baseline's repeats)
  --dry-run          print the plan and exit

Exit codes: 0 every step that could run produced a result, 1 a step failed, 2 bad config or
usage, 130 cancelled (the tables so far are written).
)";

// ---- PNG: the chart's Drawing rasterised with OpenCV -----------------------------------------

constexpr double kPngScale = 2.0;  // twice the SVG's pixel size: crisp on high-DPI screens

cv::Scalar bgr(const std::string& hex) {
  if (hex.size() != 7 || hex[0] != '#') return {34, 34, 34};
  const int v = std::stoi(hex.substr(1), nullptr, 16);
  return cv::Scalar(v & 0xFF, (v >> 8) & 0xFF, (v >> 16) & 0xFF);
}

// Hershey fonts are ASCII only.
std::string asciiOnly(const std::string& s) {
  static const std::pair<const char*, const char*> kMap[] = {{"×", "x"},  {"–", "-"}, {"—", "-"}, {"−", "-"},
                                                             {"→", "->"}, {"…", "..."}, {"Δ", "d"}, {"·", "."}};
  std::string out;
  for (size_t i = 0; i < s.size();) {
    bool hit = false;
    for (const auto& [from, to] : kMap) {
      const size_t n = std::strlen(from);
      if (s.compare(i, n, from) == 0) {
        out += to, i += n, hit = true;
        break;
      }
    }
    if (hit) continue;
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) out += s[i];
    ++i;  // other multi-byte sequences are dropped byte by byte
  }
  return out;
}

cv::Point pt(double x, double y) { return {static_cast<int>(std::lround(x * kPngScale)), static_cast<int>(std::lround(y * kPngScale))}; }

void drawSegment(cv::Mat& img, cv::Point a, cv::Point b, const cv::Scalar& color, int thickness, bool dashed) {
  if (!dashed) {
    cv::line(img, a, b, color, thickness, cv::LINE_AA);
    return;
  }
  const double len = std::hypot(b.x - a.x, b.y - a.y), dash = 6 * kPngScale, gap = 4 * kPngScale;
  for (double s = 0; s < len; s += dash + gap) {
    const double e = std::min(len, s + dash);
    auto at = [&](double d) { return cv::Point(a.x + static_cast<int>((b.x - a.x) * d / len), a.y + static_cast<int>((b.y - a.y) * d / len)); };
    cv::line(img, at(s), at(e), color, thickness, cv::LINE_AA);
  }
}

void drawText(cv::Mat& img, const report::DrawText& t) {
  const std::string text = asciiOnly(t.text);
  const int font = cv::FONT_HERSHEY_SIMPLEX;
  const double scale = t.size * kPngScale / 30.0;
  const int thick = t.bold ? 2 : 1;
  int base = 0;
  const cv::Size size = cv::getTextSize(text, font, scale, thick, &base);
  const double shift = t.anchor == report::Anchor::Start ? 0 : t.anchor == report::Anchor::Middle ? size.width / 2.0 : size.width;
  const cv::Point origin = pt(t.x, t.y) - cv::Point(static_cast<int>(shift), 0);
  if (t.rotate == 0) {
    cv::putText(img, text, origin, font, scale, bgr(t.color), thick, cv::LINE_AA);
    return;
  }
  // Rotated text: draw it into a square mask centred on the anchor, rotate the mask about its
  // centre, and blend the colour through it into the part of the image it covers.
  const int side = 2 * (size.width + size.height + base) + 8;
  const cv::Point centre(side / 2, side / 2);
  cv::Mat mask = cv::Mat::zeros(side, side, CV_8UC1), rotated;
  cv::putText(mask, text, centre - cv::Point(static_cast<int>(shift), 0), font, scale, cv::Scalar(255), thick, cv::LINE_AA);
  cv::warpAffine(mask, rotated, cv::getRotationMatrix2D(cv::Point2f(centre), -t.rotate, 1.0), mask.size());
  const cv::Point anchor = pt(t.x, t.y);
  const cv::Rect area = cv::Rect(anchor - centre, cv::Size(side, side)) & cv::Rect(0, 0, img.cols, img.rows);
  if (area.empty()) return;
  const cv::Mat alpha = rotated(area - (anchor - centre));
  cv::Mat roi = img(area);
  const cv::Scalar colour = bgr(t.color);
  for (int y = 0; y < roi.rows; ++y)
    for (int x = 0; x < roi.cols; ++x) {
      const double a = alpha.at<uchar>(y, x) / 255.0;
      if (a == 0) continue;
      auto& px = roi.at<cv::Vec3b>(y, x);
      for (int ch = 0; ch < 3; ++ch) px[ch] = cv::saturate_cast<uchar>(px[ch] * (1 - a) + colour[ch] * a);
    }
}

Result<std::string> rasterisePng(const report::Drawing& d) {
  cv::Mat img(static_cast<int>(d.height * kPngScale), static_cast<int>(d.width * kPngScale), CV_8UC3, cv::Scalar(255, 255, 255));
  for (const auto& r : d.rects) {
    const cv::Rect box(pt(r.x, r.y), pt(r.x + r.w, r.y + r.h));
    if (!r.fill.empty()) cv::rectangle(img, box, bgr(r.fill), cv::FILLED);
    if (!r.stroke.empty()) cv::rectangle(img, box, bgr(r.stroke), static_cast<int>(kPngScale), cv::LINE_AA);
  }
  for (const auto& l : d.lines)
    drawSegment(img, pt(l.x1, l.y1), pt(l.x2, l.y2), bgr(l.color), std::max(1, static_cast<int>(l.width * kPngScale / 1.5)), l.dashed);
  for (const auto& p : d.polylines)
    for (size_t i = 1; i < p.points.size(); ++i)
      drawSegment(img, pt(p.points[i - 1].first, p.points[i - 1].second), pt(p.points[i].first, p.points[i].second), bgr(p.color),
                  static_cast<int>(p.width * kPngScale), p.dashed);
  for (const auto& t : d.texts) drawText(img, t);
  std::vector<uchar> buf;
  if (!cv::imencode(".png", img, buf)) return makeError(Errc::Io, "OpenCV could not encode the chart as PNG");
  return std::string(buf.begin(), buf.end());
}

// ---- running the steps ------------------------------------------------------------------------

Status writeOutputs(const fs::path& out, const report::Ladder& ladder, const std::vector<report::LadderStepRuns>& steps) {
  const report::Report rep = report::buildLadderReport(ladder, steps);
  for (auto f : {report::Format::Markdown, report::Format::Csv, report::Format::Latex, report::Format::Json, report::Format::Html})
    if (auto st = report::writeReport(rep, f, out / (std::string("ladder.") + report::formatExtension(f))); !st.ok()) return st;
  const report::Drawing& chart = rep.figures.front().drawing;
  if (auto st = writeFileAtomic(out / "ladder.svg", report::toSvg(chart)); !st.ok()) return st;
  auto png = rasterisePng(chart);
  if (!png.ok()) return png.error();
  return writeFileAtomic(out / "ladder.png", *png);
}

// One run of a step: launched, then loaded back from its folder.
void runOnce(report::LadderStepRuns& step, const fs::path& runDir) {
  launch::LaunchOptions lo;
  lo.cli_path = selfPath();
  lo.run_dir = runDir.string();
  lo.overwrite = true;  // rung folders are the ladder's own: a ladder run again into --out measures afresh
  lo.on_event = [](const json& ev) {
    const std::string type = ev.value("type", "");
    if (type == "eval" && ev.value("rank", 0) == 0)
      std::fprintf(stderr, "    epoch %d  val acc %.2f %%  (%.1f s)\n", ev.value("epoch", 0), 100.0 * ev.value("val_acc", 0.0),
                   ev.value("t", 0.0));
    else if (type == "error")
      std::fprintf(stderr, "    error: %s\n", ev.value("message", "").c_str());
  };
  // The run's name says which step it is, so the window's run list and `compare` tell them apart.
  Config config = step.step.config;
  config.name += " / " + runDir.filename().string();
  auto outcome = launch::launchRun(config, lo);
  if (!outcome.ok()) {
    step.failures.push_back(runDir.filename().string() + " could not start: " + outcome.error().message);
    std::fprintf(stderr, "    could not start: %s\n", outcome.error().message.c_str());
    return;
  }
  auto rec = report::loadRun(runDir);
  if (!rec.ok()) {
    step.failures.push_back(rec.error().message);
    return;
  }
  const auto m = report::computeMetrics(*rec, std::nullopt);
  std::fprintf(stderr, "    %s in %s, best val acc %s\n", rec->status.c_str(),
               m.wall_s ? report::fmtSeconds(*m.wall_s).c_str() : "?",
               m.best_val_acc ? report::fmtAccuracy(*m.best_val_acc).c_str() : "–");
  step.runs.push_back(std::move(rec.value()));
}

// Runs step i once in round r (its folder "NN-key[-rR][suffix]"); true when that run was
// measured under contention.
bool runStep(std::vector<report::LadderStepRuns>& steps, size_t i, int round, int repeats, const fs::path& out,
             const std::string& suffix) {
  auto& step = steps[i];
  std::fprintf(stderr, "[%zu/%zu%s] %s: %s%s\n", i + 1, steps.size(),
               repeats > 1 ? (", round " + std::to_string(round)).c_str() : "", step.step.key.c_str(),
               step.step.added.c_str(), step.step.skipped ? (" — skipped: " + step.step.note).c_str() : "");
  if (step.step.skipped) return false;
  std::string name = step.step.slug(static_cast<int>(i));
  if (repeats > 1) name += "-r" + std::to_string(round);
  const size_t before = step.runs.size();
  runOnce(step, out / "runs" / (name + suffix));
  return step.runs.size() > before && report::computeMetrics(step.runs.back(), std::nullopt).contention.contended;
}

// A planned step this machine's config checks refuse (e.g. fp16 without CUDA) becomes skipped.
void refuseWhatTheMachineRejects(report::LadderStep& s) {
  if (s.skipped) return;
  auto errs = validate(s.config);
  for (auto& e : train::machineConfigErrors(s.config, 1)) errs.push_back(e);
  if (errs.empty()) return;
  s.skipped = true;
  s.note = formatFieldErrors(errs);
}

// --steps: the baseline and the listed steps run; the others stay in the plan, left out with a note.
Status keepOnlySteps(std::vector<report::LadderStep>& plan, const std::string& list) {
  std::vector<std::string> keys;
  for (size_t at = 0; at <= list.size();) {
    const size_t comma = std::min(list.find(',', at), list.size());
    if (comma > at) keys.push_back(list.substr(at, comma - at));
    at = comma + 1;
  }
  std::string known;
  for (const auto& s : plan) known += (known.empty() ? "" : ", ") + s.key;
  for (const auto& k : keys)
    if (std::none_of(plan.begin(), plan.end(), [&](const report::LadderStep& s) { return s.key == k; }))
      return makeError(Errc::InvalidConfig, "--steps: unknown step '" + k + "' (this plan has " + known + ")");
  for (auto& s : plan)
    if (s.key != "baseline" && !s.skipped && std::find(keys.begin(), keys.end(), s.key) == keys.end())
      s.skipped = true, s.note = "left out (--steps)";
  return {};
}

void printPlan(const std::vector<report::LadderStep>& plan) {
  report::Table t;
  t.columns = {{"step", "Step", ""}, {"added", "What is added", ""}, {"note", "Note", ""}};
  for (size_t i = 0; i < plan.size(); ++i) {
    const auto& s = plan[i];
    t.rows.push_back({report::Cell::str(s.slug(static_cast<int>(i))), report::Cell::str(s.added),
                      report::Cell::str((s.skipped ? "skipped: " : "") + s.note)});
  }
  std::printf("%s", report::renderText(t).c_str());
}

Result<fs::path> prepareOut(const Args& args) {
  fs::path out;
  if (auto o = args.get("out")) out = *o;
  else out = fs::path(args.get("runs-root", defaultRunsRoot().string())) / makeRunId("ladder");
  std::error_code ec;
  out = fs::absolute(out, ec);
  if (fs::exists(out, ec) && (!fs::is_directory(out, ec) || !fs::is_empty(out, ec)))
    return makeError(Errc::Io, "--out " + out.string() + ": exists and is not an empty folder (choose a new one)");
  fs::create_directories(out / "runs", ec);
  if (ec) return makeError(Errc::Io, "--out " + out.string() + ": cannot create it: " + ec.message());
  return out;
}

}  // namespace

int cmdLadder(const Argv& argv) {
  Args args(argv, {"help", "isolated", "dry-run"},
            {"config", "set", "out", "runs-root", "repeats", "target-acc", "steps", "rerun-contended"});
  if (args.has("help")) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  if (!args.ok()) {
    std::fprintf(stderr, "workbench-cli ladder: %s\n", args.error().c_str());
    return 2;
  }
  auto config = resolveConfig(args);
  if (!config.ok()) {
    std::fprintf(stderr, "workbench-cli ladder: invalid config:\n%s\n", config.error().message.c_str());
    return 2;
  }
  int repeats = 1;
  try {
    repeats = std::stoi(args.get("repeats", "1"));
  } catch (const std::exception&) {
    repeats = 0;
  }
  if (repeats < 1 || repeats > 100) {
    std::fprintf(stderr, "workbench-cli ladder: --repeats %s: must be a whole number from 1 to 100\n", args.get("repeats", "").c_str());
    return 2;
  }
  std::optional<double> target;
  if (auto t = args.get("target-acc")) {
    auto parsed = report::parseTargetAccuracy(*t);
    if (!parsed.ok()) {
      std::fprintf(stderr, "workbench-cli ladder: %s\n", parsed.error().message.c_str());
      return 2;
    }
    target = *parsed;
  }

  int reruns = 1;
  try {
    reruns = std::stoi(args.get("rerun-contended", "1"));
  } catch (const std::exception&) {
    reruns = -1;
  }
  if (reruns < 0 || reruns > 10) {
    std::fprintf(stderr, "workbench-cli ladder: --rerun-contended %s: must be a whole number from 0 to 10\n",
                 args.get("rerun-contended", "").c_str());
    return 2;
  }
  json caps = train::capabilitiesJson();
  report::attachProbe(caps, report::loadProbe(*config));  // the workers step's count, when probed
  auto plan = report::planLadder(*config, caps, args.has("isolated"));
  for (auto& s : plan) refuseWhatTheMachineRejects(s);
  if (auto only = args.get("steps")) {
    if (auto st = keepOnlySteps(plan, *only); !st.ok()) {
      std::fprintf(stderr, "workbench-cli ladder: %s\n", st.error().message.c_str());
      return 2;
    }
  }
  if (args.has("dry-run")) {
    printPlan(plan);
    return 0;
  }
  auto out = prepareOut(args);
  if (!out.ok()) {
    std::fprintf(stderr, "workbench-cli ladder: %s\n", out.error().message.c_str());
    return 1;
  }
  installStopSignals();
  std::fprintf(stderr, "ladder -> %s (%zu steps, %d repeat(s) each)\n", out->c_str(), plan.size(), repeats);

  std::vector<report::LadderStepRuns> steps;
  for (const auto& s : plan) steps.push_back({s, {}, {}});
  // Repeats are interleaved (round r runs every step once), so a noisy minute touches one repeat
  // of several steps rather than every repeat of one; a run measured under contention is run
  // once more at the end of its round, and the summary leaves it out when a clean one exists.
  Status written;
  auto measure = [&](size_t i, int round, const std::string& suffix) {
    const bool contended = runStep(steps, i, round, repeats, *out, suffix);
    if (written.ok()) written = writeOutputs(*out, report::summarizeLadder(steps, target), steps);
    return contended;
  };
  for (int r = 1; r <= repeats && !stopFlag().load() && written.ok(); ++r) {
    std::vector<size_t> contended;
    for (size_t i = 0; i < steps.size() && !stopFlag().load(); ++i)
      if (measure(i, r, "")) contended.push_back(i);
    for (int again = 1; again <= reruns && !contended.empty() && !stopFlag().load(); ++again) {
      std::vector<size_t> still;
      for (size_t i : contended) {
        if (stopFlag().load()) break;
        std::fprintf(stderr, "  %s was measured under contention: once more\n", steps[i].step.key.c_str());
        if (measure(i, r, "-again" + (again > 1 ? std::to_string(again) : std::string()))) still.push_back(i);
      }
      contended = std::move(still);
    }
  }
  if (!written.ok()) {
    std::fprintf(stderr, "workbench-cli ladder: %s\n", written.error().message.c_str());
    return 1;
  }
  bool failed = false;
  for (const auto& step : steps) {
    bool ok = step.step.skipped;
    for (const auto& rec : step.runs) ok = ok || rec.status == "ok" || rec.status == "early-stopped";
    failed = failed || (!ok && !stopFlag().load());
  }
  const auto ladder = report::summarizeLadder(steps, target);
  if (auto st = writeOutputs(*out, ladder, steps); !st.ok()) {
    std::fprintf(stderr, "workbench-cli ladder: %s\n", st.error().message.c_str());
    return 1;
  }
  std::printf("%s\n", report::renderText(report::ladderTable(ladder)).c_str());
  std::printf("wrote %s/ladder.{md,csv,tex,json,html,svg,png} and the runs in %s/runs\n", out->c_str(), out->c_str());
  if (stopFlag().load()) {
    std::fprintf(stderr, "ladder cancelled: the tables hold the steps that finished\n");
    return 130;
  }
  return failed ? 1 : 0;
}

}  // namespace wb::cli
