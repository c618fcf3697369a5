// workbench-cli dataset export | inspect: dataset tools that need no run.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "args.h"
#include "commands.h"
#include "wb/common/result.h"
#include "wb/data/dataset.h"

namespace wb::cli {
namespace {

const char* kHelp = R"(Usage:
  workbench-cli dataset export [--dataset SPEC] [--split train|test|both] --to folder:<dir>
                               [--format png|jpg] [--size N] [--limit N]
  workbench-cli dataset inspect SPEC [--json]

SPEC is fashion-mnist (default), idx:<dir>, cifar10:<dir> or folder:<dir>.

export   writes the dataset as an ImageFolder: <dir>/<split>/<label>_<class>/<index>.<format>
         (class folders keep the original label order), so decode-heavy pipelines can be tried
         on real images. --size N resizes to N x N; --limit N exports the first N of each split.
         Progress goes to stderr.
inspect  prints splits, classes, samples per class, image size, channels and problems found.
         --json prints one object:
         {"ok":bool,"spec":"..","splits":{"train":{"size":N,"classes":[..],"class_counts":[..],
          "channels":C,"height":H,"width":W,"mean":[..],"std":[..]},"test":{..}},"problems":[".."]}
         (height = width = 0: images vary in size). ok is false when a split that should exist
         cannot be opened or the splits' classes differ.

Exit codes: 0 ok, 1 other failure, 2 bad usage, 3 data error.
)";

int usageError(const std::string& message) {
  std::fprintf(stderr, "workbench-cli dataset: %s\n(see workbench-cli dataset --help)\n", message.c_str());
  return 2;
}

int fail(const Error& e) {
  std::fprintf(stderr, "workbench-cli dataset: %s\n", e.message.c_str());
  return exitCodeFor(e.code);
}

bool parseCount(const std::string& text, int64_t& out) {
  try {
    size_t used = 0;
    out = std::stoll(text, &used);
    return used == text.size() && out >= 0;
  } catch (const std::exception&) {
    return false;
  }
}

Result<std::shared_ptr<data::Dataset>> openLimited(const std::string& spec, const std::string& split, int64_t limit) {
  auto ds = data::openDataset(spec, split);
  if (!ds.ok() || limit <= 0 || limit >= (*ds)->size()) return ds;
  std::vector<int64_t> first(static_cast<size_t>(limit));
  for (int64_t i = 0; i < limit; ++i) first[i] = i;
  return data::subset(*ds, std::move(first), split);
}

int cmdExportDataset(const Argv& argv) {
  Args a(argv, {"help"}, {"dataset", "split", "to", "format", "size", "limit"});
  if (!a.ok()) return usageError(a.error());
  if (a.has("help")) return std::fputs(kHelp, stdout), 0;
  if (!a.positionals().empty()) return usageError("unexpected argument '" + a.positionals().front() + "'");
  const std::string spec = a.get("dataset", "fashion-mnist");
  const std::string split = a.get("split", "both");
  const std::string to = a.get("to", "");
  const std::string format = a.get("format", "png");
  int64_t size = 0, limit = 0;
  if (to.rfind("folder:", 0) != 0 || to.size() <= 7) return usageError("--to: '" + to + "' — must be folder:<dir>");
  if (split != "train" && split != "test" && split != "both")
    return usageError("--split: '" + split + "' — must be train, test or both");
  if (format != "png" && format != "jpg") return usageError("--format: '" + format + "' — must be png or jpg");
  if (!parseCount(a.get("size", "0"), size) || size > 4096)
    return usageError("--size: '" + a.get("size", "0") + "' — must be an integer in 0..4096 (0 = native size)");
  if (!parseCount(a.get("limit", "0"), limit))
    return usageError("--limit: '" + a.get("limit", "0") + "' — must be an integer >= 0 (0 = all)");
  const std::string dir = to.substr(7);

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
    auto st = data::exportImageFolder(**ds, dir, format, static_cast<int>(size), progress);
    if (tty) std::fputc('\n', stderr);
    if (!st.ok()) return fail(st.error());
  }
  std::fprintf(stderr, "exported %s to %s (open it as folder:%s)\n", spec.c_str(), dir.c_str(), dir.c_str());
  return 0;
}

