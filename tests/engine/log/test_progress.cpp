// The progress line: durations as m:ss or h:mm:ss (rounded to the second), and the epoch's final
// line with its columns (epoch/epochs, batch/batches, the loss items, instances, size) and rates.
#include <doctest/doctest.h>

#include <regex>
#include <string>

#include "engine/log/progress.h"

using trainer::engine::format_duration;
using trainer::engine::ProgressLine;

TEST_CASE("format_duration: m:ss under an hour, h:mm:ss from one, rounded to the second") {
  CHECK(format_duration(0.0) == "0:00");
  CHECK(format_duration(59.4) == "0:59");
  CHECK(format_duration(59.5) == "1:00");
  CHECK(format_duration(125.0) == "2:05");
  CHECK(format_duration(3599.4) == "59:59");
  CHECK(format_duration(3600.0) == "1:00:00");
  CHECK(format_duration(3725.0) == "1:02:05");
  CHECK(format_duration(100 * 3600.0 + 61) == "100:01:01");
}

TEST_CASE("the epoch's final line: columns in order, missing loss items as 0, the epoch done") {
  ProgressLine line(/*epochs=*/3, /*batches_per_epoch=*/4, /*imgsz=*/64, /*interactive=*/false,
                    {"box_loss", "cls_loss", "dfl_loss"});
  CHECK_FALSE(line.due());  // a log file gets the final line only
  line.start_epoch(1);
  const std::string text = line.finish({0.123456, 2.5}, 7);
  CAPTURE(text);
  // Epoch 2 of 3 (1-based), every batch done; 4 significant digits; the third item absent -> 0.
  const std::regex expected(
      R"(^ +2/3 +4/4 +0\.1235 +2\.5 +0 +7 +64  [0-9.]+ it/s  epoch [0-9]+:[0-9]{2} ETA 0:00, )"
      R"(run ETA [0-9]+:[0-9]{2}$)");
  CHECK(std::regex_match(text, expected));
  // Right-aligned columns: epoch in 14, batch in 11, each loss in 10.
  CHECK(text.substr(0, 14) == "           2/3");
  CHECK(text.substr(14, 11) == "        4/4");
  CHECK(text.substr(25, 10) == "    0.1235");
}
