// Fuzz target: the dataset yaml loader (paths not checked, so only the parsing rules run).
//
// Why: dataset yamls come from users and converters; the loader must return a spec or throw
// core::ConfigError naming the file. It reads a file, so each input is written to one temporary
// file first.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "data/dataset_yaml.h"
#include "fuzz/fuzz_support.h"

namespace {

const std::filesystem::path& input_file() {
  static const std::filesystem::path file = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/trainer-fuzz-dataset-XXXXXX";
    if (mkdtemp(dir.data()) == nullptr) std::abort();
    return std::filesystem::path(dir) / "data.yaml";
  }();
  return file;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto& file = input_file();
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    const auto spec = trainer::data::load_dataset_yaml(file, /*check_paths=*/false);
    FUZZ_CHECK(spec.nc() > 0);
  } catch (const trainer::core::ConfigError& e) {
    trainer::fuzz::expected_error(e);
  }
  return 0;
}
