// Storing a probe result: its JSON record, and its plot beside it (SVG, PNG from the SVG).
#include "wb/common/fs.h"
#include "wb/probe/record.h"
#include "wb/render/svg_png.h"

namespace wb::probe {
namespace fs = std::filesystem;
using nlohmann::json;

json storeProbe(const ProbeResult& r, const fs::path& dir, std::string* problem) {
  json files = json::object();
  if (auto st = saveProbe(r, dir); !st.ok()) {
    *problem = st.error().message;
    return files;
  }
  files["json"] = (dir / (r.key + ".json")).string();
  const fs::path svg = dir / (r.key + ".svg");
  if (auto st = writeFileAtomic(svg, render::toSvg(probeChart(r))); !st.ok()) {
    *problem = st.error().message;
    return files;
  }
  files["svg"] = svg.string();
  const fs::path png = dir / (r.key + ".png");
  if (render::svgToPng(svg, png, 2.0).ok()) files["png"] = png.string();  // without rsvg-convert: the SVG alone
  return files;
}

}  // namespace wb::probe
