// See predict_output.h.
#include "predict/predict_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "data/augment/letterbox.h"

namespace trainer::predict {

int annotation_line_width(int height, int width, int line_width) {
  if (line_width > 0) return line_width;
  // sum(im.shape) includes the 3 channels.
  return std::max(data::augment::round_half_even((height + width + 3) / 2.0 * 0.003), 2);
}

std::string class_name(const std::vector<std::string>& names, int cls) {
  return cls >= 0 && cls < static_cast<int>(names.size()) ? names[cls] : std::to_string(cls);
}

std::string summary(const ImagePrediction& prediction, const std::vector<std::string>& names) {
  if (prediction.objects.empty()) return "(no detections), ";
  std::map<int, int> counts;
  for (const auto& o : prediction.objects) ++counts[o.cls];
  std::string out;
  for (const auto& [cls, n] : counts) {
    out += fmt::format("{} {}{}, ", n, class_name(names, cls), n > 1 ? "s" : "");
  }
  return out;
}

int64_t image_id_for(const std::filesystem::path& file, int64_t fallback) {
  const std::string stem = file.stem().string();
  if (stem.empty() || stem.size() > 18 ||
      !std::all_of(stem.begin(), stem.end(), [](unsigned char c) { return std::isdigit(c); })) {
    return fallback;
  }
  return std::stoll(stem);
}

}  // namespace trainer::predict
