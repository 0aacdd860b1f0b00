// See obb_dota_output.h.
#include "engine/task/obb_dota_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <regex>
#include <set>
#include <string_view>

#include "core/atomic_file.h"
#include "geometry/rotated_box.h"

namespace trainer::engine {
namespace {

// A class name as a file name: spaces become dashes (the reference's rule); '/', '\\', control
// characters and : * ? " < > | (not allowed in file names here or on other systems) become '_';
// cut to kMaxNameBytes at a UTF-8 character boundary so "Task1_<name>.txt" fits in 255 bytes.
constexpr size_t kMaxNameBytes = 200;

std::string safe_name(const std::string& name) {
  static const std::string_view kUnsafe = "/\\:*?\"<>|";
  std::string out;
  for (char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == ' ') {
      out += '-';
    } else if (c < 0x20 || c == 0x7f || kUnsafe.find(ch) != std::string_view::npos) {
      out += '_';
    } else {
      out += ch;
    }
  }
  if (out.size() > kMaxNameBytes) {
    size_t cut = kMaxNameBytes;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out.resize(cut);
  }
  return out;
}

double round_to(double v, double scale) {
  return std::round(v * scale) / scale;
}

// A number as Python prints a float (the reference writes these files from Python): the shortest
// form that reads back exactly, with ".0" on whole numbers.
std::string py_float(double v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

// Lines per class file, written at the end (each file once).
using ClassLines = std::map<std::string, std::string>;

void write_lines(const ClassLines& lines, const std::filesystem::path& folder) {
  std::filesystem::create_directories(folder);
  for (const auto& [file, text] : lines) core::write_file_atomically(folder / file, text);
  // Task1 files of an earlier run that this one did not write (a class without detections now),
  // and temporaries of a killed write, go after the new files are in place.
  std::vector<std::filesystem::path> stale;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("Task1_", 0) == 0 && lines.count(name) == 0) stale.push_back(entry.path());
  }
  for (const auto& file : stale) std::filesystem::remove(file);
}

std::string poly_line(const std::string& image, double score, const geometry::RotatedBox& box,
                      double poly_scale) {
  std::string line = image + " " + py_float(score);
  for (const auto& c : geometry::corners(box)) {
    line += " " + py_float(round_to(c.x, poly_scale)) + " " + py_float(round_to(c.y, poly_scale));
  }
  return line + "\n";
}

}  // namespace

std::vector<std::string> dota_class_files(const std::vector<std::string>& names, size_t classes) {
  const size_t n = std::max(names.size(), classes);
  std::vector<std::string> safe(n), files(n);
  std::vector<bool> done(n, false);
  std::set<std::string> taken;
  // First the names that are file names as they stand (spaces aside), in class order: they keep
  // their file. Then the changed ones, each taking the first free of <safe>, <safe>_2, ...
  for (size_t c = 0; c < n; ++c) {
    std::string name = c < names.size() ? names[c] : std::to_string(c);
    safe[c] = safe_name(name);
    std::replace(name.begin(), name.end(), ' ', '-');
    if (safe[c] == name && taken.insert(name).second) {
      files[c] = name;
      done[c] = true;
    }
  }
  for (size_t c = 0; c < n; ++c) {
    if (done[c]) continue;
    std::string candidate = safe[c];
    for (int k = 2; !taken.insert(candidate).second; ++k) {
      candidate = fmt::format("{}_{}", safe[c], k);
    }
    files[c] = candidate;
  }
  for (auto& f : files) f = "Task1_" + f + ".txt";
  return files;
}

TileOrigin tile_origin(const std::string& stem) {
  static const std::regex tile(R"((\d+)___(\d+))");
  std::smatch m;
  if (!std::regex_search(stem, m, tile)) return {stem, 0, 0};
  return {stem.substr(0, stem.find("__")), std::stod(m[1].str()), std::stod(m[2].str())};
}

void write_dota_predictions(const std::vector<DotaDetection>& detections,
                            const std::vector<std::string>& names,
                            const std::filesystem::path& dir) {
  // Split results: as predictions.json holds them (score to 5 decimals, corners to 3).
  size_t classes = 0;
  for (const auto& d : detections) {
    if (d.cls >= 0) classes = std::max(classes, static_cast<size_t>(d.cls) + 1);
  }
  const std::vector<std::string> files = dota_class_files(names, classes);
  auto class_file = [&](int cls) {
    return cls >= 0 ? files[static_cast<size_t>(cls)] : "Task1_" + std::to_string(cls) + ".txt";
  };
  ClassLines split;
  for (const auto& d : detections) {
    const geometry::RotatedBox box{d.rbox[0], d.rbox[1], d.rbox[2], d.rbox[3], d.rbox[4]};
    split[class_file(d.cls)] += poly_line(d.image_stem, round_to(d.score, 1e5), box, 1e3);
  }
  write_lines(split, dir / "predictions_txt");

  // Merged: tiles shifted into their image, then per image a class-offset Fast-NMS (ProbIoU 0.3)
  // with the offset 2 x the largest centre coordinate, as the reference merges.
  std::map<std::string, std::vector<std::pair<geometry::RotatedBox, const DotaDetection*>>> images;
  for (const auto& d : detections) {
    const TileOrigin origin = tile_origin(d.image_stem);
    images[origin.image].push_back(
        {{d.rbox[0] + origin.x, d.rbox[1] + origin.y, d.rbox[2], d.rbox[3], d.rbox[4]}, &d});
  }
  ClassLines merged;
  for (auto& [image, boxes] : images) {
    double max_xy = 0;
    for (const auto& [box, d] : boxes) max_xy = std::max({max_xy, box.cx, box.cy});
    const double offset = 2 * max_xy;
    std::vector<size_t> order(boxes.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return boxes[a].second->score > boxes[b].second->score;
    });
    std::vector<geometry::RotatedBox> shifted;  // in score order, moved by the class offset
    for (size_t i : order) {
      geometry::RotatedBox b = boxes[i].first;
      b.cx += boxes[i].second->cls * offset;
      b.cy += boxes[i].second->cls * offset;
      shifted.push_back(b);
    }
    for (size_t j = 0; j < order.size(); ++j) {
      bool dropped = false;  // Fast-NMS: any earlier box, kept or not, above 0.3
      for (size_t i = 0; i < j && !dropped; ++i) {
        dropped = geometry::probiou(shifted[i], shifted[j]) > 0.3;
      }
      if (dropped) continue;
      const auto& [box, d] = boxes[order[j]];
      merged[class_file(d->cls)] += poly_line(image, round_to(d->score, 1e3), box, 1e3);
    }
  }
  write_lines(merged, dir / "predictions_merged_txt");
}

}  // namespace trainer::engine
