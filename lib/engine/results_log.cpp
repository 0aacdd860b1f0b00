// See results_log.h.
#include "engine/results_log.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "core/atomic_file.h"
#include "core/error.h"

namespace trainer::engine {
namespace {

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto first = item.find_first_not_of(' ');
    out.push_back(first == std::string::npos ? "" : item.substr(first));
  }
  return out;
}

std::string format_value(const std::string& column, double v) {
  if (column == "epoch") return fmt::format("{}", static_cast<int64_t>(std::llround(v)));
  if (std::isnan(v)) return "nan";
  return fmt::format("{:.6g}", v);
}

}  // namespace

void read_results_csv(const std::filesystem::path& file, std::vector<std::string>* columns,
                      std::vector<std::vector<double>>* rows) {
  std::ifstream in(file);
  if (!in) throw core::InputError(fmt::format("{}: cannot open results file", file.string()));
  std::string line;
  if (!std::getline(in, line)) throw core::InputError(fmt::format("{}: empty", file.string()));
  *columns = split_csv(line);
  rows->clear();
  int line_number = 1;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.empty()) continue;
    auto cells = split_csv(line);
    if (cells.size() != columns->size()) {
      throw core::InputError(fmt::format("{}:{}: {} values for {} columns", file.string(),
                                         line_number, cells.size(), columns->size()));
    }
    std::vector<double> row;
    for (const auto& cell : cells) {
      try {
        row.push_back(cell == "nan" ? std::nan("") : std::stod(cell));
      } catch (const std::exception&) {
        throw core::InputError(
            fmt::format("{}:{}: \"{}\" is not a number", file.string(), line_number, cell));
      }
    }
    rows->push_back(std::move(row));
  }
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
  std::string text;
  for (size_t c = 0; c < columns_.size(); ++c) text += (c ? "," : "") + columns_[c];
  text += "\n";
  for (const auto& row : rows_) {
    for (size_t c = 0; c < row.size(); ++c)
      text += (c ? "," : "") + format_value(columns_[c], row[c]);
    text += "\n";
  }
  core::write_file_atomically(file_, text);
}

}  // namespace trainer::engine
