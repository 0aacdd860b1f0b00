// Bad input: each error names the file and line (or the command line), the key, and what is
// allowed.
#include <doctest/doctest.h>

#include <functional>

#include "core/config_loader.h"
#include "test_support.h"

using namespace trainer::core;
using trainer::test::TempDir;
using trainer::test::write_text;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("an unknown key names the file, the line and the closest valid key") {
  TempDir dir;
  write_text(dir / "bad.yaml", "epochs: 3\n\nmomentun: 0.9\n");
  const std::string msg = error_of([&] { load_config(dir / "bad.yaml"); });
  CHECK(msg.find((dir / "bad.yaml").string() + ":3:") == 0);
  CHECK(msg.find("unknown key 'momentun'") != std::string::npos);
  CHECK(msg.find("did you mean 'momentum'") != std::string::npos);
}

TEST_CASE("an unknown override key names the command line and the closest key") {
  const std::string msg = error_of([] { load_config({}, {"lr=0.1"}); });
  CHECK(msg ==
        "command line: unknown key 'lr'; did you mean 'lr0'? "
        "(`trainer config --keys` lists them all)");
  CHECK(error_of([] { load_config({}, {"warmup_epoch=1"}); }).find("'warmup_epochs'") !=
        std::string::npos);
}

TEST_CASE("a wrong type names file:line, the key and the expected type and range") {
  TempDir dir;
  write_text(dir / "t.yaml", "batch: 16\nepochs: many\n");
  CHECK(error_of([&] { load_config(dir / "t.yaml"); }) ==
        (dir / "t.yaml").string() +
            ":2: key 'epochs' expects an integer in [1, 100000], got 'many'");
  CHECK(error_of([] { load_config({}, {"batch=2.5"}); }) ==
        "command line: key 'batch' expects an integer in [1, 4096], got '2.5'");
  CHECK(error_of([] { load_config({}, {"cos_lr=maybe"}); }) ==
        "command line: key 'cos_lr' expects true or false, got 'maybe'");
  CHECK(error_of([] { load_config({}, {"optimizer=adam"}); }) ==
        "command line: key 'optimizer' expects one of: auto, MuSGD, SGD, AdamW, got 'adam'");
  CHECK(error_of([] { load_config({}, {"ns_coefficients=[1, 2]"}); }) ==
        "command line: key 'ns_coefficients' expects a list of 3 numbers, each in [-100, 100], "
        "got a list");
  CHECK(error_of([] { load_config({}, {"name=[a, b]"}); }) ==
        "command line: key 'name' expects a string, got a list");
}

TEST_CASE("an out-of-range value names the allowed range") {
  TempDir dir;
  write_text(dir / "r.yaml", "momentum: 1.0\n");
  CHECK(error_of([&] { load_config(dir / "r.yaml"); }) ==
        (dir / "r.yaml").string() + ":1: key 'momentum' expects a number in [0, 1), got '1.0'");
  CHECK(error_of([] { load_config({}, {"lr0=0"}); }) ==
        "command line: key 'lr0' expects a number in (0, 10], got '0'");
  CHECK(error_of([] { load_config({}, {"fliplr=1.5"}); }) ==
        "command line: key 'fliplr' expects a number in [0, 1], got '1.5'");
  CHECK(error_of([] { load_config({}, {"lr0=.nan"}); }).find("expects a number") !=
        std::string::npos);
  CHECK(error_of([] { load_config({}, {"imgsz=16"}); }) ==
        "command line: key 'imgsz' expects an integer in [32, 8192], got '16'");
}

TEST_CASE("a missing config or base file names the path") {
  CHECK(error_of([] { load_config("/nonexistent/x.yaml"); }) ==
        "config file not found: /nonexistent/x.yaml");
  TempDir dir;
  write_text(dir / "c.yaml", "base: nope.yaml\n");
  CHECK(error_of([&] { load_config(dir / "c.yaml"); }) ==
        (dir / "c.yaml").string() + ":1: base config not found: " + (dir / "nope.yaml").string());
}

TEST_CASE("malformed YAML names the file and line") {
  TempDir dir;
  write_text(dir / "m.yaml", "epochs: 3\nbatch: [1, 2\nlr0: 0.1\n");
  const std::string msg = error_of([&] { load_config(dir / "m.yaml"); });
  CHECK(msg.find((dir / "m.yaml").string() + ":") == 0);
  CHECK(msg.find("malformed YAML") != std::string::npos);
  write_text(dir / "list.yaml", "- a\n- b\n");
  CHECK(error_of([&] { load_config(dir / "list.yaml"); }).find("must be a mapping") !=
        std::string::npos);
}

TEST_CASE("a cycle of base configs is an error, and so is a malformed override") {
  TempDir dir;
  write_text(dir / "a.yaml", "base: b.yaml\n");
  write_text(dir / "b.yaml", "base: a.yaml\n");
  CHECK(error_of([&] { load_config(dir / "a.yaml"); }).find("cycle") != std::string::npos);
  CHECK(error_of([] { load_config({}, {"epochs"}); }) ==
        "command line: override 'epochs' is not of the form key=value");
  CHECK(error_of([] { load_config({}, {"base=x.yaml"}); }).find("only be set inside") !=
        std::string::npos);
}
