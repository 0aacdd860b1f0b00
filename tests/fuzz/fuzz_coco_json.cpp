// Fuzz target: the COCO instances json reader.
//
// Why: annotation files come from many converters; the reader must return a checked CocoFile or
// throw core::InputError naming the file and entry, nothing else.
#include <unordered_set>

#include "core/error.h"
#include "data/coco_json.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto coco =
        trainer::data::parse_coco_json(trainer::fuzz::as_text(data, size), "fuzz.json");
    std::unordered_set<int64_t> images;
    for (const auto& image : coco.images) images.insert(image.id);
    for (const auto& a : coco.annotations) {
      FUZZ_CHECK(images.count(a.image_id) == 1);  // the reader promises declared image ids
      FUZZ_CHECK(a.bbox[2] >= 0 && a.bbox[3] >= 0);
    }
  } catch (const trainer::core::InputError& e) {
    trainer::fuzz::expected_error(e);
  }
  return 0;
}
