// See results_log.h.
#include "engine/log/results_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <istream>

#include "core/atomic_file.h"
#include "core/error.h"

namespace trainer::engine {
namespace {

// What the reader ignores at the ends of a line and of a cell ('\r' of a CRLF file included).
constexpr const char* kBlank = " \t\r\v\f";

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(kBlank);
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(kBlank) - first + 1);
}

// Cells of one row, split at every ',' (an empty cell, a trailing one too, stays a cell), each
// trimmed.
std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t end = std::min(line.find(',', start), line.size());
    out.push_back(trimmed(line.substr(start, end - start)));
    if (end == line.size()) return out;
    start = end + 1;
  }
}

// A cell as a number: what ResultsLog writes ("nan" for a missing value, "inf" / "-inf" for a
// loss that overflowed, else a decimal or scientific number), wholly; std::stod alone would take
// "1.5abc" as 1.5, and would refuse a subnormal value it reads fine (ERANGE).
bool parse_number(const std::string& cell, double* value) {
  if (cell == "nan" || cell == "inf" || cell == "-inf") {
    *value = cell == "nan" ? std::nan("") : (cell[0] == '-' ? -1.0 : 1.0) * HUGE_VAL;
    return true;
  }
  if (cell.empty() || cell.find_first_not_of("0123456789+-.eE") != std::string::npos) return false;
  char* end = nullptr;
  *value = std::strtod(cell.c_str(), &end);
  return end == cell.c_str() + cell.size();
}

std::string format_value(const std::string& column, double v) {
  if (column == "epoch") return fmt::format("{}", static_cast<int64_t>(std::llround(v)));
  if (std::isnan(v)) return "nan";
  return fmt::format("{:.6g}", v);
}

}  // namespace

void read_results_csv(std::istream& in, const std::string& name, std::vector<std::string>* columns,
                      std::vector<std::vector<double>>* rows) {
  std::string line;
  int line_number = 0;
  auto next_line = [&] {
    if (!std::getline(in, line)) return false;
    ++line_number;
    line = trimmed(line);
    return true;
  };
  if (!next_line()) throw core::InputError(fmt::format("{}: empty", name));
  *columns = split_csv(line);
  for (const auto& column : *columns) {
    if (column.empty()) {
      throw core::InputError(fmt::format("{}:1: a column without a name in the header", name));
    }
  }
  rows->clear();
  while (next_line()) {
    if (line.empty()) continue;
    auto cells = split_csv(line);
    if (cells.size() != columns->size()) {
      throw core::InputError(fmt::format("{}:{}: {} values for {} columns", name, line_number,
                                         cells.size(), columns->size()));
    }
    std::vector<double> row(cells.size());
    for (size_t c = 0; c < cells.size(); ++c) {
      if (!parse_number(cells[c], &row[c])) {
        throw core::InputError(
            fmt::format("{}:{}: \"{}\" is not a number", name, line_number, cells[c]));
      }
    }
    rows->push_back(std::move(row));
  }
}

void read_results_csv(const std::filesystem::path& file, std::vector<std::string>* columns,
                      std::vector<std::vector<double>>* rows) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw core::InputError(fmt::format("{}: cannot open results file", file.string()));
  read_results_csv(in, file.string(), columns, rows);
}

ResultsLog::ResultsLog(std::filesystem::path file, std::vector<std::string> columns,
                       int64_t resume_up_to_epoch)
    : file_(std::move(file)), columns_(std::move(columns)) {
  if (resume_up_to_epoch >= 1 && std::filesystem::exists(file_)) {
    std::vector<std::string> old_columns;
    std::vector<std::vector<double>> old_rows;
    read_results_csv(file_, &old_columns, &old_rows);
    if (old_columns == columns_) {
      for (auto& row : old_rows) {
        if (row[0] <= static_cast<double>(resume_up_to_epoch)) rows_.push_back(std::move(row));
      }
    }
  }
  write();
}

void ResultsLog::append(const std::vector<double>& values) {
  if (values.size() != columns_.size()) {
    throw std::logic_error(
        fmt::format("results row has {} values for {} columns", values.size(), columns_.size()));
  }
  rows_.push_back(values);
  write();
}

std::vector<double> ResultsLog::column(const std::string& name) const {
  std::vector<double> out;
  for (size_t c = 0; c < columns_.size(); ++c) {
    if (columns_[c] != name) continue;
    for (const auto& row : rows_) out.push_back(row[c]);
  }
  return out;
}

void ResultsLog::write() const {
  core::write_file_atomically(file_, format_results_csv(columns_, rows_));
}

std::string format_results_csv(const std::vector<std::string>& columns,
                               const std::vector<std::vector<double>>& rows) {
  std::string text;
  for (size_t c = 0; c < columns.size(); ++c) text += (c ? "," : "") + columns[c];
  text += "\n";
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c)
      text += (c ? "," : "") + format_value(columns[c], row[c]);
    text += "\n";
  }
  return text;
}

}  // namespace trainer::engine
