#include <doctest/doctest.h>

#include "core/config_schema.h"
#include "core/edit_distance.h"

using namespace trainer::core;

TEST_CASE("edit distance: hand-computed values") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("abc", "") == 3);
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("momnetum", "momentum") == 1);  // adjacent transposition
  CHECK(edit_distance("lr", "lr0") == 1);
  CHECK(edit_distance("ca", "abc") == 3);  // optimal string alignment, not full Damerau
}

TEST_CASE("closest key: typos map to the intended key") {
  CHECK(closest_key("lr") == "lr0");
  CHECK(closest_key("epoch") == "epochs");
  CHECK(closest_key("weightdecay") == "weight_decay");
  CHECK(closest_key("hsvh") == "hsv_h");
}
