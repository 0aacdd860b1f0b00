// The bench commands through the `trainer` binary: short, untimed runs on tiny inputs that check
// the JSON each prints, and the errors for bad arguments.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "test_support.h"

using trainer::test::read_text;
using trainer::test::run_command;
using trainer::test::TempDir;
using trainer::test::write_text;
using Json = nlohmann::json;

namespace {

const std::string kTrainer = TRAINER_BINARY;

bool has_keys(const Json& j, std::initializer_list<const char*> keys) {
  bool all = true;
  for (const char* key : keys) {
    if (!j.contains(key)) {
      MESSAGE("missing key " << key);
      all = false;
    }
  }
  return all;
}

// A command exists in this build when `--help` succeeds (the interval and fit commands arrive
// with the training loop).
bool command_exists(const std::string& args) {
  std::string out;
  return run_command(kTrainer + " " + args + " --help", &out) == 0;
}

// A tiny synthetic dataset and a config that trains yolo26n on it at 64 px for one short epoch.
std::string tiny_config(const TempDir& dir) {
  std::string out;
  REQUIRE(run_command(kTrainer + " -q synth " + (dir / "synth").string() +
                          " --train 8 --val 4 --size 64 --max-objects 2",
                      &out) == 0);
  write_text(dir / "tiny.yaml", "data: " + (dir / "synth" / "synthetic.yaml").string() +
                                    "\nmodel: yolo26n\nimgsz: 64\nbatch: 2\nepochs: 1\n"
                                    "workers: 1\nprecision: fp32\ndevice: cpu\nval_batches: 1\n"
                                    "plots: false\n");
  return (dir / "tiny.yaml").string();
}

}  // namespace

TEST_CASE("bench optim on the tiny yolo26 prints every comparison and the run record") {
  TempDir dir;
  std::string out;
  const std::string json = (dir / "optim.json").string();
  REQUIRE(
      run_command(kTrainer + " bench optim --tiny --warmup 1 --measure 1 --pairs 1 --json " + json,
                  &out) == 0);
  const Json j = Json::parse(read_text(json));
  CHECK(has_keys(j, {"benchmark", "model", "device", "settings", "parameters", "groups", "buckets",
                     "optimizer", "ema", "step_plus_ema", "peak_memory", "record"}));
  CHECK(j["model"] == "yolo26n (tiny test width)");
  CHECK(j["optimizer"]["arms"].size() == 3);
  CHECK(j["ema"]["arms"].size() == 2);
  CHECK(j["step_plus_ema"]["arms"].size() == 2);
  CHECK(j["record"]["counts"]["measure_steps"] == 1);
  CHECK(j["record"]["libtorch_version"].get<std::string>().rfind("2.", 0) == 0);
  CHECK(j["peak_memory"]["bytes"].get<int64_t>() > 0);
  // The head split found the last layer: the x3-lr groups exist.
  bool head = false;
  for (const auto& g : j["groups"]) head |= g["name"] == "muon_head";
  CHECK(head);
  CHECK(out.find("optimizer: scalar") != std::string::npos);  // the summary on stderr
}

TEST_CASE("bench abba and fit reject missing arms and bad keys before running anything") {
  std::string out;
  CHECK(run_command(kTrainer + " bench abba", &out) == 2);
  CHECK(out.find("--baseline") != std::string::npos);
  CHECK(run_command(kTrainer + " bench fit --baseline nosuchkey=1 --candidate epochs=2", &out) ==
        2);
  CHECK(out.find("unknown key 'nosuchkey'") != std::string::npos);
  CHECK(run_command(kTrainer + " bench optim --device gpu", &out) == 2);
  CHECK(out.find("device: \"gpu\" is not one device") != std::string::npos);
}

TEST_CASE("bench interval and abba on a tiny config (1 pair, tiny counts) (slow)") {
  if (!command_exists("bench interval")) {
    MESSAGE("skipped: this build has no `trainer bench interval` (engine::measure_intervals)");
    return;
  }
  TempDir dir;
  const std::string config = tiny_config(dir);
  std::string out;
  const std::string json = (dir / "interval.json").string();
  REQUIRE(
      run_command(kTrainer + " bench interval " + config + " --warmup 1 --measure 2 --json " + json,
                  &out) == 0);
  const Json j = Json::parse(read_text(json));
  CHECK(has_keys(
      j, {"benchmark", "interval_ms", "intervals_ms", "breakdown", "peak_memory", "record"}));
  CHECK(j["intervals_ms"].size() == 2);
  CHECK(j["breakdown"]["stages_ms"].contains("optimizer"));
  CHECK(j["record"]["config_yaml"].get<std::string>().find("imgsz: 64") != std::string::npos);

  const std::string abba = (dir / "abba.json").string();
  REQUIRE(run_command(kTrainer + " bench abba " + config +
                          " --baseline optimizer_impl=scalar --candidate optimizer_impl=padded"
                          " --pairs 1 --warmup-arms 0 --warmup 1 --measure 2 --json " +
                          abba,
                      &out) == 0);
  const Json a = Json::parse(read_text(abba));
  CHECK(has_keys(a, {"benchmark", "baseline", "candidate", "reduction", "verdict", "record",
                     "baseline_config_yaml", "candidate_config_yaml"}));
  CHECK(a["pairs"] == 1);
  CHECK(a["baseline"]["details"][0]["intervals_ms"].size() == 2);
  CHECK(a["candidate_config_yaml"].get<std::string>().find("optimizer_impl: padded") !=
        std::string::npos);
  CHECK(out.find("paired reduction median") != std::string::npos);  // the table on stderr
}

TEST_CASE("bench fit times complete fits of a tiny config (1 pair) (slow)") {
  if (!command_exists("fit")) {
    MESSAGE("skipped: this build has no `trainer fit` yet");
    return;
  }
  TempDir dir;
  const std::string config = tiny_config(dir);
  std::string out;
  const std::string json = (dir / "fit.json").string();
  REQUIRE(run_command(kTrainer + " bench fit " + config +
                          " --baseline ema_impl=scalar --candidate ema_impl=foreach --pairs 1"
                          " --warmup-arms 0 --project " +
                          (dir / "runs").string() + " --json " + json,
                      &out) == 0);
  const Json j = Json::parse(read_text(json));
  CHECK(j["benchmark"] == "fit");
  CHECK(j["unit"] == "s");
  CHECK(j["baseline"]["values"].size() == 1);
  CHECK(j["baseline"]["values"][0].get<double>() > 0.0);
  CHECK(j["candidate"]["details"][0]["run_name"] == "b0");
  CHECK(std::filesystem::is_directory(dir / "runs" / "a0"));
}
