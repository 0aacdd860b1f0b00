// COCO results reading and writing with entry-level errors; see coco_results.h.
#include "eval/coco_results.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_set>

#include "core/error.h"
#include "geometry/rotated_box.h"

namespace trainer::eval {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw core::InputError(fmt::format("{}: {}", source, what));
}

// Python's json module writes NaN/Infinity as bare tokens, which are not json. We quote them so the
// file still parses and the entry holding one can be named.
std::string quote_non_finite_tokens(const std::string& text) {
  std::string out;
  out.reserve(text.size() + 64);
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    size_t len = 0;
    if (c == 'N' && text.compare(i, 3, "NaN") == 0) len = 3;
    if (c == 'I' && text.compare(i, 8, "Infinity") == 0) len = 8;
    if (c == '-' && text.compare(i, 9, "-Infinity") == 0) len = 9;
    if (len == 0) {
      out += c;
      continue;
    }
    out += '"';
    out.append(text, i, len);
    out += '"';
    i += len - 1;
  }
  return out;
}

// The entry's name is built only when an error needs it (`Name` returns a std::string).
template <typename Name>
double read_number(const json& value, const std::string& source, const Name& entry,
                   const char* what) {
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) {
    fail(source, fmt::format("{}: {} is {}", entry(), what, value.get<std::string>()));
  }
  fail(source, fmt::format("{}: {} must be a number, got {}", entry(), what, value.dump()));
}

template <typename Name>
int64_t read_id(const json& object, const char* key, const std::string& source, const Name& entry) {
  auto it = object.find(key);
  if (it == object.end()) fail(source, fmt::format("{} has no \"{}\"", entry(), key));
  constexpr double kLimit = 9.2e18;  // inside int64_t's range, so the cast below is defined
  if (it->is_number_unsigned()) {
    if (it->get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)) return it->get<int64_t>();
  } else if (it->is_number_integer()) {
    return it->get<int64_t>();
  } else if (it->is_number_float()) {
    const double d = it->get<double>();
    if (std::isfinite(d) && std::abs(d) < kLimit && d == std::floor(d)) {
      return static_cast<int64_t>(d);
    }
  }
  fail(source, fmt::format("{}: \"{}\" must be an integer, got {}", entry(), key, it->dump()));
}

std::string describe(size_t index, int64_t image_id) {
  return fmt::format("detection #{} (image_id {})", index, image_id);
}

struct IdSets {
  std::unordered_set<int64_t> images;
  std::unordered_set<int64_t> categories;
  explicit IdSets(const data::CocoFile& gt) {
    images.reserve(gt.images.size() * 2);
    for (const auto& image : gt.images) images.insert(image.id);
    for (const auto& category : gt.categories) categories.insert(category.id);
  }
};

void check_one(const Detection& d, size_t index, const IdSets& ids, const std::string& source) {
  auto bad = [&](const std::string& what) {
    fail(source, fmt::format("{}: {}", describe(index, d.image_id), what));
  };
  if (!ids.images.count(d.image_id)) {
    bad(fmt::format("unknown image_id {} (not in the ground truth)", d.image_id));
  }
  if (!ids.categories.count(d.category_id)) {
    bad(fmt::format("unknown category_id {} (not in the ground truth)", d.category_id));
  }
  if (std::isnan(d.score)) bad("score is NaN");
  if (!std::isfinite(d.score)) bad(fmt::format("score is {}", d.score));
  for (double v : d.bbox_xywh) {
    if (!std::isfinite(v)) bad(fmt::format("bbox holds {}", v));
  }
  for (double v : d.keypoints) {
    if (!std::isfinite(v)) bad(fmt::format("keypoints hold {}", v));
  }
}

// pycocotools' loadRes for keypoint results without a box: the extent of all points (the
// visibility is not consulted), as [x0, y0, x1 - x0, y1 - y0].
std::array<double, 4> keypoint_extent(const std::vector<double>& k) {
  double x0 = k[0], x1 = k[0], y0 = k[1], y1 = k[1];
  for (size_t i = 0; i + 2 < k.size(); i += 3) {
    x0 = std::min(x0, k[i]), x1 = std::max(x1, k[i]);
    y0 = std::min(y0, k[i + 1]), y1 = std::max(y1, k[i + 1]);
  }
  return {x0, y0, x1 - x0, y1 - y0};
}

}  // namespace

void check_detections(const std::vector<Detection>& detections, const data::CocoFile& ground_truth,
                      const std::string& source) {
  const IdSets ids(ground_truth);
  for (size_t i = 0; i < detections.size(); ++i) check_one(detections[i], i, ids, source);
}