nlohmann::ordered_json splitJson(const data::DatasetInfo& info) {
  return {{"size", info.size},         {"classes", info.class_names}, {"class_counts", info.class_counts},
          {"channels", info.channels}, {"height", info.height},       {"width", info.width},
          {"mean", info.mean},         {"std", info.stddev}};
}

void printHuman(const nlohmann::ordered_json& r) {
  std::cout << r["spec"].get<std::string>() << (r["ok"].get<bool>() ? "" : "  (NOT usable as is)") << "\n";
  for (const auto& [name, s] : r["splits"].items()) {
    const int h = s["height"], w = s["width"];
    std::cout << "  " << name << ": " << s["size"].get<int64_t>() << " images, " << s["channels"].get<int>()
              << " channel(s), " << (h > 0 ? std::to_string(w) + "x" + std::to_string(h) : std::string("mixed sizes"))
              << ", " << s["classes"].size() << " classes\n    ";
    for (size_t c = 0; c < s["classes"].size(); ++c)
      std::cout << (c ? ", " : "") << s["classes"][c].get<std::string>() << " " << s["class_counts"][c].get<int64_t>();
    std::cout << "\n";
  }
  if (r["problems"].empty()) std::cout << "problems: none\n";
  for (const auto& p : r["problems"]) std::cout << "problem: " << p.get<std::string>() << "\n";
}

int cmdInspect(const Argv& argv) {
  Args a(argv, {"help", "json"}, {});
  if (!a.ok()) return usageError(a.error());
  if (a.has("help")) return std::fputs(kHelp, stdout), 0;
  if (a.positionals().size() != 1) return usageError("inspect takes one dataset SPEC");
  const std::string spec = a.positionals().front();
  auto parsed = data::parseDatasetSpec(spec);
  if (!parsed.ok()) return fail(parsed.error());

  nlohmann::ordered_json r = {{"ok", true}, {"spec", spec}, {"splits", nlohmann::ordered_json::object()}, {"problems", nlohmann::ordered_json::array()}};
  const bool singleFolder = parsed->kind == "folder" && std::filesystem::is_directory(parsed->dir) &&
                            !std::filesystem::is_directory(parsed->dir + "/train");
  std::vector<std::string> trainClasses;
  for (const std::string split : {"train", "test"}) {
    if (split == "test" && singleFolder) {
      r["problems"].push_back("no test split (" + parsed->dir + " is one folder): runs need data.val_fraction > 0");
      continue;
    }
    auto ds = data::openDataset(spec, split);
    if (!ds.ok()) {
      r["ok"] = false;
      r["problems"].push_back(ds.error().message);
      continue;
    }
    const auto& info = (*ds)->info();
    r["splits"][split] = splitJson(info);
    for (const auto& p : info.problems) r["problems"].push_back(split + ": " + p);
    if (split == "train") trainClasses = info.class_names;
    else if (!trainClasses.empty() && trainClasses != info.class_names) {
      r["ok"] = false;
      r["problems"].push_back("the test split's classes differ from train's: give both splits the same class folders");
    }
  }
  if (a.has("json")) std::cout << r.dump() << "\n";
  else printHuman(r);
  return r["ok"].get<bool>() ? 0 : exitCodeFor(Errc::Data);
}

}  // namespace

int cmdDataset(const Argv& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::fputs(kHelp, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  const Argv rest(args.begin() + 1, args.end());
  if (args[0] == "export") return cmdExportDataset(rest);
  if (args[0] == "inspect") return cmdInspect(rest);
  return usageError("unknown subcommand '" + args[0] + "' (export | inspect)");
}

}  // namespace wb::cli
