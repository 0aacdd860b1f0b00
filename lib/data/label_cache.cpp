// Label cache file format (little-endian binary) and location; see label_cache.h.
#include "data/label_cache.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/atomic_file.h"

namespace fs = std::filesystem;

namespace trainer::data {
namespace {

constexpr char kMagic[4] = {'T', 'R', 'L', 'C'};

class Writer {
 public:
  template <typename T>
  void pod(const T& v) {
    out_.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  void str(const std::string& s) {
    pod<uint64_t>(s.size());
    out_ += s;
  }
  template <typename T>
  void vec(const std::vector<T>& v) {
    pod<uint64_t>(v.size());
    out_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  const std::string& bytes() const { return out_; }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}
  template <typename T>
  T pod() {
    T v{};
    need(sizeof(T));
    std::memcpy(&v, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string str() {
    const uint64_t n = pod<uint64_t>();
    need(n);
    std::string s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  template <typename T>
  std::vector<T> vec() {
    const uint64_t n = pod<uint64_t>();
    if (n > in_.size()) throw std::runtime_error("corrupt label cache");
    need(n * sizeof(T));
    std::vector<T> v(n);
    // An empty vector's data() may be null, and memcpy from or to null is undefined even for 0
    // bytes (UBSan in the sanitizer build).
    if (n > 0) std::memcpy(v.data(), in_.data() + pos_, n * sizeof(T));
    pos_ += n * sizeof(T);
    return v;
  }
  // An element count read before a loop: each element takes at least `min_bytes` more bytes.
  uint64_t count(uint64_t min_bytes) {
    const uint64_t n = pod<uint64_t>();
    if (n > (in_.size() - pos_) / min_bytes) throw std::runtime_error("corrupt label cache");
    return n;
  }
  bool done() const { return pos_ == in_.size(); }

 private:
  void need(uint64_t n) {
    if (n > in_.size() - pos_) throw std::runtime_error("truncated label cache");
  }
  const std::string& in_;
  size_t pos_ = 0;
};

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

void save_label_cache(const fs::path& file, uint64_t hash, const CachedSplit& split) {
  Writer w;
  for (char c : kMagic) w.pod(c);
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
  fs::create_directories(file.parent_path());
  core::write_file_atomically(file, w.bytes());
}

std::optional<CachedSplit> load_label_cache(const fs::path& file, uint64_t hash) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  const std::string bytes = text.str();
  try {
    Reader r(bytes);
    for (char c : kMagic) {
      if (r.pod<char>() != c) return std::nullopt;
    }
    if (r.pod<uint32_t>() != kLabelCacheVersion) return std::nullopt;
    if (r.pod<uint64_t>() != hash) return std::nullopt;
    CachedSplit split;
    split.items.resize(r.pod<uint64_t>());
    for (ImageLabels& it : split.items) {
      it.image = r.str();
      it.width = r.pod<int32_t>();
      it.height = r.pod<int32_t>();
      it.coco_image_id = r.pod<int64_t>();
      it.classes = r.vec<int>();
      it.boxes = r.vec<NormBox>();
      it.keypoints = r.vec<float>();
      it.segments.resize(r.count(sizeof(uint64_t)));
      for (auto& segment : it.segments) segment = r.vec<float>();
      it.crowd_classes = r.vec<int>();
      it.crowd_boxes = r.vec<NormBox>();
      if (it.classes.size() != it.boxes.size()) return std::nullopt;
      if (!it.segments.empty() && it.segments.size() != it.boxes.size()) return std::nullopt;
      if (!it.boxes.empty() && it.keypoints.size() % (3 * it.boxes.size()) != 0)
        return std::nullopt;
    }
    DatasetStats& s = split.stats;
    for (int64_t* v : {&s.images, &s.backgrounds, &s.corrupt, &s.missing_labels, &s.empty_labels,
                       &s.boxes, &s.duplicates, &s.crowd}) {
      *v = r.pod<int64_t>();
    }
    s.problems.resize(r.pod<uint64_t>());
    for (auto& p : s.problems) p = r.str();
    if (!r.done()) return std::nullopt;
    return split;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace trainer::data
