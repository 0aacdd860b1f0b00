// The run folder against kills and ranks, with the built binary: a kill after each file of the
// final epoch's save sequence, then one resume, gives the uninterrupted run's outputs; a second
// rank in another working folder (another machine without a shared file system) writes nothing.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "test_support.h"

using trainer::test::run_command;

namespace {

std::string trainer_binary() {
  return TRAINER_BINARY;
}

// A tiny synthetic set in `dir`/data; returns its dataset yaml.
std::filesystem::path synth(const std::filesystem::path& dir) {
  std::string out;
  REQUIRE(run_command(trainer_binary() + " -q synth " + (dir / "data").string() +
                          " --train 8 --val 4 --size 64 --max-objects 2 --seed 0",
                      &out) == 0);
  return dir / "data" / "synthetic.yaml";
}

std::string fit_args(const std::filesystem::path& yaml) {
  return " data=" + yaml.string() +
         " model=yolo26t imgsz=64 batch=4 nbs=4 workers=1 precision=fp32 device=cpu plots=false "
         "seed=0 deterministic=true";
}

}  // namespace

TEST_CASE("cli: a kill after any file of the final save, then one resume, loses nothing") {
  // The final epoch writes best.ckpt, best.pt (when it improved), last.pt, predictions.json and
  // last.ckpt, in that order; a kill (exit 137 right after the rename, test hook) at each point,
  // then `fit resume=`, must leave last.pt, best.pt and predictions.json byte-equal to an
  // uninterrupted run's. Before: last.ckpt was written before last.pt and predictions.json, so a
  // kill between them left them stale for good (resume said "already finished").
  trainer::test::TempDir dir;
  const auto yaml = synth(dir.path());
  const std::string common = " OMP_NUM_THREADS=1 " + trainer_binary() + " -q fit" + fit_args(yaml) +
                             " epochs=2 save_json=true project=" + dir.path().string();
  std::string out;
  REQUIRE(run_command("env" + common + " name=reference", &out) == 0);
  const auto reference = dir.path() / "reference";
  for (const char* point :
       {"best.ckpt:2", "best.pt:2", "last.pt:2", "predictions.json:1", "last.ckpt:2"}) {
    CAPTURE(point);
    std::string name = std::string("killed_") + point;  // killed_best.ckpt:2 -> killed_best_ckpt_2
    for (char& c : name) {
      if (c == '.' || c == ':') c = '_';
    }
    const int killed =
        run_command(std::string("env TRAINER_TEST_HOOKS=1 TRAINER_FAULT_EXIT_AFTER=") + point +
                        common + " name=" + name,
                    &out);
    CAPTURE(out);
    CHECK((killed == 137 || killed == 0));  // 0: best did not improve in the last epoch
    const auto run = dir.path() / name;
    if (killed == 137) {
      const int resumed = run_command("env OMP_NUM_THREADS=1 " + trainer_binary() +
                                          " -q fit resume=" + (run / "weights/last.ckpt").string(),
                                      &out);
      if (std::string(point) == "last.ckpt:2") {
        CHECK(resumed != 0);  // the epoch was committed: the run is complete
        CHECK(out.find("already finished") != std::string::npos);
      } else {
        CHECK(resumed == 0);
      }
    }
    for (const char* file : {"weights/last.pt", "weights/best.pt", "predictions.json"}) {
      CAPTURE(file);
      REQUIRE(std::filesystem::exists(run / file));
      CHECK(trainer::test::read_text(run / file) == trainer::test::read_text(reference / file));
    }
  }
}

TEST_CASE("cli: a second rank in another working folder writes nothing there") {
  // Two "nodes" without a shared file system: each rank runs in its own folder, the run folder
  // relative (runs/detect/train). Only rank 0 writes one. Before: rank 1 wrote (or failed to
  // create) results.csv in its own runs/detect/train.
  trainer::test::TempDir dir;
  const auto yaml = synth(dir.path());
  const auto node0 = dir.path() / "node0", node1 = dir.path() / "node1";
  std::filesystem::create_directories(node0);
  std::filesystem::create_directories(node1);
  std::string out;
  const std::string port_cmd =
      "python3 -c 'import socket; s=socket.socket(); s.bind((\"127.0.0.1\",0)); "
      "print(s.getsockname()[1])'";
  std::string port;
  REQUIRE(run_command(port_cmd, &port) == 0);
  while (!port.empty() && (port.back() == '\n' || port.back() == '\r')) port.pop_back();
  const std::string rank_env =
      " WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1"
      " MASTER_PORT=" +
      port + " OMP_NUM_THREADS=1 ";
  const std::string fit = trainer_binary() + " -q fit" + fit_args(yaml) + " epochs=1";
  const std::string both = "(cd " + node1.string() + " && env RANK=1 GROUP_RANK=1" + rank_env +
                           fit + " > rank1.log 2>&1; echo $? > rank1.rc) & (cd " + node0.string() +
                           " && env RANK=0 GROUP_RANK=0" + rank_env + fit +
                           "); rc=$?; wait; exit $rc";
  REQUIRE(run_command("bash -c '" + both + "'", &out) == 0);
  CAPTURE(trainer::test::read_text(node1 / "rank1.log"));
  CHECK(trainer::test::read_text(node1 / "rank1.rc") == "0\n");
  CHECK(std::filesystem::exists(node0 / "runs/detect/train/results.csv"));
  CHECK(std::filesystem::exists(node0 / "runs/detect/train/weights/last.ckpt"));
  CHECK_FALSE(std::filesystem::exists(node1 / "runs"));
}
