#include <doctest/doctest.h>
#include <spdlog/spdlog.h>

#include "core/logging.h"
#include "test_support.h"

using namespace trainer::core;

TEST_CASE("the run log file receives every level on rank 0 and nothing on other ranks") {
  trainer::test::TempDir dir;
  init_console_logging(Verbosity::kQuiet);
  add_run_log_file(dir.path(), 0);
  spdlog::debug("debug line {}", 1);
  spdlog::info("info line");
  spdlog::default_logger()->flush();
  const std::string text = trainer::test::read_text(dir / "train.log");
  CHECK(text.find("debug line 1") != std::string::npos);
  CHECK(text.find("info line") != std::string::npos);
  trainer::test::TempDir other;
  init_console_logging(Verbosity::kNormal, 1);
  add_run_log_file(other.path(), 1);
  spdlog::warn("from rank 1");
  CHECK_FALSE(std::filesystem::exists(other / "train.log"));
}
