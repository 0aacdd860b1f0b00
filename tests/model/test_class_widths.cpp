// cls_width: the class branches' hidden widths as the config writes them, and the reference's
// default max(ch0, min(nc, 100)).
#include <doctest/doctest.h>

#include "core/error.h"
#include "model/class_widths.h"

using namespace trainer::model;
using trainer::core::ConfigError;

TEST_CASE("class widths: the reference's default is max(ch0, min(nc, 100))") {
  CHECK(default_class_width(64, 80) == 80);    // yolo26n on COCO
  CHECK(default_class_width(64, 6) == 64);     // yolo26n on 6 classes
  CHECK(default_class_width(64, 365) == 100);  // Objects365: capped at 100
  CHECK(default_class_width(320, 80) == 320);  // yolo26x
}

TEST_CASE("class widths: null, N and [N, M] parse and print back") {
  CHECK(parse_class_widths("").is_default());
  CHECK(parse_class_widths("  ").is_default());
  CHECK(parse_class_widths("80") == ClassWidths{80, 80});
  CHECK(parse_class_widths("[80, 64]") == ClassWidths{80, 64});
  CHECK(parse_class_widths("[80,0]") == ClassWidths{80, 0});  // 0 in a list: that branch's default
  CHECK(class_widths_text({}).empty());
  CHECK(class_widths_text({80, 80}) == "80");
  CHECK(class_widths_text({80, 64}) == "[80, 64]");
  CHECK(class_widths_text({80, 0}) == "[80, 0]");
  for (const ClassWidths w : {ClassWidths{}, ClassWidths{96, 96}, ClassWidths{80, 0}}) {
    CHECK(parse_class_widths(class_widths_text(w)) == w);
  }
}

TEST_CASE("class widths: anything else is refused with the key named") {
  for (const char* bad : {"0", "-3", "x", "[80]", "[80, 64, 32]", "[80, ]", "[80, 64", "4097",
                          "99999999999", "1.5"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(parse_class_widths(bad), doctest::Contains("cls_width"), ConfigError);
  }
  CHECK(parse_class_widths("4096") == ClassWidths{4096, 4096});
}
