// Split indexing with checks and the label cache; see dataset.h.
#include "data/dataset.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <fstream>
#include <sstream>

#include "core/error.h"
#include "data/coco_dataset.h"
#include "data/image_files.h"
#include "data/image_verify.h"
#include "data/label_cache.h"
#include "data/yolo_labels.h"

namespace fs = std::filesystem;

namespace trainer::data {
namespace {

int64_t file_size_or(const fs::path& p, int64_t missing) {
  std::error_code ec;
  const auto size = fs::file_size(p, ec);
  return ec ? missing : static_cast<int64_t>(size);
}

// Label files and jsons can be edited without changing size; their modification time goes into
// the cache hash too (the reference hashes names and sizes only).
int64_t file_mtime_or(const fs::path& p, int64_t missing) {
  std::error_code ec;
  const auto time = fs::last_write_time(p, ec);
  return ec ? missing : static_cast<int64_t>(time.time_since_epoch().count());
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Applies an image's verdict; returns false (and records why) when the image must be skipped.
bool check_image(ImageLabels& item, const ImageVerdict& verdict, DatasetStats& stats) {
  if (!verdict.header) {
    ++stats.corrupt;
    stats.problems.push_back(fmt::format("{}: skipped: {}", item.image.string(), verdict.error));
    return false;
  }
  if (!verdict.warning.empty()) {
    stats.problems.push_back(fmt::format("{}: {}", item.image.string(), verdict.warning));
  }
  const ImageHeader& header = *verdict.header;
  if (item.width > 0 && (item.width != header.width || item.height != header.height)) {
    stats.problems.push_back(
        fmt::format("{}: annotation size {}x{} differs from the image's {}x{}; "
                    "using the image's",
                    item.image.string(), item.width, item.height, header.width, header.height));
  }
  item.width = header.width;
  item.height = header.height;
  return true;
}

void count_usable(const ImageLabels& item, DatasetStats& stats) {
  ++stats.images;
  stats.boxes += static_cast<int64_t>(item.boxes.size());
  if (item.boxes.empty()) ++stats.backgrounds;
}

CachedSplit index_yolo(const std::vector<fs::path>& images, int nc, KeypointShape kpt,
                       bool polygons) {
  CachedSplit out;
  DatasetStats& stats = out.stats;
  const std::vector<ImageVerdict> verdicts = verify_images(images);
  for (size_t i = 0; i < images.size(); ++i) {
    const fs::path& image = images[i];
    ImageLabels item;
    item.image = image;
    item.coco_image_id = numeric_stem(image);
    if (!check_image(item, verdicts[i], stats)) continue;
    const fs::path label_file = label_path_for_image(image);
    if (!fs::exists(label_file)) {
      ++stats.missing_labels;
    } else {
      const std::string text = read_file(label_file);
      ParsedLabels parsed = parse_yolo_labels(text, label_file.string(), nc, kpt, polygons);
      if (parsed.error) {
        ++stats.corrupt;
        stats.problems.push_back(*parsed.error + " (image skipped)");
        continue;
      }
      if (parsed.warning) stats.problems.push_back(*parsed.warning);
      if (parsed.duplicates > 0) {
        stats.duplicates += parsed.duplicates;
        stats.problems.push_back(
            fmt::format("{}: {} duplicate labels removed", label_file.string(), parsed.duplicates));
      }
      if (parsed.boxes.empty()) ++stats.empty_labels;
      item.classes = std::move(parsed.classes);
      item.boxes = std::move(parsed.boxes);
      item.keypoints = std::move(parsed.keypoints);
      item.segments = std::move(parsed.segments);
    }
    count_usable(item, stats);
    out.items.push_back(std::move(item));
  }
  return out;
}

CachedSplit index_coco(const fs::path& json, const fs::path& images_dir,
                       const std::vector<std::string>& names, int keypoints_per_box,
                       bool outlines) {
  CachedSplit out;
  DatasetStats& stats = out.stats;
  CocoFile coco = read_coco_json(json);
  const int nc = static_cast<int>(names.size());
  const CocoClassMap class_map = coco_class_map(coco, nc);
  check_category_names(coco, class_map, names);
  spdlog::debug("{}: category id -> class: {}", json.string(),
                describe_class_map(coco, class_map, names));
  // The images are verified first: an entry without a size (missing or 0) takes its file's, so its
  // boxes are normalised by the real size instead of being dropped.
  std::vector<fs::path> files;
  files.reserve(coco.images.size());
  for (const CocoImage& im : coco.images) files.push_back(coco_image_path(images_dir, im));
  const std::vector<ImageVerdict> verdicts = verify_images(files);
  std::unordered_map<std::string, const ImageVerdict*> verdict_of;
  int64_t sized_from_file = 0, first_unsized_id = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    verdict_of[files[i].string()] = &verdicts[i];
    CocoImage& im = coco.images[i];
    if ((im.width > 0 && im.height > 0) || !verdicts[i].header) continue;
    if (sized_from_file++ == 0) first_unsized_id = im.id;
    im.width = verdicts[i].header->width;
    im.height = verdicts[i].header->height;
  }
  if (sized_from_file > 0) {
    stats.problems.push_back(fmt::format(
        "{}: {} images have no \"width\"/\"height\" (missing or 0; the first: image id {}); their "
        "sizes are read from the image files",
        json.string(), sized_from_file, first_unsized_id));
  }
  std::vector<ImageLabels> items =
      coco_to_labels(coco, images_dir, nc, stats, keypoints_per_box, outlines);
  for (ImageLabels& item : items) {
    if (!check_image(item, *verdict_of.at(item.image.string()), stats)) continue;
    if (item.boxes.empty() && item.crowd_boxes.empty()) ++stats.missing_labels;
    count_usable(item, stats);
    out.items.push_back(std::move(item));
  }
  return out;
}

}  // namespace

const char* split_name(Split split) {
  switch (split) {
    case Split::kTrain:
      return "train";
    case Split::kVal:
      return "val";
    default:
      return "test";
  }
}

DatasetIndex load_split(const DatasetSpec& spec, Split split, const LoadOptions& options) {
  const std::vector<fs::path>& paths = split == Split::kTrain ? spec.train
                                       : split == Split::kVal ? spec.val
                                                              : spec.test;
  const std::optional<fs::path>& json = split == Split::kTrain ? spec.train_json
                                        : split == Split::kVal ? spec.val_json
                                                               : spec.test_json;
  if (paths.empty()) {
    throw core::InputError(fmt::format("{}: the dataset has no '{}' split", spec.yaml_file.string(),
                                       split_name(split)));
  }
  DatasetIndex index;
  index.names = spec.names;
  const KeypointShape kpt =
      spec.kpt_shape ? KeypointShape{(*spec.kpt_shape)[0], (*spec.kpt_shape)[1]} : KeypointShape{};
  index.keypoints_per_box = kpt.count;
  index.flip_idx = spec.flip_idx;
  index.polygons = options.polygons;
  const bool polygons = options.polygons != PolygonKind::kNone;
  if (json && options.polygons == PolygonKind::kOrientedBoxes) {
    throw core::InputError(
        fmt::format("{}: oriented boxes from COCO json are not read; give the OBB task YOLO txt "
                    "labels (class x1 y1 x2 y2 x3 y3 x4 y4)",
                    json->string()));
  }

  // The cache key and location.
  CacheHasher hasher;
  hasher.add(static_cast<int64_t>(kLabelCacheVersion));
  hasher.add(static_cast<int64_t>(spec.nc()));
  hasher.add(static_cast<int64_t>(kpt.count));
  hasher.add(static_cast<int64_t>(kpt.dims));
  hasher.add(
      static_cast<int64_t>(options.polygons));  // kNone 0, OBB 1 (as the old flag), outlines 2
  fs::path preferred;
  std::vector<fs::path> images;
  if (json) {
    if (!fs::is_directory(paths[0])) {
      throw core::InputError(
          fmt::format("{}: image folder for {} does not exist", paths[0].string(), json->string()));
    }
    index.source = json->string();
    hasher.add(json->string());
    hasher.add(file_size_or(*json, -1));
    hasher.add(file_mtime_or(*json, -1));
    for (const std::string& name : spec.names) hasher.add(name);  // compared with the categories
    for (const auto& image : list_image_files(paths)) {
      hasher.add(image.string());
      hasher.add(file_size_or(image, -1));
    }
    preferred = fs::path(*json).replace_extension(".cache");
  } else {
    images = list_image_files(paths);
    for (const auto& p : paths) index.source += (index.source.empty() ? "" : ", ") + p.string();
    for (const auto& image : images) {
      hasher.add(image.string());
      hasher.add(file_size_or(image, -1));
      const fs::path label = label_path_for_image(image);
      hasher.add(file_size_or(label, -1));
      hasher.add(file_mtime_or(label, -1));
    }
    const fs::path first_label = label_path_for_image(images.front());
    preferred = first_label.parent_path().string() + ".cache";
  }

  std::optional<CachedSplit> split_data;
  fs::path cache_file;
  if (options.use_cache) {
    cache_file = label_cache_path(preferred, options.cache_dir);
    split_data = load_label_cache(cache_file, hasher.value());
    index.from_cache = split_data.has_value();
  }
  if (!split_data) {
    split_data = json ? index_coco(*json, paths[0], spec.names, kpt.count,
                                   options.polygons == PolygonKind::kOutlines)
                      : index_yolo(images, spec.nc(), kpt, polygons);
    if (options.use_cache) {
      try {
        save_label_cache(cache_file, hasher.value(), *split_data);
      } catch (const std::exception& e) {
        spdlog::warn("label cache not written ({}): {}", cache_file.string(), e.what());
      }
    }
  }
  index.items = std::move(split_data->items);
  index.stats = std::move(split_data->stats);

  if (index.items.empty()) {
    // Why, per file: the first few problems, in the error itself (not logged as warnings first).
    const auto& problems = index.stats.problems;
    constexpr size_t kListed = 5;
    std::string why;
    for (size_t i = 0; i < problems.size() && i < kListed; ++i) why += "\n  " + problems[i];
    if (problems.size() > kListed) {
      why += fmt::format("\n  ... and {} more (trainer data check lists them all)",
                         problems.size() - kListed);
    }
    throw core::InputError(fmt::format("{}: no usable images in the {} split ({}){}", index.source,
                                       split_name(split), summary_line(index.stats),
                                       why.empty() ? "" : ":" + why));
  }
  if (options.log) {
    const auto& problems = index.stats.problems;
    for (size_t i = 0; i < problems.size() && i < options.max_logged_problems; ++i) {
      spdlog::warn("{}", problems[i]);
    }
    if (problems.size() > options.max_logged_problems) {
      spdlog::warn("... and {} more problems (trainer data check lists them all)",
                   problems.size() - options.max_logged_problems);
    }
    spdlog::info("{} {}: {}{}", split_name(split), index.source, summary_line(index.stats),
                 index.from_cache ? " (label cache)" : "");
  }
  return index;
}

std::string summary_line(const DatasetStats& s) {
  std::string line =
      fmt::format("{} images, {} backgrounds, {} corrupt", s.images, s.backgrounds, s.corrupt);
  line += fmt::format(", {} boxes", s.boxes);
  if (s.missing_labels) line += fmt::format(", {} without labels", s.missing_labels);
  if (s.empty_labels) line += fmt::format(", {} empty label files", s.empty_labels);
  if (s.duplicates) line += fmt::format(", {} duplicates removed", s.duplicates);
  if (s.crowd) line += fmt::format(", {} crowd boxes", s.crowd);
  return line;
}

int64_t numeric_stem(const fs::path& file) {
  const std::string stem = file.stem().string();
  if (stem.empty() || stem.size() > 18) return -1;
  for (char c : stem) {
    if (c < '0' || c > '9') return -1;
  }
  return std::stoll(stem);
}

}  // namespace trainer::data
