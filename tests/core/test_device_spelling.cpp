// The one parser of the `device` key's spellings.
#include <doctest/doctest.h>

#include <string>

#include "core/device_spelling.h"
#include "core/error.h"

using trainer::core::DeviceSpelling;
using trainer::core::parse_device;

TEST_CASE("device spellings: auto, cpu, N, cuda, cuda:N, case-insensitive") {
  CHECK(parse_device("").kind == DeviceSpelling::Kind::kAuto);
  CHECK(parse_device("cpu").kind == DeviceSpelling::Kind::kCpu);
  CHECK(parse_device("CPU").kind == DeviceSpelling::Kind::kCpu);
  const auto zero = parse_device("0");
  CHECK(zero.kind == DeviceSpelling::Kind::kCuda);
  CHECK(zero.index == 0);
  CHECK(parse_device("3").index == 3);
  CHECK(parse_device("cuda").index == 0);
  CHECK(parse_device("cuda").kind == DeviceSpelling::Kind::kCuda);
  CHECK(parse_device("CUDA:2").index == 2);
}

TEST_CASE("device spellings: several devices or other words are errors that name the value") {
  for (const char* bad : {"0,1", "gpu", "cuda:", "cuda:x", "-1", "mps", "99999"}) {
    INFO(bad);
    const std::string quoted = std::string("\"") + bad + "\"";
    CHECK_THROWS_WITH_AS(parse_device(bad), doctest::Contains(quoted.c_str()),
                         trainer::core::ConfigError);
  }
}
