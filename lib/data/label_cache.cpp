// Label cache file format (little-endian binary) and location; see label_cache.h.
// Tested by tests/data/test_cache_limits.cpp: save/load/parse label cache, corrupt counts, trailing
//   bytes, stale hash not logged.
#include "data/label_cache.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "core/atomic_file.h"
#include "core/byte_stream.h"

namespace fs = std::filesystem;

namespace trainer::data {
namespace {

constexpr char kLabelCacheMagic[4] = {'T', 'R', 'L', 'C'};

// The bytes an item takes at least: its path's length (8), width and height (4 + 4), COCO id (8),
// and the lengths of classes, boxes, keypoints, polygons, crowd classes and crowd boxes (6 x 8).
constexpr uint64_t kMinItemBytes = 8 + 4 + 4 + 8 + 6 * 8;

// parse_label_cache without the catch: nullopt with `reason` set for a corrupt cache, left empty
// for a stale one. Throws std::runtime_error for a truncation or an impossible count.
std::optional<CachedSplit> parse_or_explain(const std::string& bytes, uint64_t hash,
                                            std::string* reason) {
  auto corrupt = [&](const char* text) {
    *reason = text;
    return std::nullopt;
  };
  core::ByteReader r(bytes);
  for (char c : kLabelCacheMagic) {
    if (r.pod<char>() != c) return corrupt("not a label cache");
  }
  if (r.pod<uint32_t>() != kLabelCacheVersion) return std::nullopt;
  if (r.pod<uint64_t>() != hash) return std::nullopt;
  CachedSplit split;
  split.items.resize(r.count(kMinItemBytes, "images"));
  for (ImageLabels& it : split.items) {
    it.image = r.str();
    it.width = r.pod<int32_t>();
    it.height = r.pod<int32_t>();
    it.coco_image_id = r.pod<int64_t>();
    it.classes = r.vec<int>();
    it.boxes = r.vec<NormBox>();
    it.keypoints = r.vec<float>();
    it.segments.resize(r.count(sizeof(uint64_t), "polygons"));
    for (auto& segment : it.segments) segment = r.vec<float>();
    it.crowd_classes = r.vec<int>();
    it.crowd_boxes = r.vec<NormBox>();
    if (it.classes.size() != it.boxes.size()) return corrupt("classes and boxes differ");
    if (!it.segments.empty() && it.segments.size() != it.boxes.size()) {
      return corrupt("polygons and boxes differ");
    }
    if (!it.boxes.empty() && it.keypoints.size() % (3 * it.boxes.size()) != 0) {
      return corrupt("keypoints do not divide among the boxes");
    }
  }
  DatasetStats& s = split.stats;
  for (int64_t* v : {&s.images, &s.backgrounds, &s.corrupt, &s.missing_labels, &s.empty_labels,
                     &s.boxes, &s.duplicates, &s.crowd}) {
    *v = r.pod<int64_t>();
  }
  s.problems.resize(r.count(sizeof(uint64_t), "problems"));
  for (auto& p : s.problems) p = r.str();
  if (!r.done()) return corrupt("trailing bytes");
  return split;
}

bool owner_writable(const fs::path& dir) {
  std::error_code ec;
  const auto status = fs::status(dir, ec);
  if (ec || !fs::is_directory(status)) return false;
  return (status.permissions() & fs::perms::owner_write) != fs::perms::none;
}

}  // namespace

void CacheHasher::add(const std::string& text) {
  for (unsigned char c : text) hash_ = (hash_ ^ c) * 1099511628211ULL;
  hash_ = (hash_ ^ 0xFF) * 1099511628211ULL;  // separator, so ("ab","c") != ("a","bc")
}

void CacheHasher::add(int64_t value) {
  for (int k = 0; k < 8; ++k) hash_ = (hash_ ^ ((value >> (8 * k)) & 0xFF)) * 1099511628211ULL;
}

fs::path label_cache_path(const fs::path& preferred, const std::optional<fs::path>& cache_dir) {
  CacheHasher name;
  name.add(fs::absolute(preferred).lexically_normal().string());
  const std::string fallback_name =
      fmt::format("{}-{:016x}.cache", preferred.stem().string(), name.value());
  if (cache_dir) return *cache_dir / fallback_name;
  if (owner_writable(preferred.parent_path())) return preferred;
  const char* env = std::getenv("TRAINER_CACHE");
  const char* home = std::getenv("HOME");
  const fs::path base = env && *env ? fs::path(env)
                        : home      ? fs::path(home) / ".cache" / "trainer"
                                    : fs::temp_directory_path() / "trainer";
  return base / "labels" / fallback_name;
}

std::string serialize_label_cache(uint64_t hash, const CachedSplit& split) {
  core::ByteWriter w;
  for (char c : kLabelCacheMagic) w.pod(c);
  w.pod<uint32_t>(kLabelCacheVersion);
  w.pod<uint64_t>(hash);
  w.pod<uint64_t>(split.items.size());
  for (const ImageLabels& it : split.items) {
    w.str(it.image.string());
    w.pod<int32_t>(it.width);
    w.pod<int32_t>(it.height);
    w.pod<int64_t>(it.coco_image_id);
    w.vec(it.classes);
    w.vec(it.boxes);
    w.vec(it.keypoints);
    w.pod<uint64_t>(it.segments.size());
    for (const auto& segment : it.segments) w.vec(segment);
    w.vec(it.crowd_classes);
    w.vec(it.crowd_boxes);
  }
  const DatasetStats& s = split.stats;
  for (int64_t v : {s.images, s.backgrounds, s.corrupt, s.missing_labels, s.empty_labels, s.boxes,
                    s.duplicates, s.crowd}) {
    w.pod<int64_t>(v);
  }
  w.pod<uint64_t>(s.problems.size());
  for (const auto& p : s.problems) w.str(p);
  return w.bytes();
}

void save_label_cache(const fs::path& file, uint64_t hash, const CachedSplit& split) {
  const std::string bytes = serialize_label_cache(hash, split);
  fs::create_directories(file.parent_path());
  core::write_file_atomically(file, bytes);
}

std::optional<CachedSplit> parse_label_cache(const std::string& bytes, uint64_t hash,
                                             std::string* why) {
  std::string reason;
  std::optional<CachedSplit> split;
  try {
    split = parse_or_explain(bytes, hash, &reason);
  } catch (const std::exception& e) {  // the ByteReader's truncation and count errors
    reason = e.what();
  }
  if (why) *why = reason;
  return split;
}

std::optional<CachedSplit> load_label_cache(const fs::path& file, uint64_t hash) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  std::string why;
  std::optional<CachedSplit> split = parse_label_cache(text.str(), hash, &why);
  if (!split && !why.empty()) {
    spdlog::warn("label cache {} is corrupt ({}); rebuilding it", file.string(), why);
  }
  return split;
}

}  // namespace trainer::data
