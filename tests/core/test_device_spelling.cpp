// The one parser of the `device` key's spellings.
#include <doctest/doctest.h>

#include <string>
#include <vector>

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

TEST_CASE("device lists: one entry per rank, each a device spelling") {
  using trainer::core::split_device_list;
  CHECK(split_device_list("0,1,2") == std::vector<std::string>{"0", "1", "2"});
  CHECK(split_device_list("cpu, cpu") == std::vector<std::string>{"cpu", "cpu"});
  CHECK(split_device_list("cuda:1") == std::vector<std::string>{"cuda:1"});
  CHECK(split_device_list("") == std::vector<std::string>{""});
  CHECK_THROWS_WITH_AS(split_device_list("0,,1"), doctest::Contains("empty entry"),
                       trainer::core::ConfigError);
  CHECK_THROWS_AS(split_device_list("0,gpu"), trainer::core::ConfigError);
}

TEST_CASE(
    "device for a rank: the list's entry; auto and cuda follow LOCAL_RANK; one GPU is not "
    "shared") {
  using trainer::core::device_for_rank;
  CHECK(device_for_rank("0,1", 1, 2) == "1");
  CHECK(device_for_rank("2,3", 0, 2) == "2");
  CHECK(device_for_rank("cpu,cpu", 1, 2) == "cpu");
  CHECK(device_for_rank("cpu", 1, 2) == "cpu");
  CHECK(device_for_rank("", 1, 2).empty());
  CHECK(device_for_rank("cuda", 1, 2) == "cuda:1");
  CHECK(device_for_rank("0", 0, 1) == "0");
  CHECK_THROWS_WITH_AS(device_for_rank("0", 1, 2), doctest::Contains("names one GPU"),
                       trainer::core::ConfigError);
  CHECK_THROWS_WITH_AS(device_for_rank("0,1,2", 0, 2), doctest::Contains("lists 3 devices"),
                       trainer::core::ConfigError);
}
