// Fuzz target: the Exif orientation readers (a whole JPEG, and one APP1 payload).
//
// Why: the orientation tag sits in a TIFF block with offsets chosen by whoever wrote the file; the
// readers must stay inside the bytes and always answer 1..8.
#include "data/codecs/exif_orientation.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const int from_jpeg = trainer::data::codecs::jpeg_exif_orientation(data, size);
  FUZZ_CHECK(from_jpeg >= 1 && from_jpeg <= 8);
  const int from_app1 = trainer::data::codecs::exif_app1_orientation(data, size);
  FUZZ_CHECK(from_app1 >= 1 && from_app1 <= 8);
  return 0;
}
