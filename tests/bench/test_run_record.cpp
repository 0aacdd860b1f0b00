// The run record (benchmark-method.md section 5): every field present, values from this machine.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <ATen/Context.h>

#include <regex>

#include "bench/device.h"
#include "bench/run_record.h"
#include "core/build_info.h"
#include "core/error.h"
#include "test_support.h"

using namespace trainer::bench;

TEST_CASE("the run record names code, software, hardware, date and command line") {
  RunRecord r = collect_run_record("cpu");
  CHECK(r.build_revision == trainer::core::build_info().git_revision);
  CHECK(r.libtorch_version.rfind("2.", 0) == 0);
  CHECK(r.device == "cpu");
  CHECK(r.device_name == r.cpu_model);
  CHECK_FALSE(r.cpu_model.empty());
  CHECK(r.hardware_threads > 0);
  CHECK(r.torch_threads > 0);
  CHECK(r.interop_threads > 0);
  CHECK(std::regex_match(r.date_utc, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
  REQUIRE_FALSE(r.command_line.empty());
  CHECK(r.command_line[0].find("test_bench") != std::string::npos);

  r.config_yaml = "epochs: 3\n";
  r.counts = {{"warmup", 15}, {"measure", 44}};
  const Json j = record_to_json(r);
  CHECK(missing_fields(j, record_json_keys()).empty());
  CHECK(j["counts"]["measure"] == 44);
  CHECK(j["config_yaml"] == "epochs: 3\n");
  CHECK(j["git_revision"] == r.build_revision);

  Json broken = j;
  broken.erase("git_revision");
  broken.erase("date_utc");
  CHECK(missing_fields(broken, record_json_keys()) ==
        std::vector<std::string>{"git_revision", "date_utc"});
  CHECK(missing_fields(Json::array(), {"a"}) == std::vector<std::string>{"a"});
}

TEST_CASE("the run record says how the numbers were computed: determinism, cuDNN, TF32") {
  at::Context& context = at::globalContext();
  const bool was_deterministic = context.deterministicAlgorithms();
  const bool was_warn_only = context.deterministicAlgorithmsWarnOnly();
  const bool was_benchmark = context.benchmarkCuDNN();
  context.setDeterministicAlgorithms(true, /*warn_only=*/true);
  context.setBenchmarkCuDNN(true);
  RunRecord r = collect_run_record("cpu");
  CHECK(r.deterministic_algorithms);
  CHECK(r.deterministic_warn_only);
  CHECK(r.cudnn_benchmark);
  CHECK_FALSE(r.cuda_matmul_fp32.empty());
  Json j = record_to_json(r);
  CHECK(j["numerics"]["deterministic_algorithms"] == true);
  CHECK(j["numerics"]["cudnn_benchmark"] == true);
  CHECK(j["numerics"]["cuda_conv_fp32"] == r.cuda_conv_fp32);
  context.setDeterministicAlgorithms(false, false);
  context.setBenchmarkCuDNN(false);
  r = collect_run_record("cpu");
  CHECK_FALSE(r.deterministic_algorithms);
  CHECK_FALSE(r.cudnn_benchmark);
  context.setDeterministicAlgorithms(was_deterministic, was_warn_only);
  context.setBenchmarkCuDNN(was_benchmark);
}

TEST_CASE("the working tree's revision is read with git, and is null outside a tree") {
  trainer::test::TempDir dir;
  CHECK_FALSE(git_revision_of(dir.path().string()).has_value());
  CHECK_FALSE(git_dirty_of(dir.path().string()).has_value());
  const auto rev = git_revision_of(TRAINER_SOURCE_DIR);
  if (!rev) TRAINER_SKIP("git or the source tree's .git is not available");
  CHECK(std::regex_match(*rev, std::regex("[0-9a-f]{12}")));
  CHECK(git_dirty_of(TRAINER_SOURCE_DIR).has_value());
}

TEST_CASE("device spellings resolve to one LibTorch device") {
  CHECK(resolve_device("cpu") == "cpu");
  CHECK(resolve_device("0") == "cuda:0");
  CHECK(resolve_device("3") == "cuda:3");
  CHECK(resolve_device("cuda") == "cuda:0");
  CHECK(resolve_device("cuda:1") == "cuda:1");
  CHECK_THROWS_AS(resolve_device("0,1"), trainer::core::ConfigError);
  CHECK_THROWS_AS(resolve_device("gpu"), trainer::core::ConfigError);
  const std::string any = resolve_device("");
  CHECK((any == "cpu" || any == "cuda:0"));
}
