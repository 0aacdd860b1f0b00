// YOLO label text parsing; see yolo_labels.h.
#include "data/yolo_labels.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string_view>

namespace trainer::data {
namespace {

constexpr float kMaxCoordinate = 1.01f;
constexpr float kMinCoordinate = -0.01f;

// strtof's hexadecimal floats ("0x1p-1", "-0X1"): no labelling tool writes them.
bool is_hexadecimal(const std::string& token) {
  const size_t digits = token.find_first_not_of("+-");
  return digits != std::string::npos && token.compare(digits, 1, "0") == 0 &&
         digits + 1 < token.size() && (token[digits + 1] == 'x' || token[digits + 1] == 'X');
}

// A decimal number as labelling tools write it.
bool to_float(const std::string& token, float* value) {
  if (is_hexadecimal(token)) return false;
  const char* begin = token.c_str();
  char* end = nullptr;
  errno = 0;
  const float v = std::strtof(begin, &end);
  if (end == begin || *end != '\0' || errno == ERANGE || !std::isfinite(v)) return false;
  *value = v;
  return true;
}

}  // namespace

ParsedLabels parse_yolo_labels(const std::string& text, const std::string& file, int nc,
                               KeypointShape kpt, bool keep_polygons) {
  ParsedLabels out;
  const size_t kpt_values = static_cast<size_t>(kpt.count) * static_cast<size_t>(kpt.dims);
  // Editors write a UTF-8 byte-order mark at the start of a file; it is not part of the first
  // value.
  constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
  std::istringstream lines(text.rfind(kByteOrderMark, 0) == 0 ? text.substr(kByteOrderMark.size())
                                                              : text);
  int first_box_line = 0, first_polygon_line = 0;
  std::string line;
  int line_no = 0;
  auto fail = [&](const std::string& why) {
    out.error = fmt::format("{}:{}: {}", file, line_no, why);
    out.classes.clear();
    out.boxes.clear();
    out.keypoints.clear();
    out.segments.clear();
    return out;
  };
  std::vector<float> points;  // this row's keypoints as (x, y, v)
  while (std::getline(lines, line)) {
    ++line_no;
    std::istringstream tokens(line);
    std::vector<std::string> fields;
    for (std::string t; tokens >> t;) fields.push_back(t);
    if (fields.empty()) continue;
    const size_t n = fields.size();
    const bool box_line = kpt_values > 0 ? n == 5 + kpt_values : n == 5;
    const bool polygon_line = kpt_values == 0 && n >= 7 && n % 2 == 1;
    if (keep_polygons && !polygon_line) {
      return fail(fmt::format(
          "expected a polygon (class x1 y1 x2 y2 x3 y3 ..., at least 3 points), got {} values", n));
    }
    if (!box_line && !polygon_line) {
      return fail(fmt::format(
          "expected {} values (class cx cy w h{}), got {}", 5 + kpt_values,
          kpt_values ? fmt::format(" + {} x {} keypoint values", kpt.count, kpt.dims) : "", n));
    }
    int& first_of_its_kind = box_line ? first_box_line : first_polygon_line;
    if (first_of_its_kind == 0) first_of_its_kind = line_no;
    std::vector<float> v(n);
    for (size_t k = 0; k < n; ++k) {
      if (!to_float(fields[k], &v[k])) {
        return fail(fmt::format(
            "value {} is not a number: '{}'{}", k + 1, fields[k],
            is_hexadecimal(fields[k]) ? " (hexadecimal floats are not label values)" : ""));
      }
    }
    if (v[0] < 0 || v[0] != std::floor(v[0])) {
      return fail(fmt::format("class '{}' is not a non-negative integer", fields[0]));
    }
    if (v[0] >= nc) {
      return fail(
          fmt::format("class {} exceeds the dataset's {} classes (0..{})", fields[0], nc, nc - 1));
    }
    // 8.4.190's tolerance: coordinates up to 1.01, negatives down to -0.01 (clipped to 0 here).
    const size_t coords = box_line ? 4 : n - 1;
    for (size_t k = 1; k <= coords; ++k) {
      if (v[k] > kMaxCoordinate || v[k] < kMinCoordinate) {
        return fail(
            fmt::format("coordinate {} is outside [-0.01, 1.01] (not normalised?)", fields[k]));
      }
      v[k] = std::max(v[k], 0.0f);
    }
    points.clear();
    for (int p = 0; p < kpt.count; ++p) {
      const size_t at = 5 + static_cast<size_t>(p) * static_cast<size_t>(kpt.dims);
      const float x = v[at], y = v[at + 1];
      if (x > kMaxCoordinate || y > kMaxCoordinate || x < kMinCoordinate || y < kMinCoordinate) {
        return fail(fmt::format("keypoint {} ({}, {}) is outside [-0.01, 1.01] (not normalised?)",
                                p + 1, fields[at], fields[at + 1]));
      }
      float visible = x < 0 || y < 0 ? 0.0f : 1.0f;  // 2 values per point: the reference's rule
      if (kpt.dims == 3) {
        visible = v[at + 2];
        if (visible != 0.0f && visible != 1.0f && visible != 2.0f) {
          return fail(
              fmt::format("keypoint {} visibility '{}' is not 0, 1 or 2", p + 1, fields[at + 2]));
        }
      }
      points.insert(points.end(), {x, y, visible});
    }
    NormBox box;
    if (box_line) {
      box = {v[1], v[2], v[3], v[4]};
    } else {
      float x1 = 1, y1 = 1, x2 = 0, y2 = 0;
      for (size_t k = 1; k + 1 < n; k += 2) {
        x1 = std::min(x1, v[k]), x2 = std::max(x2, v[k]);
        y1 = std::min(y1, v[k + 1]), y2 = std::max(y2, v[k + 1]);
      }
      box = {(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1};
    }
    const int cls = static_cast<int>(v[0]);
    bool duplicate = false;
    const size_t kv = points.size();
    for (size_t i = 0; i < out.boxes.size() && !duplicate; ++i) {
      duplicate = out.classes[i] == cls && out.boxes[i] == box &&
                  std::equal(points.begin(), points.end(), out.keypoints.begin() + i * kv) &&
                  (!keep_polygons || std::equal(v.begin() + 1, v.end(), out.segments[i].begin(),
                                                out.segments[i].end()));
    }
    if (duplicate) {
      ++out.duplicates;
      continue;
    }
    out.classes.push_back(cls);
    out.boxes.push_back(box);
    out.keypoints.insert(out.keypoints.end(), points.begin(), points.end());
    if (keep_polygons) out.segments.emplace_back(v.begin() + 1, v.end());
  }
  if (first_box_line > 0 && first_polygon_line > 0) {
    out.warning = fmt::format(
        "{}:{}: box rows (5 values, first at line {}) and polygon rows (first at line {}) are "
        "mixed; "
        "each row is read as what it is: a box as its box, a polygon as its enclosing box",
        file, std::max(first_box_line, first_polygon_line), first_box_line, first_polygon_line);
  }
  return out;
}

}  // namespace trainer::data
