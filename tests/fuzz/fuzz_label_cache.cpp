// Fuzz target: the label cache reader (parse_label_cache, what load_label_cache runs on a file).
//
// Why: a cache file is read before anything else at every start, and a truncated or corrupt one
// (a full disk, a killed writer, another program's file under that name) must mean "rebuild the
// cache", never a crash or an allocation sized by a count the bytes cannot hold. What the reader
// accepts must be exactly what the writer writes for it (the format has one spelling), and obey
// the reader's own rules. Input: a whole cache file; its own hash is the expected one, so mutations
// reach past the header.
#include <cstring>

#include "data/label_cache.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes = trainer::fuzz::as_text(data, size);
  uint64_t hash = 0;
  if (size >= 16) std::memcpy(&hash, data + 8, sizeof(hash));
  std::string why;
  const auto split = trainer::data::parse_label_cache(bytes, hash, &why);
  if (!split) return 0;
  FUZZ_CHECK(why.empty());
  FUZZ_CHECK(trainer::data::serialize_label_cache(hash, *split) == bytes);
  for (const auto& item : split->items) {
    FUZZ_CHECK(item.classes.size() == item.boxes.size());
    FUZZ_CHECK(item.segments.empty() || item.segments.size() == item.boxes.size());
    if (!item.boxes.empty()) FUZZ_CHECK(item.keypoints.size() % (3 * item.boxes.size()) == 0);
  }
  return 0;
}
