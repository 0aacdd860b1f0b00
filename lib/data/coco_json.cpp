// COCO annotation reading with entry-level errors; see coco_json.h.
#include "data/coco_json.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unordered_set>

#include "core/error.h"
#include "geometry/rotated_box.h"

namespace trainer::data {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw core::InputError(fmt::format("{}: {}", source, what));
}

const json& require(const json& object, const char* key, const std::string& source,
                    const std::string& entry) {
  if (!object.is_object()) fail(source, fmt::format("{} is not an object", entry));
  auto it = object.find(key);
  if (it == object.end()) fail(source, fmt::format("{} has no \"{}\"", entry, key));
  return *it;
}

int64_t require_int(const json& object, const char* key, const std::string& source,
                    const std::string& entry) {
  const json& value = require(object, key, source, entry);
  constexpr double kLimit = 9.2e18;  // inside int64_t's range, so the cast below is defined
  if (value.is_number_unsigned()) {
    if (value.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)) return value.get<int64_t>();
  } else if (value.is_number_integer()) {
    return value.get<int64_t>();
  } else if (value.is_number_float()) {
    const double d = value.get<double>();
    if (std::isfinite(d) && std::abs(d) < kLimit && d == std::trunc(d)) {
      return static_cast<int64_t>(d);
    }
  }
  fail(source, fmt::format("{}: \"{}\" must be an integer, got {}", entry, key, value.dump()));
}

double require_number(const json& object, const char* key, const std::string& source,
                      const std::string& entry) {
  const json& value = require(object, key, source, entry);
  if (!value.is_number()) {
    fail(source, fmt::format("{}: \"{}\" must be a number, got {}", entry, key, value.dump()));
  }
  return value.get<double>();
}

bool optional_flag(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return false;
  if (it->is_boolean()) return it->get<bool>();
  if (it->is_number()) return it->get<double>() != 0.0;
  return false;
}

const json& require_array(const json& root, const char* key, const std::string& source) {
  auto it = root.find(key);
  if (it == root.end()) fail(source, fmt::format("no \"{}\" array", key));
  if (!it->is_array()) fail(source, fmt::format("\"{}\" is not an array", key));
  return *it;
}

[[noreturn]] void bad_segmentation(const std::string& what) {
  throw std::invalid_argument("\"segmentation\" " + what);
}

// A non-negative integer that fits `limit` (json integers, or floats holding one, like 640.0).
bool read_count(const json& value, uint64_t limit, uint64_t* out) {
  if (value.is_number_unsigned()) {
    *out = value.get<uint64_t>();
  } else if (value.is_number_integer()) {
    if (value.get<int64_t>() < 0) return false;
    *out = static_cast<uint64_t>(value.get<int64_t>());
  } else if (value.is_number_float()) {
    const double d = value.get<double>();
    if (!(d >= 0 && d <= static_cast<double>(limit) && d == std::trunc(d))) return false;
    *out = static_cast<uint64_t>(d);
  } else {
    return false;
  }
  return *out <= limit;
}

CocoRle parse_rle(const json& value) {
  CocoRle rle;
  auto size = value.find("size");
  uint64_t h = 0, w = 0;
  constexpr uint64_t kSideLimit = INT32_MAX;
  if (size == value.end() || !size->is_array() || size->size() != 2 ||
      !read_count((*size)[0], kSideLimit, &h) || !read_count((*size)[1], kSideLimit, &w)) {
    bad_segmentation("RLE needs \"size\": [height, width] (non-negative integers)");
  }
  rle.height = static_cast<int>(h);
  rle.width = static_cast<int>(w);
  auto counts = value.find("counts");
  if (counts == value.end()) bad_segmentation("RLE has no \"counts\"");
  if (counts->is_string()) {
    rle.compressed = counts->get<std::string>();
    for (char c : rle.compressed) {
      if (c < '0' || c > 'o') {
        bad_segmentation(fmt::format("RLE string holds '{}' (COCO's alphabet is '0'..'o')", c));
      }
    }
    return rle;
  }
  if (!counts->is_array()) {
    bad_segmentation("RLE \"counts\" must be a list of run lengths or a string");
  }
  rle.counts.reserve(counts->size());
  uint64_t total = 0;
  for (const json& c : *counts) {
    uint64_t n = 0;
    if (!read_count(c, UINT32_MAX, &n)) {
      bad_segmentation(fmt::format("RLE count {} is not a non-negative 32-bit integer", c.dump()));
    }
    rle.counts.push_back(static_cast<uint32_t>(n));
    total += n;
  }
  if (total != h * w) {
    bad_segmentation(fmt::format("RLE counts cover {} pixels, not {}x{}", total, h, w));
  }
  return rle;
}

}  // namespace

