// The CLI end to end: exit codes, messages, and that a failing command writes nothing.
#include <doctest/doctest.h>

#include "test_support.h"

using trainer::test::run_command;
using trainer::test::TempDir;
using trainer::test::write_text;

namespace {
const std::string kTrainer = TRAINER_BINARY;
}

TEST_CASE("trainer --version names trainer, LibTorch, CUDA, OpenCV and threads") {
  std::string out;
  REQUIRE(run_command(kTrainer + " --version", &out) == 0);
  CHECK(out.find("trainer 0.") == 0);
  CHECK(out.find("LibTorch 2.") != std::string::npos);
  CHECK(out.find("CUDA compiled in:") != std::string::npos);
  CHECK(out.find("cuDNN available:") != std::string::npos);
  CHECK(out.find("OpenCV 4.") != std::string::npos);
  CHECK(out.find("threads:") != std::string::npos);
}

TEST_CASE("trainer config prints the table and writes YAML that loads back identically") {
  TempDir dir;
  std::string out;
  REQUIRE(run_command(kTrainer + " config epochs=3 name=x -o " + (dir / "a.yaml").string(), &out) ==
          0);
  CHECK(out.find("schedule  epochs") != std::string::npos);
  std::string again;
  REQUIRE(run_command(kTrainer + " config " + (dir / "a.yaml").string() + " -o " +
                          (dir / "b.yaml").string(),
                      &again) == 0);
  CHECK(trainer::test::read_text(dir / "a.yaml") == trainer::test::read_text(dir / "b.yaml"));
}

TEST_CASE("bad input exits non-zero with file:line and writes nothing") {
  TempDir dir;
  write_text(dir / "bad.yaml", "epochs: 3\nbatchsize: 8\n");
  std::string out;
  CHECK(run_command(kTrainer + " config " + (dir / "bad.yaml").string() + " -o " +
                        (dir / "out.yaml").string(),
                    &out) == 2);
  CHECK(out.find("bad.yaml:2: unknown key 'batchsize'; did you mean 'batch'?") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "out.yaml"));
  CHECK(run_command(kTrainer + " config " + (dir / "missing.yaml").string(), &out) == 2);
  CHECK(out.find("config file not found: " + (dir / "missing.yaml").string()) != std::string::npos);
  CHECK(run_command(kTrainer + " config model=yolo99 ", &out) == 2);
  CHECK(out.find("unknown model 'yolo99'") != std::string::npos);
  write_text(dir / "d.yaml", "data: nowhere.yaml\n");
  CHECK(run_command(kTrainer + " config " + (dir / "d.yaml").string(), &out) == 2);
  CHECK(out.find("dataset yaml not found: " + (dir / "nowhere.yaml").string()) !=
        std::string::npos);
}

TEST_CASE("trainer fit with neither a config nor data= prints the usage, exits 2, writes nothing") {
  TempDir dir;
  std::string out;
  CHECK(run_command("cd " + dir.path().string() + " && " + kTrainer + " fit", &out) == 2);
  CAPTURE(out);
  CHECK(out.find("error: trainer fit needs a dataset: give a CONFIG that sets data:, or "
                 "data=DATA_YAML") == 0);
  CHECK(out.find("usage: trainer fit [CONFIG] [key=value ...]") != std::string::npos);
  CHECK(out.find("scripts/demo.sh") != std::string::npos);
  CHECK(out.find("configuration:") == std::string::npos);
  CHECK(out.find("dataset yaml not found") == std::string::npos);
  // A config without data: says which file lacks it.
  write_text(dir / "c.yaml", "epochs: 3\n");
  CHECK(run_command("cd " + dir.path().string() + " && " + kTrainer + " fit c.yaml", &out) == 2);
  CHECK(out.find("c.yaml sets no data:") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "runs"));
}

TEST_CASE("trainer val without weights= is refused with exit 2 before scoring anything") {
  TempDir dir;
  write_text(dir / "c.yaml", "data: d.yaml\nmodel: yolo26t\n");
  std::string out;
  CHECK(run_command("cd " + dir.path().string() + " && " + kTrainer + " val c.yaml", &out) == 2);
  CAPTURE(out);
  CHECK(out.find("error: trainer val needs a weights file: give weights=PATH") == 0);
  CHECK(out.find("usage: trainer val [CONFIG] weights=PATH [key=value ...]") != std::string::npos);
  CHECK(out.find("freshly initialised") == std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "runs"));
  // The weights are read first (their run may name the dataset): a missing file says so.
  CHECK(run_command(kTrainer + " val weights=" + (dir / "w.pt").string(), &out) == 2);
  CHECK(out.find("error: weights file not found: " + (dir / "w.pt").string()) == 0);
}

