// See fault_hooks.h.
#include "core/fault_hooks.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <set>

#include "core/error.h"

namespace trainer::core {
namespace {

bool switch_on() {
  const char* v = std::getenv(kTestHooksSwitch);
  return v != nullptr && std::string(v) == "1";
}

// TRAINER_FAULT_EXIT_AFTER's FILE:N.
struct ExitAfterRename {
  std::string file;
  long count = 0;
};

std::optional<ExitAfterRename> parse_exit_after(const std::string& spec) {
  const auto colon = spec.rfind(':');
  ExitAfterRename out;
  out.file = spec.substr(0, colon);
  if (colon != std::string::npos) {
    char* end = nullptr;
    out.count = std::strtol(spec.c_str() + colon + 1, &end, 10);
    if (*end != '\0') out.count = 0;
  }
  if (out.file.empty() || out.count < 1 || out.file.find('/') != std::string::npos) {
    throw ConfigError("TRAINER_FAULT_EXIT_AFTER: '" + spec +
                      "' is not FILE:N (a file name and a count from 1)");
  }
  return out;
}

}  // namespace

std::optional<std::string> fault_setting(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  if (switch_on()) return std::string(value);
  static std::mutex mutex;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lock(mutex);
  if (warned.insert(name).second) {
    spdlog::warn("{} is set but ignored: fault hooks need {}=1 too (tests only)", name,
                 kTestHooksSwitch);
  }
  return std::nullopt;
}

void exit_if_fault_after_rename(const std::filesystem::path& target) {
  // Read at every rename (a getenv; renames are rare): a forked test child sees its own setting.
  const auto spec = fault_setting("TRAINER_FAULT_EXIT_AFTER");
  if (!spec) return;
  const auto hook = parse_exit_after(*spec);
  if (target.filename() != hook->file) return;
  static std::atomic<long> seen{0};
  if (++seen == hook->count) ::_exit(137);
}

}  // namespace trainer::core
