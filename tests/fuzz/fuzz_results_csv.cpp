// Fuzz target: the results.csv reader (read on resume, and by plots).
//
// Why: a resumed run reads the results.csv it finds, which a user may have edited or a crash of
// another tool truncated; a bad row must give core::InputError with the file and line, never a
// crash. What it reads must be a table (named columns, every row as wide), and written back the
// way ResultsLog writes it, must read back to the same text.
#include <sstream>

#include "core/error.h"
#include "engine/log/results_log.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;
  try {
    std::istringstream in(trainer::fuzz::as_text(data, size));
    trainer::engine::read_results_csv(in, "results.csv", &columns, &rows);
  } catch (const trainer::core::InputError& e) {
    trainer::fuzz::expected_error(e);
    return 0;
  }
  FUZZ_CHECK(!columns.empty());
  for (const auto& c : columns) FUZZ_CHECK(!c.empty());
  for (const auto& r : rows) FUZZ_CHECK(r.size() == columns.size());
  const std::string written = trainer::engine::format_results_csv(columns, rows);
  std::vector<std::string> columns_again;
  std::vector<std::vector<double>> rows_again;
  std::istringstream in(written);
  trainer::engine::read_results_csv(in, "written.csv", &columns_again, &rows_again);
  FUZZ_CHECK(columns_again == columns);
  FUZZ_CHECK(rows_again.size() == rows.size());
  FUZZ_CHECK(trainer::engine::format_results_csv(columns_again, rows_again) == written);
  return 0;
}