TEST_CASE("usage errors of every subcommand: our message, exit 2, and --help exits 0") {
  std::string out;
  CHECK(run_command(kTrainer + " predict", &out) == 2);
  CHECK(out.find("error: trainer predict needs a weights file and a source") == 0);
  CHECK(out.find("usage: trainer predict weights=PATH source=PATH") != std::string::npos);
  CHECK(run_command(kTrainer + " predict weights=w.pt", &out) == 2);
  CHECK(out.find("error: trainer predict needs a source") == 0);
  // CLI11's parse errors: the subcommand named, its usage line, the same exit status.
  CHECK(run_command(kTrainer + " frobnicate", &out) == 2);
  CHECK(out.find("error: trainer: unknown subcommand 'frobnicate' (one of: fit, val, predict,") ==
        0);
  CHECK(out.find("usage: trainer SUBCOMMAND ...") != std::string::npos);
  CHECK(run_command(kTrainer + " eval", &out) == 2);
  CHECK(out.find("error: trainer eval: GT_JSON is required") == 0);
  CHECK(out.find("usage: trainer eval [OPTIONS] GT_JSON PRED_JSON") != std::string::npos);
  CHECK(out.find("`trainer eval --help` lists the arguments and options") != std::string::npos);
  CHECK(run_command(kTrainer + " data", &out) == 2);
  CHECK(out.find("error: trainer data: a subcommand is required") == 0);
  CHECK(run_command(kTrainer + " data check", &out) == 2);
  CHECK(run_command(kTrainer + " synth", &out) == 2);
  CHECK(run_command(kTrainer + " fit --no-such-flag", &out) == 2);
  CHECK(out.find("error: trainer fit: the following argument was not expected: --no-such-flag") ==
        0);
  CHECK(run_command(kTrainer + " eval a.json b.json --iou-type box", &out) == 2);
  for (const char* help : {" --help", " predict --help", " fit --help", " data check --help"}) {
    CAPTURE(help);
    CHECK(run_command(kTrainer + help, &out) == 0);
    CHECK(out.find("Usage: trainer") != std::string::npos);
  }
}

TEST_CASE("trainer fit reports a configuration error before the configuration table") {
  TempDir dir;
  std::string out;
  const std::string in_dir = "cd " + dir.path().string() + " && " + kTrainer;
  CHECK(run_command(in_dir + " fit data=missing.yaml model=yolo26t", &out) == 2);
  CAPTURE(out);
  CHECK(out.find("error: dataset yaml not found: " + (dir / "missing.yaml").string()) == 0);
  CHECK(out.find("configuration:") == std::string::npos);
  REQUIRE(run_command(kTrainer + " -q synth " + (dir / "shapes").string() +
                          " --train 2 --val 2 --size 64 --max-objects 1",
                      &out) == 0);
  // cuda:99: no such device in a CUDA build, no CUDA at all in a CPU build; refused either way.
  CHECK(run_command(in_dir + " fit data=shapes/synthetic.yaml model=yolo26t device=cuda:99",
                    &out) == 2);
  CHECK(out.find("error: device: \"cuda:99\"") == 0);
  CHECK(out.find("configuration:") == std::string::npos);
  CHECK(run_command(in_dir + " fit data=shapes/synthetic.yaml model=yolo99", &out) == 2);
  CHECK(out.find("error: unknown model 'yolo99'") == 0);
  CHECK_FALSE(std::filesystem::exists(dir / "runs"));
}

TEST_CASE("trainer alone is a usage error, and -v and -q are accepted after the subcommand") {
  std::string out;
  CHECK(run_command(kTrainer, &out) == 2);
  CHECK(out.find("error: trainer needs a subcommand (fit, val, predict, ...)") == 0);
  CHECK(out.find("Subcommands:") != std::string::npos);
  TempDir dir;
  // `-q` after `fit` reaches the global flag: the error is fit's own (no dataset), not `-q`'s.
  CHECK(run_command("cd " + dir.path().string() + " && " + kTrainer + " fit -q", &out) == 2);
  CHECK(out.find("error: trainer fit needs a dataset") == 0);
  CHECK(run_command(kTrainer + " config -v epochs=2", &out) == 0);
  CHECK(run_command(kTrainer + " config epochs=2 -q", &out) == 0);
}

TEST_CASE("a file where a folder is needed is one line naming it, exit 2") {
  TempDir dir;
  write_text(dir / "afile", "x");
  std::string out;
  CHECK(run_command(kTrainer + " synth " + (dir / "afile" / "sub").string(), &out) == 2);
  CAPTURE(out);
  CHECK(out.find("error: cannot create directories " + (dir / "afile" / "sub").string()) == 0);
  CHECK(out.find("(" + (dir / "afile").string() + " is a file, not a folder)") !=
        std::string::npos);
  CHECK(out.find("filesystem error") == std::string::npos);
  // A folder given as a weights file or a resume checkpoint.
  CHECK(run_command(kTrainer + " fit resume=" + dir.path().string(), &out) == 2);
  CHECK(out == "error: resume: " + dir.path().string() + " is a folder, not a file\n");
}
