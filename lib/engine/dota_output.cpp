// See dota_output.h.
#include "engine/dota_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <numeric>
#include <regex>
#include <stdexcept>

#include "geometry/rotated_box.h"

namespace trainer::engine {
namespace {

std::string class_file(const std::vector<std::string>& names, int cls) {
  std::string name =
      cls >= 0 && cls < static_cast<int>(names.size()) ? names[cls] : std::to_string(cls);
  std::replace(name.begin(), name.end(), ' ', '-');
  return "Task1_" + name + ".txt";
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
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("Task1_", 0) == 0) std::filesystem::remove(entry.path());
  }
  for (const auto& [file, text] : lines) {
    std::ofstream out(folder / file, std::ios::binary);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + (folder / file).string());
  }
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
  ClassLines split;
  for (const auto& d : detections) {
    const geometry::RotatedBox box{d.rbox[0], d.rbox[1], d.rbox[2], d.rbox[3], d.rbox[4]};
    split[class_file(names, d.cls)] += poly_line(d.image_stem, round_to(d.score, 1e5), box, 1e3);
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
      merged[class_file(names, d->cls)] += poly_line(image, round_to(d->score, 1e3), box, 1e3);
    }
  }
  write_lines(merged, dir / "predictions_merged_txt");
}

}  // namespace trainer::engine
