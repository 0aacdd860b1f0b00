// results.csv: one row per epoch with the reference's columns (plus ours), rewritten atomically.
//
// Why: users plot and compare runs from this file; the reference's column names
// (`train/box_loss`, `metrics/mAP50-95(B)`, `lr/pg0`, ...) let existing tools read it. Rewriting
// the whole (small) file atomically each epoch means a kill never leaves a torn row, and a resumed
// run keeps exactly the rows up to its checkpoint.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

namespace trainer::engine {

class ResultsLog {
 public:
  // Starts a new log with `columns` (the first must be "epoch"). When `resume_up_to_epoch` >= 1, an
  // existing file's rows with epoch <= it are kept (a resumed run), provided the header matches.
  ResultsLog(std::filesystem::path file, std::vector<std::string> columns,
             int64_t resume_up_to_epoch = 0);

  // Appends a row (values in column order) and rewrites the file.
  void append(const std::vector<double>& values);

  const std::vector<std::string>& columns() const { return columns_; }
  const std::vector<std::vector<double>>& rows() const { return rows_; }
  const std::filesystem::path& file() const { return file_; }

  // One column's values over the rows (empty when unknown).
  std::vector<double> column(const std::string& name) const;

 private:
  void write() const;

  std::filesystem::path file_;
  std::vector<std::string> columns_;
  std::vector<std::vector<double>> rows_;
};

// Parses a results.csv written by ResultsLog (for resume, tests and plots): a header of named
// columns, then rows of as many numbers ("nan" for a missing one, "inf", "-inf"; blank lines
// skipped; spaces, tabs and a CRLF's '\r' around cells ignored). Throws core::InputError naming
// the file and line for an empty file, an unnamed column, a row of another width or a cell that
// is not wholly a number.
void read_results_csv(const std::filesystem::path& file, std::vector<std::string>* columns,
                      std::vector<std::vector<double>>* rows);

// The same from a stream, with `name` (the file) in the messages: the fuzz target's entry.
void read_results_csv(std::istream& in, const std::string& name, std::vector<std::string>* columns,
                      std::vector<std::vector<double>>* rows);

// The text ResultsLog writes: the header, then one line per row (epoch as a whole number, other
// values as %.6g, "nan" for a missing value).
std::string format_results_csv(const std::vector<std::string>& columns,
                               const std::vector<std::vector<double>>& rows);

}  // namespace trainer::engine
