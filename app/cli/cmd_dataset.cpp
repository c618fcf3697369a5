// workbench-cli dataset export | inspect: dataset tools that need no run.
#include <algorithm>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <string>

#include "commands.h"
#include "options.h"
#include "wb/common/format.h"
#include "wb/common/result.h"
#include "wb/data/dataset.h"
#include "wb/data/usability.h"

namespace wb::cli {
namespace {

const char* kAbout = R"(dataset export --to folder:<dir> | dataset inspect <spec>

SPEC is fashion-mnist (default), idx:<dir>, cifar10:<dir> or folder:<dir>.)";

const char* kExportAbout = R"(writes the dataset as an ImageFolder

Writes <dir>/<split>/<label>_<class>/<index>.<format> (class folders keep the original label
order), so decode-heavy pipelines can be tried on real images. Progress goes to stderr.)";

const char* kInspectAbout = R"(prints splits, classes, samples per class, image size, channels and problems found

--json prints one object:
  {"ok":bool,"spec":"..","splits":{"train":{"size":N,"classes":[..],"class_counts":[..],
   "channels":C,"height":H,"width":W,"mean":[..],"std":[..]},"test":{..}},"problems":[".."]}
(height = width = 0: images vary in size). ok is false when a split that should exist
cannot be opened, the splits' classes differ, or more images cannot be decoded than
--max-bad-fraction allows (the run's data.max_bad_fraction: a run would stop on them).)";

const char* kFooter = R"(
Exit codes: 0 ok, 1 other failure, 2 bad usage, 3 data error.)";

struct ExportDatasetOptions {
  std::string spec = "fashion-mnist", split = "both", to, format = "png";
  int size = 0;
  int64_t limit = 0;
};

int fail(const Error& e) {
  std::fprintf(stderr, "workbench-cli dataset: %s\n", e.message.c_str());
  return exitCodeFor(e.code);
}

Result<std::shared_ptr<data::Dataset>> openLimited(const std::string& spec, const std::string& split, int64_t limit) {
  auto ds = data::openDataset(spec, split);
  if (!ds.ok() || limit <= 0 || limit >= (*ds)->size()) return ds;
  std::vector<int64_t> first(static_cast<size_t>(limit));
  for (int64_t i = 0; i < limit; ++i) first[i] = i;
  return data::subset(*ds, std::move(first), split);
}

int exportDatasetCommand(const ExportDatasetOptions& o) {
  const std::string& spec = o.spec;
  const std::string& split = o.split;
  const int64_t limit = o.limit;
  const std::string dir = o.to.substr(7);  // folder:<dir>, checked while parsing

  const bool tty = ::isatty(2);
  for (const std::string s : {"train", "test"}) {
    if (split != "both" && split != s) continue;
    auto ds = openLimited(spec, s, limit);
    if (!ds.ok()) return fail(ds.error());
    int64_t lastTenth = -1;
    auto progress = [&](int64_t done, int64_t total) {
      if (tty) {
        std::fprintf(stderr, "\rexport %s: %lld/%lld", s.c_str(), static_cast<long long>(done),
                     static_cast<long long>(total));
      } else if (done * 10 / total != lastTenth) {
        lastTenth = done * 10 / total;
        std::fprintf(stderr, "export %s: %lld/%lld\n", s.c_str(), static_cast<long long>(done),
                     static_cast<long long>(total));
      }
    };
    auto st = data::exportImageFolder(**ds, dir, o.format, o.size, progress);
    if (tty) std::fputc('\n', stderr);
    if (!st.ok()) return fail(st.error());
  }
  std::fprintf(stderr, "exported %s to %s (open it as folder:%s)\n", spec.c_str(), dir.c_str(), dir.c_str());
  return 0;
}

