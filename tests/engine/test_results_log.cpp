// results.csv: header, rows, resume truncation, malformed rows; results.png is written.
#include <doctest/doctest.h>

#include "core/error.h"
#include "engine/results_log.h"
#include "engine/results_plot.h"
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
