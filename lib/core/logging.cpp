#include "core/logging.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <string>

namespace trainer::core {

void init_console_logging(Verbosity verbosity, int rank) {
  auto console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  switch (verbosity) {
    case Verbosity::kQuiet:
      console->set_level(spdlog::level::warn);
      break;
    case Verbosity::kNormal:
      console->set_level(spdlog::level::info);
      break;
    case Verbosity::kVerbose:
      console->set_level(spdlog::level::debug);
      break;
  }
  // Other ranks only report problems, prefixed with their rank.
  if (rank != 0) console->set_level(spdlog::level::warn);
  console->set_pattern(rank == 0 ? "%^%v%$" : "[rank " + std::to_string(rank) + "] %^%v%$");
  auto logger = std::make_shared<spdlog::logger>("trainer", console);
  logger->set_level(spdlog::level::debug);
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(logger);
}

void add_run_log_file(const std::filesystem::path& dir, int rank, const char* file_name) {
  if (rank != 0) return;
  auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>((dir / file_name).string());
  file->set_level(spdlog::level::debug);
  file->set_pattern("%Y-%m-%d %H:%M:%S.%e %l %v");
  spdlog::default_logger()->sinks().push_back(file);
  spdlog::default_logger()->flush_on(spdlog::level::info);
}

void remove_run_log_files(const std::filesystem::path& dir) noexcept {
  try {
    const std::string prefix = (dir / "").string();
    auto& sinks = spdlog::default_logger()->sinks();
    sinks.erase(std::remove_if(sinks.begin(), sinks.end(),
                               [&](const spdlog::sink_ptr& sink) {
                                 const auto* file =
                                     dynamic_cast<spdlog::sinks::basic_file_sink_mt*>(sink.get());
                                 return file != nullptr && file->filename().rfind(prefix, 0) == 0;
                               }),
                sinks.end());
  } catch (...) {  // a logger in an odd state must not stop the folder's removal
  }
}

}  // namespace trainer::core