CocoSegmentation parse_coco_segmentation(const json& value) {
  CocoSegmentation out;
  if (value.is_object()) {
    out.rle = parse_rle(value);
    return out;
  }
  if (!value.is_array()) {
    bad_segmentation("must be a list of polygons or an RLE object, got " + value.dump());
  }
  out.polygons.reserve(value.size());
  for (size_t i = 0; i < value.size(); ++i) {
    const json& polygon = value[i];
    if (!polygon.is_array()) {
      bad_segmentation("polygons must be lists [x1, y1, x2, y2, ...], got " + polygon.dump());
    }
    if (polygon.empty()) continue;  // `[[]]`: no polygon (box-only files write it)
    if (polygon.size() % 2 != 0 || polygon.size() < 4) {
      bad_segmentation(fmt::format("polygon #{} has {} values (pairs x, y, at least 2 points)", i,
                                   polygon.size()));
    }
    std::vector<double> xy;
    xy.reserve(polygon.size());
    for (const json& v : polygon) {
      if (!v.is_number()) {
        bad_segmentation(fmt::format("polygon #{} holds {}", i, v.dump()));
      }
      xy.push_back(v.get<double>());
    }
    out.polygons.push_back(std::move(xy));
  }
  return out;
}

std::string malformed_json_message(const std::exception& error, size_t document_bytes) {
  if (document_bytes == 0) return "the file is empty (a json document was expected)";
  std::string text = error.what();
  if (text.rfind("[json.exception.", 0) == 0) {
    const size_t close = text.find("] ");
    if (close != std::string::npos) text.erase(0, close + 2);
  }
  for (const char* prefix : {"parse error at ", "parse error: "}) {
    if (text.rfind(prefix, 0) == 0) text.erase(0, std::string(prefix).size());
  }
  const auto* parse = dynamic_cast<const json::parse_error*>(&error);
  const bool at_end = parse != nullptr && parse->byte >= document_bytes;
  return "malformed json" +
         std::string(parse != nullptr && text.rfind("line ", 0) == 0 ? " at " : ": ") + text +
         (at_end ? " (the file ends there: is it cut short?)" : "");
}

