// Fuzz target: the JPEG/PNG header parser behind read_image_header.
//
// Why: the dataset scan reads every image's header before anything decodes it, so a corrupt or
// hostile file must give an error string, never a crash or a read past the bytes.
#include <sstream>

#include "data/image_files.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(trainer::fuzz::as_text(data, size));
  std::string error;
  bool other_format = false;
  const auto header = trainer::data::parse_image_header(in, &error, &other_format);
  FUZZ_CHECK(header.has_value() || !error.empty());
  if (other_format) FUZZ_CHECK(!header.has_value());
  return 0;
}