std::vector<Detection> parse_coco_results(const std::string& text, const std::string& source,
                                          const data::CocoFile& ground_truth) {
  json root;
  try {
    const bool bare_tokens =
        text.find("NaN") != std::string::npos || text.find("Infinity") != std::string::npos;
    root = bare_tokens ? json::parse(quote_non_finite_tokens(text)) : json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1e999
    fail(source, fmt::format("malformed json ({})", e.what()));
  }
  if (!root.is_array()) {
    fail(source, "the top level is not a list of detections (COCO results form)");
  }
  const IdSets ids(ground_truth);
  std::vector<Detection> out;
  out.reserve(root.size());
  for (const json& entry : root) {
    const size_t index = out.size();
    if (!entry.is_object()) fail(source, fmt::format("detection #{} is not an object", index));
    Detection d;
    d.image_id =
        read_id(entry, "image_id", source, [&] { return fmt::format("detection #{}", index); });
    const auto name = [&] { return describe(index, d.image_id); };
    d.category_id = read_id(entry, "category_id", source, name);
    if (auto kp = entry.find("keypoints"); kp != entry.end()) {
      if (!kp->is_array() || kp->empty() || kp->size() % 3 != 0) {
        fail(source, fmt::format("{}: \"keypoints\" must be [x1, y1, s1, ...] (triples)", name()));
      }
      for (const json& v : *kp)
        d.keypoints.push_back(read_number(v, source, name, "a keypoint value"));
    }
    for (const char* key : {"rbox", "poly"}) {
      auto it = entry.find(key);
      if (it == entry.end() || !d.rbox.empty()) continue;
      std::vector<double> values;
      if (it->is_array()) {
        for (const json& v : *it) values.push_back(read_number(v, source, name, key));
      }
      try {
        const geometry::RotatedBox r = geometry::rotated_box_from_values(values);
        d.rbox = {r.cx, r.cy, r.w, r.h, r.angle};
      } catch (const std::invalid_argument& e) {
        fail(source, fmt::format("{}: \"{}\": {}", name(), key, e.what()));
      }
    }
    auto bbox = entry.find("bbox");
    if (bbox == entry.end() && !d.keypoints.empty()) {
      d.bbox_xywh = keypoint_extent(d.keypoints);
    } else if (bbox == entry.end() && !d.rbox.empty()) {
      d.bbox_xywh = geometry::extent_xywh({d.rbox[0], d.rbox[1], d.rbox[2], d.rbox[3], d.rbox[4]});
    } else {
      if (bbox == entry.end()) fail(source, fmt::format("{} has no \"bbox\"", name()));
      if (!bbox->is_array() || bbox->size() != 4) {
        fail(source,
             fmt::format("{}: \"bbox\" must be [x, y, w, h], got {}", name(), bbox->dump()));
      }
      for (size_t k = 0; k < 4; ++k) {
        d.bbox_xywh[k] = read_number((*bbox)[k], source, name, "a bbox value");
      }
    }
    auto score = entry.find("score");
    if (score == entry.end()) fail(source, fmt::format("{} has no \"score\"", name()));
    d.score = read_number(*score, source, name, "score");
    check_one(d, index, ids, source);
    out.push_back(d);
  }
  return out;
}

std::vector<Detection> read_coco_results(const std::filesystem::path& file,
                                         const data::CocoFile& ground_truth) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw core::InputError(fmt::format("{}: cannot open results file", file.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_coco_results(text.str(), file.string(), ground_truth);
}

std::string format_coco_results(const std::vector<Detection>& detections) {
  std::string out = "[";
  for (size_t i = 0; i < detections.size(); ++i) {
    const Detection& d = detections[i];
    out += fmt::format(
        "{}\n{{\"image_id\": {}, \"category_id\": {}, \"bbox\": [{:.3f}, {:.3f}, {:.3f}, {:.3f}], "
        "\"score\": {:.5f}",
        i == 0 ? "" : ",", d.image_id, d.category_id, d.bbox_xywh[0], d.bbox_xywh[1],
        d.bbox_xywh[2], d.bbox_xywh[3], d.score);
    if (!d.keypoints.empty()) {  // unrounded, as the reference writes them
      out += fmt::format(", \"keypoints\": [{}]", fmt::join(d.keypoints, ", "));
    }
    if (!d.rbox.empty()) {  // 3 decimals, as the reference's OBB json
      if (!d.file_name.empty()) out += fmt::format(", \"file_name\": {}", json(d.file_name).dump());
      out += fmt::format(", \"rbox\": [{:.3f}], \"poly\": [{:.3f}]", fmt::join(d.rbox, ", "),
                         fmt::join(d.poly, ", "));
    }
    out += "}";
  }
  out += detections.empty() ? "]\n" : "\n]\n";
  return out;
}

}  // namespace trainer::eval