void printHuman(const proto::DatasetInspection& r) {
  std::cout << r.spec << (r.ok ? "" : "  (NOT usable as is)") << "\n";
  for (const std::string& name : r.splitNames()) {
    const proto::SplitInspection& s = r.splits.at(name);
    std::cout << "  " << name << ": " << s.size << " images, " << s.channels << " channel(s), "
              << (s.height > 0 ? std::to_string(s.width) + "x" + std::to_string(s.height) : std::string("mixed sizes")) << ", "
              << s.classes.size() << " classes\n    ";
    for (size_t c = 0; c < s.classes.size(); ++c)
      std::cout << (c ? ", " : "") << s.classes[c] << " " << (c < s.class_counts.size() ? s.class_counts[c] : 0);
    std::cout << "\n";
  }
  if (r.problems.empty()) std::cout << "problems: none\n";
  for (const auto& p : r.problems) std::cout << "problem: " << p << "\n";
  for (const auto& n : r.notes) std::cout << "note: " << n << "\n";
}

int inspectCommand(const std::string& spec, bool asJson, double maxBadFraction) {
  auto r = data::inspectDataset(spec, maxBadFraction);
  if (!r.ok()) return fail(r.error());
  if (asJson) std::cout << proto::inspectionToJson(*r).dump() << "\n";
  else printHuman(*r);
  return r->ok ? 0 : exitCodeFor(Errc::Data);
}

// --to folder:<dir>
Status checkExportTarget(const std::string& to) {
  if (to.rfind("folder:", 0) == 0 && to.size() > 7) return {};
  return makeError(Errc::InvalidConfig, "'" + to + "' is not folder:<dir>");
}

void addExportDataset(CLI::App& dataset, Commands& out) {
  auto o = std::make_shared<ExportDatasetOptions>();
  CLI::App* exp = dataset.add_subcommand("export", kExportAbout);
  exp->add_option("--dataset", o->spec, "the dataset to export (default fashion-mnist)")->type_name("SPEC");
  exp->add_option("--split", o->split, "the split(s) to export (default both)")
      ->type_name("SPLIT")->check(CLI::IsMember({"train", "test", "both"}));
  exp->add_option("--to", o->to, "where: folder:<dir>")
      ->type_name("folder:<dir>")->required()->check(checkedBy(checkExportTarget, ""));
  exp->add_option("--format", o->format, "the image format (default png)")
      ->type_name("FORMAT")->check(CLI::IsMember({"png", "jpg"}));
  exp->add_option("--size", o->size, "resize to N x N (default 0: native size)")->type_name("N")->check(inRange(0, 4096));
  exp->add_option("--limit", o->limit, "export the first N of each split (default 0: all)")
      ->type_name("N")->check(inRange<int64_t>(0, std::numeric_limits<int64_t>::max()));
  exp->footer(kFooter);
  out.push_back({exp, [o] { return exportDatasetCommand(*o); }});
}

void addInspect(CLI::App& dataset, Commands& out) {
  auto spec = std::make_shared<std::string>();
  auto asJson = std::make_shared<bool>(false);
  auto maxBad = std::make_shared<double>(Config{}.data.max_bad_fraction);
  CLI::App* inspect = dataset.add_subcommand("inspect", kInspectAbout);
  inspect->add_option("spec", *spec, "fashion-mnist, idx:<dir>, cifar10:<dir> or folder:<dir>")
      ->type_name("SPEC")->required();
  inspect->add_flag("--json", *asJson, "print one JSON object (below)");
  inspect->add_option("--max-bad-fraction", *maxBad,
                      "the share of undecodable images a run allows (data.max_bad_fraction, default " +
                          shortNumber(Config{}.data.max_bad_fraction) + ")")
      ->type_name("F")->check(CLI::Range(0.0, 1.0));
  inspect->footer(kFooter);
  out.push_back({inspect, [spec, asJson, maxBad] { return inspectCommand(*spec, *asJson, *maxBad); }});
}

}  // namespace

void addDataset(CLI::App& cli, Commands& out) {
  CLI::App* dataset = cli.add_subcommand("dataset", kAbout);
  addExportDataset(*dataset, out);
  addInspect(*dataset, out);
  out.push_back(addChooser(*dataset, "dataset command"));
}

}  // namespace wb::cli
