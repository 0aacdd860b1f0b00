// results.csv: header, rows, resume truncation, malformed rows and cells, CRLF, non-finite and
// subnormal values; results.png is written.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "core/error.h"
#include "engine/log/results_log.h"
#include "engine/log/results_plot.h"
#include "test_support.h"

using namespace trainer::engine;

TEST_CASE("results log: rows are written and a resumed log keeps rows up to its epoch") {
  trainer::test::TempDir dir;
  const auto file = dir.path() / "results.csv";
  {
    ResultsLog log(file, {"epoch", "train/box_loss", "metrics/mAP50-95(B)"});
    log.append({1, 2.5, 0.125});
    log.append({2, 2.0, 0.25});
    log.append({3, 1.5, 0.5});
  }
  CHECK(trainer::test::read_text(file) ==
        "epoch,train/box_loss,metrics/mAP50-95(B)\n1,2.5,0.125\n2,2,0.25\n3,1.5,0.5\n");
  ResultsLog resumed(file, {"epoch", "train/box_loss", "metrics/mAP50-95(B)"}, 2);
  CHECK(resumed.rows().size() == 2);
  resumed.append({3, 1.25, 0.75});
  CHECK(resumed.column("train/box_loss") == std::vector<double>{2.5, 2.0, 1.25});
  CHECK(plot_results(resumed.columns(), resumed.rows(), dir.path() / "results.png"));
  CHECK(std::filesystem::file_size(dir.path() / "results.png") > 1000);
}

TEST_CASE("results log: a malformed row is reported with its line") {
  trainer::test::TempDir dir;
  const auto file = dir.path() / "results.csv";
  trainer::test::write_text(file, "epoch,a\n1,0.5\n2,x\n");
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;
  CHECK_THROWS_WITH_AS(read_results_csv(file, &columns, &rows),
                       doctest::Contains("results.csv:3: \"x\" is not a number"),
                       trainer::core::InputError);
}

namespace {

// read_results_csv() on a results.csv holding `text`; the error's message from the file's name
// on, or "" when it parsed.
std::string read_error(const std::string& text, std::vector<std::string>* columns = nullptr,
                       std::vector<std::vector<double>>* rows = nullptr) {
  trainer::test::TempDir dir;
  trainer::test::write_text(dir / "results.csv", text);
  std::vector<std::string> c;
  std::vector<std::vector<double>> r;
  try {
    read_results_csv(dir / "results.csv", columns ? columns : &c, rows ? rows : &r);
  } catch (const trainer::core::InputError& e) {
    const std::string message = e.what();
    return message.substr(message.find("results.csv"));
  }
  return "";
}

}  // namespace

TEST_CASE("results log: a cell must be wholly a number, every column named, every row as wide") {
  CHECK(read_error("epoch,a\n1,1.5abc\n") == "results.csv:2: \"1.5abc\" is not a number");
  CHECK(read_error("epoch,a\n1,0x10\n") == "results.csv:2: \"0x10\" is not a number");
  CHECK(read_error("epoch,a\n1,0.5,\n") == "results.csv:2: 3 values for 2 columns");
  CHECK(read_error("epoch,a\n1,\n") == "results.csv:2: \"\" is not a number");
  CHECK(read_error("epoch,,a\n") == "results.csv:1: a column without a name in the header");
  CHECK(read_error("\n") == "results.csv:1: a column without a name in the header");
  CHECK(read_error("") == "results.csv: empty");
}

TEST_CASE("results log: CRLF lines, spaces, nan, inf and subnormal values read back") {
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;
  CHECK(read_error("epoch, a ,b\r\n1, 0.5 ,nan\r\n\r\n2,-inf,1e-310\r\n", &columns, &rows) == "");
  CHECK(columns == std::vector<std::string>{"epoch", "a", "b"});
  REQUIRE(rows.size() == 2);
  CHECK(rows[0][1] == 0.5);
  CHECK(std::isnan(rows[0][2]));
  CHECK(rows[1][1] == -HUGE_VAL);
  CHECK(rows[1][2] == doctest::Approx(1e-310).epsilon(1e-6));
}

TEST_CASE("results log: a log with an infinite loss and a subnormal rate resumes") {
  trainer::test::TempDir dir;
  const auto file = dir.path() / "results.csv";
  {
    ResultsLog log(file, {"epoch", "train/box_loss", "lr/pg0"});
    log.append({1, HUGE_VAL, 1e-310});
    log.append({2, 1.0, 0.01});
  }
  CHECK(trainer::test::read_text(file) == "epoch,train/box_loss,lr/pg0\n1,inf,1e-310\n2,1,0.01\n");
  ResultsLog resumed(file, {"epoch", "train/box_loss", "lr/pg0"}, 1);
  REQUIRE(resumed.rows().size() == 1);
  CHECK(resumed.rows()[0][1] == HUGE_VAL);
}