CocoFile parse_coco_json(const std::string& text, const std::string& source) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1e999
    fail(source, malformed_json_message(e, text.size()));
  }
  if (!root.is_object()) fail(source, "the top level is not an object");

  CocoFile out;
  out.source = source;
  std::unordered_set<int64_t> image_ids;
  for (const json& entry : require_array(root, "images", source)) {
    CocoImage image;
    std::string name = fmt::format("image #{}", out.images.size());
    image.id = require_int(entry, "id", source, name);
    name = fmt::format("image id {}", image.id);
    const json& file_name = require(entry, "file_name", source, name);
    if (!file_name.is_string()) fail(source, name + ": \"file_name\" must be a string");
    image.file_name = file_name.get<std::string>();
    // A missing, null or 0 size stays 0: the dataset reads it from the image file.
    for (const auto& [key, size] :
         {std::pair<const char*, int*>{"width", &image.width}, {"height", &image.height}}) {
      const auto it = entry.find(key);
      if (it != entry.end() && !it->is_null()) {
        *size = static_cast<int>(std::max<int64_t>(require_int(entry, key, source, name), 0));
      }
    }
    if (!image_ids.insert(image.id).second) fail(source, fmt::format("duplicate {}", name));
    out.images.push_back(std::move(image));
  }

  std::unordered_set<int64_t> category_ids;
  if (root.contains("categories")) {
    for (const json& entry : require_array(root, "categories", source)) {
      CocoCategory category;
      std::string name = fmt::format("category #{}", out.categories.size());
      category.id = require_int(entry, "id", source, name);
      name = fmt::format("category id {}", category.id);
      if (auto it = entry.find("name"); it != entry.end() && it->is_string()) {
        category.name = it->get<std::string>();
      }
      if (auto it = entry.find("supercategory"); it != entry.end() && it->is_string()) {
        category.supercategory = it->get<std::string>();
      }
      if (!category_ids.insert(category.id).second) fail(source, fmt::format("duplicate {}", name));
      out.categories.push_back(std::move(category));
    }
  }

  if (root.contains("annotations")) {
    std::unordered_set<int64_t> annotation_ids;
    for (const json& entry : require_array(root, "annotations", source)) {
      CocoAnnotation ann;
      std::string name = fmt::format("annotation #{}", out.annotations.size());
      ann.id = require_int(entry, "id", source, name);
      name = fmt::format("annotation id {}", ann.id);
      ann.image_id = require_int(entry, "image_id", source, name);
      ann.category_id = require_int(entry, "category_id", source, name);
      for (const char* key : {"rbox", "poly"}) {
        auto it = entry.find(key);
        if (it == entry.end() || !ann.rbox.empty()) continue;
        std::vector<double> values;
        if (it->is_array()) {
          for (const json& v : *it)
            values.push_back(v.is_number() ? v.get<double>() : std::nan(""));
        }
        try {
          const geometry::RotatedBox r = geometry::rotated_box_from_values(values);
          ann.rbox = {r.cx, r.cy, r.w, r.h, r.angle};
        } catch (const std::invalid_argument& e) {
          fail(source, fmt::format("{}: \"{}\": {}", name, key, e.what()));
        }
      }
      if (!entry.contains("bbox") && !ann.rbox.empty()) {
        ann.bbox = geometry::extent_xywh(
            {ann.rbox[0], ann.rbox[1], ann.rbox[2], ann.rbox[3], ann.rbox[4]});
      } else {
        const json& bbox = require(entry, "bbox", source, name);
        if (!bbox.is_array() || bbox.size() != 4) {
          fail(source, fmt::format("{}: \"bbox\" must be [x, y, w, h], got {}", name, bbox.dump()));
        }
        for (size_t k = 0; k < 4; ++k) {
          if (!bbox[k].is_number()) fail(source, name + ": \"bbox\" holds a non-number");
          ann.bbox[k] = bbox[k].get<double>();
        }
      }
      if (ann.bbox[2] < 0 || ann.bbox[3] < 0) {
        fail(source, fmt::format("{}: negative box size {}x{}", name, ann.bbox[2], ann.bbox[3]));
      }
      ann.area = entry.contains("area") ? require_number(entry, "area", source, name)
                 : ann.rbox.empty()     ? ann.bbox[2] * ann.bbox[3]
                                        : ann.rbox[2] * ann.rbox[3];
      ann.iscrowd = optional_flag(entry, "iscrowd");
      ann.ignore = optional_flag(entry, "ignore");
      if (auto kp = entry.find("keypoints"); kp != entry.end()) {
        if (!kp->is_array() || kp->size() % 3 != 0) {
          fail(source, name + ": \"keypoints\" must be [x1, y1, v1, ...] (triples)");
        }
        for (const json& v : *kp) {
          if (!v.is_number()) fail(source, name + ": \"keypoints\" holds a non-number");
          ann.keypoints.push_back(v.get<double>());
        }
      }
      if (auto segm = entry.find("segmentation"); segm != entry.end() && !segm->is_null()) {
        try {
          ann.segmentation = parse_coco_segmentation(*segm);
        } catch (const std::invalid_argument& e) {
          fail(source, fmt::format("{}: {}", name, e.what()));
        }
      }
      if (entry.contains("num_keypoints")) {
        ann.num_keypoints = require_int(entry, "num_keypoints", source, name);
      }
      if (!annotation_ids.insert(ann.id).second) fail(source, fmt::format("duplicate {}", name));
      if (!image_ids.count(ann.image_id)) {
        fail(source, fmt::format("{}: unknown image_id {}", name, ann.image_id));
      }
      if (!category_ids.empty() && !category_ids.count(ann.category_id)) {
        fail(source, fmt::format("{}: unknown category_id {}", name, ann.category_id));
      }
      out.annotations.push_back(std::move(ann));
    }
  }
  return out;
}

CocoFile read_coco_json(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    throw core::InputError(fmt::format("{}: cannot open COCO annotation file", file.string()));
  std::ostringstream text;
  text << in.rdbuf();
  CocoFile out = parse_coco_json(text.str(), file.string());
  out.source = file;
  return out;
}

const std::array<int, 80>& coco80_to_coco91() {
  static const std::array<int, 80> ids = {
      1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 13, 14, 15, 16, 17, 18, 19, 20, 21,
      22, 23, 24, 25, 27, 28, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44,
      46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65,
      67, 70, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 84, 85, 86, 87, 88, 89, 90};
  return ids;
}

int coco91_to_coco80(int64_t category_id) {
  const auto& ids = coco80_to_coco91();
  for (int c = 0; c < 80; ++c) {
    if (ids[c] == category_id) return c;
  }
  return -1;
}

}  // namespace trainer::data
