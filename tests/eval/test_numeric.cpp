// NumPy-identical numerics (eval/numeric.h), checked against values printed by NumPy 2.4.
#include <doctest/doctest.h>

#include <vector>

#include "eval/numeric.h"

using namespace trainer::eval;

TEST_CASE("linspace builds the pycocotools threshold grids exactly as NumPy") {
  // np.linspace(.5, .95, 10).tolist() ==
  // [0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.8999999999999999, 0.95]
  const std::vector<double> iou = linspace(0.5, 0.95, 10);
  const std::vector<double> expected = {
      0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.8999999999999999, 0.95};
  REQUIRE(iou.size() == 10);
  for (size_t i = 0; i < 10; ++i) CHECK(iou[i] == expected[i]);
  CHECK(iou[5] == 0.75);  // summarize() finds AP75 by exact equality
  const std::vector<double> rec = linspace(0.0, 1.0, 101);
  REQUIRE(rec.size() == 101);
  CHECK(rec[7] == 0.07);  // np.linspace(0, 1, 101)[7] == 0.07
  CHECK(rec[29] == 0.29);
  CHECK(rec[100] == 1.0);
  CHECK(linspace(2.0, 3.0, 1) == std::vector<double>{2.0});
}

TEST_CASE("pairwise_sum and numpy_mean round like np.sum and np.mean") {
  // np.sum([0.1] * 1000) == 100.00000000000001, while summing left to right gives 99.9999999999986.
  const std::vector<double> tenths(1000, 0.1);
  CHECK(pairwise_sum(tenths.data(), tenths.size()) == 100.00000000000001);
  double naive = 0;
  for (double v : tenths) naive += v;
  CHECK(naive == 99.9999999999986);
  CHECK(numpy_mean(tenths) == 100.00000000000001 / 1000.0);
  // Below 8 values NumPy sums left to right.
  const std::vector<double> few = {1e16, 1.0, -1e16};
  CHECK(pairwise_sum(few.data(), few.size()) == 0.0);
  CHECK(numpy_mean({}) != numpy_mean({}));  // NaN, as NumPy's mean of nothing
}

TEST_CASE("interp matches np.interp including repeated abscissae and the ends") {
  // np.interp([0, .5, 1, 1.5, 2, -1, 3], [0, 1, 1, 2], [0, 1, 3, 5]) == [0, .5, 3, 4, 5, 0, 5]
  const std::vector<double> xp = {0, 1, 1, 2}, fp = {0, 1, 3, 5};
  CHECK(interp(0.0, xp, fp, fp.front(), fp.back()) == 0.0);
  CHECK(interp(0.5, xp, fp, fp.front(), fp.back()) == 0.5);
  CHECK(interp(1.0, xp, fp, fp.front(), fp.back()) == 3.0);  // the last of the equal xp
  CHECK(interp(1.5, xp, fp, fp.front(), fp.back()) == 4.0);
  CHECK(interp(2.0, xp, fp, fp.front(), fp.back()) == 5.0);
  CHECK(interp(-1.0, xp, fp, -7.0, 9.0) == -7.0);  // left
  CHECK(interp(3.0, xp, fp, -7.0, 9.0) == 9.0);    // right
  CHECK(interp(0.3, {0.3}, {4.0}, 1.0, 2.0) == 4.0);
}
