// COCO results reading and writing with entry-level errors; see coco_results.h.
#include "eval/coco_results.h"

#include "core/atomic_file.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/error.h"
#include "eval/coco_masks.h"
#include "eval/coco_results_scan.h"
#include "eval/parallel.h"
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
  std::unordered_map<int64_t, std::pair<int, int>> images;  // id -> height, width
  std::unordered_set<int64_t> categories;
  explicit IdSets(const data::CocoFile& gt) {
    images.reserve(gt.images.size() * 2);
    for (const auto& image : gt.images)
      images.emplace(image.id, std::pair{image.height, image.width});
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
  if (d.segmentation) {
    const Rle& m = *d.segmentation;
    const uint64_t pixels =
        static_cast<uint64_t>(std::max(m.height, 0)) * static_cast<uint64_t>(std::max(m.width, 0));
    if (m.height < 0 || m.width < 0 || m.counts.empty() || rle_pixels(m) != pixels) {
      bad(fmt::format("segmentation counts cover {} pixels, not {}x{}", rle_pixels(m), m.height,
                      m.width));
    }
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

// One entry of the results list (`index` in file order). `has_box` tells whether it gives a box
// (loadRes' test on the first entry; see set_mask_areas).
Detection parse_entry(const json& entry, size_t index, const std::string& source, const IdSets& ids,
                      bool* has_box) {
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
  if (auto segm = entry.find("segmentation"); segm != entry.end()) {
    // annToRLE on the result, in its image's size.
    auto image = ids.images.find(d.image_id);
    if (image == ids.images.end()) {
      fail(source,
           fmt::format("{}: unknown image_id {} (not in the ground truth)", name(), d.image_id));
    }
    try {
      d.segmentation = coco_segmentation_rle(data::parse_coco_segmentation(*segm),
                                             image->second.first, image->second.second);
    } catch (const std::invalid_argument& e) {
      fail(source, fmt::format("{}: {}", name(), e.what()));
    }
  }
  auto bbox = entry.find("bbox");
  if (bbox != entry.end() && d.segmentation && bbox->is_array() && bbox->empty()) {
    bbox = entry.end();  // "bbox": [] is no box (loadRes tests for it)
  }
  *has_box = bbox != entry.end();
  if (bbox == entry.end() && !d.keypoints.empty()) {
    d.bbox_xywh = keypoint_extent(d.keypoints);
  } else if (bbox == entry.end() && !d.rbox.empty()) {
    d.bbox_xywh = geometry::extent_xywh({d.rbox[0], d.rbox[1], d.rbox[2], d.rbox[3], d.rbox[4]});
  } else if (bbox == entry.end() && d.segmentation) {
    d.bbox_xywh = rle_to_bbox(*d.segmentation);  // loadRes: toBbox of the mask
  } else {
    if (bbox == entry.end()) fail(source, fmt::format("{} has no \"bbox\"", name()));
    if (!bbox->is_array() || bbox->size() != 4) {
      fail(source, fmt::format("{}: \"bbox\" must be [x, y, w, h], got {}", name(), bbox->dump()));
    }
    for (size_t k = 0; k < 4; ++k) {
      d.bbox_xywh[k] = read_number((*bbox)[k], source, name, "a bbox value");
    }
  }
  auto score = entry.find("score");
  if (score == entry.end()) fail(source, fmt::format("{} has no \"score\"", name()));
  d.score = read_number(*score, source, name, "score");
  check_one(d, index, ids, source);
  return d;
}

// parse_entry for an entry scan_results_entry read: the same rules on the same values. False
// (nothing decided) where parse_entry would fail before check_one, so that it reports the error.
bool scanned_detection(const ScannedEntry& e, size_t index, const std::string& source,
                       const IdSets& ids, Detection* out, bool* has_box) {
  if (!e.has_score || (e.bbox_values != 4 && !e.has_segmentation)) return false;
  Detection d;
  d.image_id = e.image_id;
  d.category_id = e.category_id;
  if (e.has_segmentation) {
    auto image = ids.images.find(d.image_id);
    if (image == ids.images.end()) return false;
    const int h = static_cast<int>(e.height), w = static_cast<int>(e.width);
    try {
      d.segmentation = rle_from_string(e.counts, h, w);
    } catch (const std::invalid_argument&) {
      return false;
    }
    const uint64_t pixels = static_cast<uint64_t>(h) * static_cast<uint64_t>(w);
    if (d.segmentation->counts.empty() || rle_pixels(*d.segmentation) != pixels) return false;
  }
  *has_box = e.bbox_values == 4;
  d.bbox_xywh = *has_box ? e.bbox : rle_to_bbox(*d.segmentation);
  d.score = e.score;
  check_one(d, index, ids, source);
  *out = std::move(d);
  return true;
}

// loadRes takes its branch from the first entry: with a box, every area is the box's; with a mask
// but no box, every area is the mask's.
void set_mask_areas(bool first_has_box, std::vector<Detection>* detections) {
  const bool from_masks =
      !detections->empty() && !first_has_box && detections->front().segmentation.has_value();
  for (Detection& d : *detections) d.area_from_mask = from_masks && d.segmentation.has_value();
}

bool has_bare_token(std::string_view text) {
  return text.find("NaN") != std::string_view::npos ||
         text.find("Infinity") != std::string_view::npos;
}

// The whole document at once: the slow path, which also says where malformed json goes wrong.
std::vector<Detection> parse_document(const std::string& text, const std::string& source,
                                      const data::CocoFile& ground_truth) {
  json root;
  try {
    root = has_bare_token(text) ? json::parse(quote_non_finite_tokens(text)) : json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1e999
    fail(source, data::malformed_json_message(e, text.size()));
  }
  if (!root.is_array()) {
    fail(source, "the top level is not a list of detections (COCO results form)");
  }
  const IdSets ids(ground_truth);
  std::vector<Detection> out;
  out.reserve(root.size());
  bool first_has_box = false;
  for (const json& entry : root) {
    bool has_box = false;
    out.push_back(parse_entry(entry, out.size(), source, ids, &has_box));
    if (out.size() == 1) first_has_box = has_box;
  }
  set_mask_areas(first_has_box, &out);
  return out;
}

size_t skip_space(std::string_view text, size_t p) {
  while (p < text.size() &&
         (text[p] == ' ' || text[p] == '\n' || text[p] == '\r' || text[p] == '\t')) {
    ++p;
  }
  return p;
}

// The top-level list's entries as [begin, end) spans of `text`, found by bracket depth outside
// strings, without building a document. False when the text is not a plain list of values; the
// entries themselves are checked when each is parsed.
bool split_entries(std::string_view text, std::vector<std::pair<size_t, size_t>>* spans) {
  size_t p = skip_space(text, 0);
  if (p >= text.size() || text[p] != '[') return false;
  p = skip_space(text, p + 1);
  if (p < text.size() && text[p] == ']') return skip_space(text, p + 1) == text.size();
  for (;;) {
    p = skip_space(text, p);
    const size_t begin = p;
    int depth = 0;
    for (; p < text.size(); ++p) {
      const char c = text[p];
      if (c == '"') {  // to the closing quote: one not preceded by an odd run of backslashes
        for (++p;;) {
          const void* q = std::memchr(text.data() + p, '"', text.size() - p);
          if (!q) return false;
          const size_t close = static_cast<size_t>(static_cast<const char*>(q) - text.data());
          size_t b = close;
          while (b > p && text[b - 1] == '\\') --b;
          p = close;
          if ((close - b) % 2 == 0) break;
          ++p;
        }
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (depth == 0) break;
        if (--depth == 0) {
          ++p;
          break;
        }
      } else if (c == ',' && depth == 0) {
        break;
      }
    }
    if (p == begin || depth != 0) return false;
    spans->emplace_back(begin, p);
    p = skip_space(text, p);
    if (p >= text.size()) return false;
    if (text[p] == ']') return skip_space(text, p + 1) == text.size();
    if (text[p] != ',') return false;
    ++p;
  }
}

}  // namespace

void check_detections(const std::vector<Detection>& detections, const data::CocoFile& ground_truth,
                      const std::string& source) {
  const IdSets ids(ground_truth);
  for (size_t i = 0; i < detections.size(); ++i) check_one(detections[i], i, ids, source);
}

std::vector<Detection> parse_coco_results(const std::string& text, const std::string& source,
                                          const data::CocoFile& ground_truth) {
  // Entry by entry, on several threads: a results file of masks is mostly RLE strings, and one
  // document of half a million entries costs more to build and free than to read. Any problem
  // sends the file to the whole-document reader, which finds the same first error as always
  // (malformed json before any entry's, then the first entry in file order).
  std::vector<std::pair<size_t, size_t>> spans;
  if (!split_entries(text, &spans)) return parse_document(text, source, ground_truth);
  const IdSets ids(ground_truth);
  constexpr size_t kChunk = 2048;
  const size_t num_chunks = (spans.size() + kChunk - 1) / kChunk;
  std::vector<std::vector<Detection>> parts(num_chunks);
  std::atomic<bool> failed{false};
  bool first_has_box = false;
  parallel_for(num_chunks, 0, [&](size_t c) {
    const size_t end = std::min(spans.size(), (c + 1) * kChunk);
    parts[c].reserve(end - c * kChunk);
    ScannedEntry scanned;
    try {
      for (size_t i = c * kChunk; i < end && !failed; ++i) {
        const std::string_view piece(text.data() + spans[i].first,
                                     spans[i].second - spans[i].first);
        bool has_box = false;
        Detection d;
        if (scan_results_entry(piece, &scanned) &&
            scanned_detection(scanned, i, source, ids, &d, &has_box)) {
          parts[c].push_back(std::move(d));
          if (i == 0) first_has_box = has_box;
          continue;
        }
        const json entry = has_bare_token(piece)
                               ? json::parse(quote_non_finite_tokens(std::string(piece)))
                               : json::parse(piece.begin(), piece.end());
        parts[c].push_back(parse_entry(entry, i, source, ids, &has_box));
        if (i == 0) first_has_box = has_box;
      }
    } catch (const json::exception&) {
      failed = true;
    } catch (const core::InputError&) {
      failed = true;
    }
  });
  if (failed) return parse_document(text, source, ground_truth);
  std::vector<Detection> out;
  out.reserve(spans.size());
  for (auto& part : parts) std::move(part.begin(), part.end(), std::back_inserter(out));
  set_mask_areas(first_has_box, &out);
  return out;
}

std::vector<Detection> read_coco_results(const std::filesystem::path& file,
                                         const data::CocoFile& ground_truth) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw core::InputError(fmt::format("{}: cannot open results file", file.string()));
  std::string text;
  in.seekg(0, std::ios::end);
  if (const std::streamoff size = in.tellg(); size > 0) text.resize(static_cast<size_t>(size));
  in.seekg(0, std::ios::beg);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (!in) throw core::InputError(fmt::format("{}: cannot read results file", file.string()));
  return parse_coco_results(text, file.string(), ground_truth);
}

