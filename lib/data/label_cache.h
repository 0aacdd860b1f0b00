// The parsed-label cache: a split's ImageLabels and stats saved beside its labels.
//
// Why: indexing a large set means opening every label file and every image header; a second start
// should read one file instead. The cache is keyed by a hash of every image and label file name
// and size (and the class count, label layout and cache version), so adding, removing or editing
// a file invalidates it. It is written atomically; when the label folder is read-only (a shared
// dataset), it goes to $TRAINER_CACHE/labels (default ~/.cache/trainer/labels) under a name
// derived from its intended path.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "data/image_labels.h"

namespace trainer::data {

// 2: images are verified by a full decode before they are cached as usable. 3: keypoints.
// 4: polygons (ImageLabels::segments). 5: label files with a byte-order mark, hexadecimal floats
// or mixed box and polygon rows are read differently; COCO entries without a size take the image's.
inline constexpr uint32_t kLabelCacheVersion = 5;

// FNV-1a over strings and integers: the cache key.
class CacheHasher {
 public:
  void add(const std::string& text);
  void add(int64_t value);
  uint64_t value() const { return hash_; }

 private:
  uint64_t hash_ = 1469598103934665603ULL;
};

struct CachedSplit {
  std::vector<ImageLabels> items;
  DatasetStats stats;
};

// Where the cache for `preferred` (e.g. labels/train2017.cache) is read and written: `preferred`
// itself if its folder is writable by its permission bits, else the fallback folder. An explicit
// `cache_dir` overrides both.
std::filesystem::path label_cache_path(const std::filesystem::path& preferred,
                                       const std::optional<std::filesystem::path>& cache_dir);

// The file's bytes (what save_label_cache writes).
std::string serialize_label_cache(uint64_t hash, const CachedSplit& split);

void save_label_cache(const std::filesystem::path& file, uint64_t hash, const CachedSplit& split);

// A cache file's bytes parsed. nullopt when of another version or another hash (`why` empty: a
// stale cache, to rebuild) or corrupt (`why` says how: not a cache, truncated, a count that the
// bytes left cannot hold, inconsistent sizes). Every count read is checked against the bytes left
// before anything is allocated, so a corrupt file costs at most a few times its own size.
std::optional<CachedSplit> parse_label_cache(const std::string& bytes, uint64_t hash,
                                             std::string* why = nullptr);

// nullopt when the file is missing, unreadable, stale or corrupt (the caller rebuilds it); a
// corrupt one is logged as a warning.
std::optional<CachedSplit> load_label_cache(const std::filesystem::path& file, uint64_t hash);

}  // namespace trainer::data
