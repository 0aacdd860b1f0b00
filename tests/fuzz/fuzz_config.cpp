// Fuzz target: the config loader on YAML text plus `key=value` overrides.
//
// Why: configs and overrides are typed by hand; whatever they hold, the loader must either return
// a config or throw core::ConfigError naming the place (never another exception, never a crash).
// Input: YAML text, then overrides, separated by '\0' bytes.
#include <spdlog/spdlog.h>

#include <filesystem>

#include "core/config_loader.h"
#include "core/error.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool quiet = [] {  // the imgsz rounding note would print once per input
    spdlog::set_level(spdlog::level::off);
    return true;
  }();
  (void)quiet;
  std::vector<std::string> parts = trainer::fuzz::split_at_nul(trainer::fuzz::as_text(data, size));
  const std::string yaml = parts.front();
  parts.erase(parts.begin());
  // A folder without configs, so a fuzzed `base:` finds nothing relative to it.
  const std::filesystem::path base_dir = "/nonexistent-trainer-fuzz";
  try {
    trainer::core::load_config_text(yaml, "fuzz.yaml", base_dir, parts);
  } catch (const trainer::core::ConfigError& e) {
    trainer::fuzz::expected_error(e);
  }
  return 0;
}