std::string format_coco_results(const std::vector<Detection>& detections,
                                const ResultsFields& fields) {
  std::string out = "[";
  for (size_t i = 0; i < detections.size(); ++i) {
    const Detection& d = detections[i];
    out += fmt::format(
        "{}\n{{\"image_id\": {}, \"category_id\": {}, \"bbox\": [{:.3f}, {:.3f}, {:.3f}, {:.3f}], "
        "\"score\": {:.5f}",
        i == 0 ? "" : ",", d.image_id, d.category_id, d.bbox_xywh[0], d.bbox_xywh[1],
        d.bbox_xywh[2], d.bbox_xywh[3], d.score);
    if (fields.file_name && d.rbox.empty() && !d.file_name.empty())
      out += fmt::format(", \"file_name\": {}", json(d.file_name).dump());
    if (!d.keypoints.empty()) {  // unrounded, as the reference writes them
      out += fmt::format(", \"keypoints\": [{}]", fmt::join(d.keypoints, ", "));
    }
    if (!d.rbox.empty()) {  // 3 decimals, as the reference's OBB json
      if (!d.file_name.empty()) out += fmt::format(", \"file_name\": {}", json(d.file_name).dump());
      out += fmt::format(", \"rbox\": [{:.3f}], \"poly\": [{:.3f}]", fmt::join(d.rbox, ", "),
                         fmt::join(d.poly, ", "));
    }
    if (d.segmentation) {  // the string holds '\\' (92), so it goes through the json escaper
      out += fmt::format(", \"segmentation\": {{\"size\": [{}, {}], \"counts\": {}}}",
                         d.segmentation->height, d.segmentation->width,
                         json(rle_to_string(*d.segmentation)).dump());
    }
    out += "}";
  }
  out += detections.empty() ? "]\n" : "\n]\n";
  return out;
}

void write_coco_results(const std::vector<Detection>& detections, const std::filesystem::path& file,
                        const ResultsFields& fields) {
  core::write_file_atomically(file, format_coco_results(detections, fields));
}

}  // namespace trainer::eval
