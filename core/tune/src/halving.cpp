// Successive halving's promotion rule, on one rung's trials.
#include <algorithm>

#include "wb/render/table.h"
#include "wb/tune/tune.h"

namespace wb::tune {

namespace {

bool finished(const proto::TuneTrial& t) { return t.epoch_s && (t.status == "ok" || t.status == "early-stopped"); }

}  // namespace

std::pair<std::vector<std::string>, std::string> promote(const std::vector<proto::TuneTrial>& rung, int keep, double band) {
  keep = std::max(1, keep);
  std::vector<const proto::TuneTrial*> ranked, contended;
  for (const auto& t : rung)
    if (finished(t)) (t.contended ? contended : ranked).push_back(&t);
  const auto byEpoch = [](auto* a, auto* b) { return *a->epoch_s < *b->epoch_s; };
  std::stable_sort(ranked.begin(), ranked.end(), byEpoch);
  std::stable_sort(contended.begin(), contended.end(), byEpoch);
  std::vector<std::string> ids;
  double cut = 0;
  for (const auto* t : ranked) {
    const bool within = ids.size() < static_cast<size_t>(keep) || (*t->epoch_s <= cut * (1 + band) && ids.size() < static_cast<size_t>(2 * keep));
    if (!within) break;
    if (ids.size() < static_cast<size_t>(keep)) cut = *t->epoch_s;
    ids.push_back(t->candidate);
  }
  std::string why = "the " + std::to_string(keep) + " fastest by the epoch estimate";
  if (band > 0) why += ", and any within " + wb::fmtFixed(band * 100, 1) + " % (this host's run-to-run noise) of the last of them";
  // Too few measured on a quiet machine: contended trials fill the places left, said so (the
  // finals' pairs, which count only uncontended pairs, judge them).
  size_t filled = 0;
  for (size_t i = 0; i < contended.size() && ids.size() < static_cast<size_t>(keep); ++i, ++filled) ids.push_back(contended[i]->candidate);
  if (filled > 0) why += "; " + std::to_string(filled) + " place(s) filled by trials measured under contention (their figures are rough)";
  const size_t failed = rung.size() - ranked.size() - contended.size();
  if (failed > 0) why += "; " + std::to_string(failed) + " failed trial(s) never go on";
  return {ids, why};
}

}  // namespace wb::tune
