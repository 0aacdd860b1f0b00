#include <doctest/doctest.h>

#include <string>

#include "core/ascii_case.h"

using trainer::core::ascii_lowercase;

TEST_CASE("ascii_lowercase maps A-Z only") {
  CHECK(ascii_lowercase("YOLO26N-Pose.PT") == "yolo26n-pose.pt");
  CHECK(ascii_lowercase("cuda:0,CPU") == "cuda:0,cpu");
  CHECK(ascii_lowercase("") == "");
  // '@' (0x40) and '[' (0x5B) border 'A'..'Z' and stay; UTF-8 bytes of "Ä" (C3 84) stay.
  CHECK(ascii_lowercase("@[Z]") == "@[z]");
  CHECK(ascii_lowercase("\xC3\x84.JPG") == "\xC3\x84.jpg");
}
