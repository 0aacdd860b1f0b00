// The bad-input corpus through the binary: every case is a few bytes of wrong input (a broken
// yaml, a folder where a file belongs, a dataset that would train on wrong labels) and one command
// a user would type. Each must exit with the README's status, print exactly one `error:` line that
// names the culprit, show no library text, and leave nothing behind (no run folder, no partial
// file: the case folder holds afterwards exactly what it held before, label caches aside).
//
// Why one table: the promise is about a class of failures, so a new one found later is a row here,
// checked by the same five rules, instead of a test written (or forgotten) for its own sake.
#include <doctest/doctest.h>

#include <filesystem>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"

namespace fs = std::filesystem;
using trainer::test::run_command;
using trainer::test::TempDir;
using trainer::test::write_text;

namespace {

const std::string kTrainer = TRAINER_BINARY;

// Text that is the C++ library's, yaml-cpp's, nlohmann's, OpenCV's or LibTorch's, never ours.
const char* const kLibraryText[] = {
    "basic_filebuf", "parse_error",    "bad conversion", "filesystem error",
    "Assertion",     "frame #",        "c10::",          "terminate called",
    "what():",       "json.exception", "yaml-cpp:",      "std::"};

struct CliCase {
  std::string name;
  std::function<void(const fs::path&)> setup;  // writes the case's files into its folder
  std::string args;                            // after `trainer`, run in the case's folder
  int exit_code = 2;
  std::string error;  // a substring of the one error line
};

// A small detection dataset in `dir` (YOLO txt + COCO json), made once by `trainer synth` and
// copied into each case's folder.
const fs::path& synth_dataset() {
  static TempDir dir;
  static const bool made = [] {
    std::string out;
    const int rc = run_command(
        kTrainer + " synth " + (dir / "shapes").string() + " --train 4 --val 2 --size 64 --seed 1",
        &out);
    REQUIRE_MESSAGE(rc == 0, out);
    return true;
  }();
  (void)made;
  static const fs::path shapes = dir / "shapes";
  return shapes;
}

// Weights from a one-epoch fit on that dataset (yolo26n, 64 px: a few seconds), made once.
const std::string& trained_weights() {
  static TempDir dir;
  static const std::string weights = [] {
    std::string out;
    const int rc =
        run_command(kTrainer + " fit data=" + (synth_dataset() / "synthetic.yaml").string() +
                        " model=yolo26n epochs=1 imgsz=64 batch=2 workers=0 val=false "
                        "project=" +
                        dir.path().string() + " name=w -q",
                    &out);
    REQUIRE_MESSAGE(rc == 0, out);
    return (dir / "w" / "weights" / "best.pt").string();
  }();
  return weights;
}

void copy_dataset(const fs::path& dir) {
  fs::copy(synth_dataset(), dir / "shapes", fs::copy_options::recursive);
}

// The dataset's yaml without the json keys: its labels are the YOLO txt files.
void copy_txt_dataset(const fs::path& dir) {
  copy_dataset(dir);
  write_text(dir / "shapes" / "txt.yaml",
             "path: .\ntrain: images/train\nval: images/val\n"
             "names: [circle, square, triangle, cross, ring, diamond]\n");
}

std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> files;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator();
       ++it) {
    if (it->path().extension() == ".cache") continue;  // label caches: an index, not an output
    files.insert(fs::relative(it->path(), dir).string());
  }
  return files;
}

void check_case(const CliCase& c) {
  CAPTURE(c.name);
  TempDir dir;
  if (c.setup) c.setup(dir.path());
  const std::set<std::string> before = listing(dir.path());
  std::string out;
  const int rc = run_command("cd " + dir.path().string() + " && " + kTrainer + " " + c.args, &out);
  CAPTURE(c.args);
  CAPTURE(out);
  CHECK(rc == c.exit_code);
  CHECK(trainer::test::count_of(out, "error:") == 1);
  CHECK(out.find(c.error) != std::string::npos);
  for (const char* text : kLibraryText) {
    CAPTURE(text);
    CHECK(out.find(text) == std::string::npos);
  }
  const std::set<std::string> after = listing(dir.path());
  std::string added;
  for (const std::string& f : after) {
    if (!before.count(f)) added += " " + f;
  }
  CAPTURE(added);
  CHECK(added.empty());
}

void check_all(const std::vector<CliCase>& cases) {
  for (const CliCase& c : cases) check_case(c);
}

// Writes `text` to `dir/name`.
std::function<void(const fs::path&)> file(const std::string& name, const std::string& text) {
  return [name, text](const fs::path& dir) { write_text(dir / name, text); };
}

// The txt dataset, then `name` (relative to the case folder) written with `text`.
std::function<void(const fs::path&)> txt_dataset_with(const std::string& name,
                                                      const std::string& text) {
  return [name, text](const fs::path& dir) {
    copy_txt_dataset(dir);
    write_text(dir / name, text);
  };
}

const char* const kShortFit = " epochs=1 imgsz=64 batch=2 workers=0 val=false";

}  // namespace

TEST_CASE("bad-input corpus (CLI): usage and flags") {
  check_all({
      {"no subcommand", nullptr, "", 2, "error: trainer needs a subcommand"},
      {"unknown subcommand", nullptr, "fitt", 2, "fitt"},
      {"fit without data", nullptr, "fit", 2, "trainer fit needs a dataset"},
      {"fit -q without data", nullptr, "fit -q", 2, "trainer fit needs a dataset"},
      {"unknown flag", nullptr, "fit --epochs 3", 2, "--epochs"},
      {"val without weights", nullptr, "val data=d.yaml", 2, "weights"},
      {"predict without source", nullptr, "predict weights=w.pt", 2, "source"},
      {"override without =", file("c.yaml", "epochs: 3\n"), "config c.yaml epochs", 2,
       "not of the form key=value"},
      {"override malformed value", nullptr, "config epochs=[", 2, "malformed value"},
      {"unknown override key", nullptr, "config batchsize=8", 2, "did you mean 'batch'"},
      {"override wrong type", nullptr, "config epochs=abc", 2, "epochs"},
      {"override out of range", nullptr, "config imgsz=-5", 2, "imgsz"},
      {"unknown model", nullptr, "config model=yolo99", 2, "unknown model 'yolo99'"},
      {"info unknown model", nullptr, "info model=yolo99", 2, "unknown model 'yolo99'"},
      {"bench without its subcommand", nullptr, "bench", 2, "a subcommand is required"},
  });
}

TEST_CASE("bad-input corpus (CLI): config files") {
  check_all({
      {"config missing", nullptr, "fit nope.yaml", 2, "config file not found: nope.yaml"},
      {"config is a folder", [](const fs::path& d) { fs::create_directory(d / "c.yaml"); },
       "config c.yaml", 2, "c.yaml"},
      {"config unknown key", file("c.yaml", "epochs: 3\nbatchsize: 8\n"), "config c.yaml", 2,
       "c.yaml:2: unknown key 'batchsize'"},
      {"config key twice", file("c.yaml", "epochs: 1\nbatch: 2\nepochs: 3\n"), "config c.yaml", 2,
       "c.yaml:3: key 'epochs' is given twice (first at line 1)"},
      {"config malformed", file("c.yaml", "epochs: [1\n"), "config c.yaml", 2, "malformed YAML"},
      {"config not a mapping", file("c.yaml", "- 1\n- 2\n"), "config c.yaml", 2, "mapping"},
      {"config wrong type", file("c.yaml", "epochs: many\n"), "config c.yaml", 2, "c.yaml:1"},
      {"config base cycle",
       [](const fs::path& d) {
         write_text(d / "a.yaml", "base: b.yaml\n");
         write_text(d / "b.yaml", "base: a.yaml\n");
       },
       "config a.yaml", 2, "cycle"},
      {"config base missing", file("a.yaml", "base: none.yaml\n"), "config a.yaml", 2,
       "base config not found"},
      {"config without data", file("c.yaml", "epochs: 3\n"), "fit c.yaml", 2,
       "c.yaml sets no data:"},
      {"model yaml", file("c.yaml", "epochs: 3\n"), "fit c.yaml data=d.yaml model=my.yaml", 2,
       "my.yaml"},
  });
}

TEST_CASE("bad-input corpus (CLI): dataset yamls") {
  const std::string fit = std::string("fit data=shapes/d.yaml") + kShortFit;
  const std::string splits = "path: .\ntrain: images/train\nval: images/val\n";
  check_all({
      {"dataset yaml missing", nullptr, "fit data=none.yaml", 2, "dataset yaml not found"},
      {"dataset yaml is a folder", [](const fs::path& d) { fs::create_directory(d / "d.yaml"); },
       "data check d.yaml", 2, "d.yaml"},
      {"dataset malformed", txt_dataset_with("shapes/d.yaml", splits + "names: [a, b\n"), fit, 2,
       "malformed YAML"},
      {"dataset key twice", txt_dataset_with("shapes/d.yaml", splits + "names: [a]\ntrain: x\n"),
       fit, 2, "d.yaml:5: key 'train' is given twice (first at line 2)"},
      {"dataset nc not a number",
       txt_dataset_with("shapes/d.yaml", splits + "nc: abc\nnames: [a]\n"), fit, 2,
       "'nc' must be an integer (the number of classes), got 'abc'"},
      {"dataset nc disagrees", txt_dataset_with("shapes/d.yaml", splits + "nc: 3\nnames: [a]\n"),
       fit, 2, "'nc' is 3 but 'names' has 1"},
      {"dataset without names", txt_dataset_with("shapes/d.yaml", splits), fit, 2,
       "missing key 'names'"},
      {"dataset names with a gap",
       txt_dataset_with("shapes/d.yaml", splits + "names:\n  0: a\n  2: c\n"), fit, 2,
       "without gaps"},
      {"dataset train path missing",
       txt_dataset_with("shapes/d.yaml",
                        "path: .\ntrain: images/none\nval: images/val\nnames: "
                        "[a]\n"),
       fit, 2, "dataset 'train' path not found"},
      {"dataset flip_idx not numbers",
       txt_dataset_with("shapes/d.yaml", splits + "names: [a]\nkpt_shape: [2, 3]\nflip_idx: [x, "
                                                  "1]\n"),
       fit, 2, "'flip_idx' must be a list of keypoint indices (integers), got 'x'"},
      {"dataset kpt_shape not numbers",
       txt_dataset_with("shapes/d.yaml", splits + "names: [a]\nkpt_shape: [many, 3]\n"), fit, 2,
       "'kpt_shape' must be [keypoints, dims]"},
      {"dataset env variable unset",
       txt_dataset_with("shapes/d.yaml",
                        "path: ${TRAINER_SURELY_UNSET_VARIABLE}\ntrain: a\nval: b\nnames: [a]\n"),
       fit, 2, "TRAINER_SURELY_UNSET_VARIABLE"},
  });
}

TEST_CASE(
    "bad-input corpus (CLI): data that would train wrong or not at all leaves no run folder") {
  const std::string six = "names: [circle, square, triangle, cross, ring, diamond]\n";
  check_all({
      {"pose model without kpt_shape", copy_txt_dataset,
       std::string("fit data=shapes/txt.yaml model=yolo26n-pose") + kShortFit, 2,
       "needs a dataset with kpt_shape (e.g. 'kpt_shape: [17, 3]')"},
      {"no usable image in train",
       [](const fs::path& d) {
         copy_txt_dataset(d);
         for (const auto& label : fs::directory_iterator(d / "shapes/labels/train")) {
           write_text(label.path(), "9 0.5 0.5 0.2 0.2\n");  // class 9 of 6
         }
       },
       std::string("fit data=shapes/txt.yaml") + kShortFit, 2, "no usable images in the train"},
      {"COCO names in another order",
       [six](const fs::path& d) {
         copy_dataset(d);
         std::string yaml = trainer::test::read_text(d / "shapes/synthetic.yaml");
         const std::string names = "names:";
         yaml = yaml.substr(0, yaml.find(names)) +
                "names: [square, circle, triangle, cross, "
                "ring, diamond]\n";
         write_text(d / "shapes/synthetic.yaml", yaml);
       },
       std::string("fit data=shapes/synthetic.yaml") + kShortFit, 2,
       "the categories' names do not match the dataset yaml's names for 2 of 6 classes"},
      {"COCO json cut short",
       [](const fs::path& d) {
         copy_dataset(d);
         const fs::path json = d / "shapes/annotations/instances_train.json";
         write_text(json, trainer::test::read_text(json).substr(0, 200));
       },
       std::string("fit data=shapes/synthetic.yaml") + kShortFit, 2,
       "instances_train.json: malformed json at line 1, column 201"},
      {"COCO json not an object",
       [](const fs::path& d) {
         copy_dataset(d);
         write_text(d / "shapes/annotations/instances_train.json", "[1, 2]");
       },
       std::string("fit data=shapes/synthetic.yaml") + kShortFit, 2, "not an object"},
      {"empty image folder",
       [six](const fs::path& d) {
         fs::create_directories(d / "e/images/train");
         write_text(d / "e/d.yaml", "path: .\ntrain: images/train\nval: images/train\n" + six);
       },
       std::string("fit data=e/d.yaml") + kShortFit, 2, "no images found"},
      {"data check of a json cut short",
       [](const fs::path& d) {
         copy_dataset(d);
         const fs::path json = d / "shapes/annotations/instances_val.json";
         write_text(json, trainer::test::read_text(json).substr(0, 100));
       },
       "data check shapes/synthetic.yaml", 2, "(the file ends there: is it cut short?)"},
  });
}

TEST_CASE("bad-input corpus (CLI): paths that are folders, files, missing or not weights") {
  check_all({
      {"val weights is a folder", copy_txt_dataset, "val data=shapes/txt.yaml weights=shapes", 2,
       "weights file: shapes is a folder, not a file"},
      {"val weights missing", copy_txt_dataset, "val data=shapes/txt.yaml weights=none.pt", 2,
       "weights file not found: none.pt"},
      {"resume is a folder", copy_txt_dataset, "fit resume=shapes", 2,
       "resume: shapes is a folder, not a file"},
      {"resume missing", nullptr, "fit resume=none.ckpt", 2, "resume not found: none.ckpt"},
      {"fine-tune weights are text", txt_dataset_with("w.pt", "not weights\n"),
       std::string("fit data=shapes/txt.yaml model=w.pt") + kShortFit, 2, "w.pt"},
      {"synth into a file", file("afile", "x"), "synth afile/sub", 2,
       "(afile is a file, not a folder)"},
      {"eval results missing", copy_dataset, "eval shapes/annotations/instances_val.json none.json",
       2, "none.json"},
      {"eval ground truth cut short", file("gt.json", "{\"images\": [{\"id\": 1"),
       "eval gt.json gt.json", 2, "gt.json: malformed json"},
  });
}

TEST_CASE("bad-input corpus (CLI): predict and val with real weights and wrong input") {
  const std::string w = " weights=" + trained_weights();
  check_all({
      {"predict source missing", nullptr, "predict" + w + " source=none.jpg", 2,
       "source none.jpg: no such file or folder"},
      {"predict text file named .mp4", file("t.mp4", "not a video\n"),
       "predict" + w + " source=t.mp4", 2, "t.mp4: cannot open the video"},
      {"predict empty folder", [](const fs::path& d) { fs::create_directory(d / "e"); },
       "predict" + w + " source=e", 2, "no images or videos found"},
      {"predict corrupt image", file("x.jpg", "not a jpeg"), "predict" + w + " source=x.jpg", 2,
       "x.jpg"},
      {"predict weights are a folder", file("x.jpg", "x"), "predict weights=. source=x.jpg", 2,
       "is a folder, not a file"},
      {"val with another model=", copy_txt_dataset, "val data=shapes/txt.yaml model=yolo26s" + w, 2,
       "holds yolo26n weights (as "},
      {"val on a dataset of other classes",
       txt_dataset_with("shapes/two.yaml",
                        "path: .\ntrain: images/train\nval: images/val\nnames: [a, b]\n"),
       "val data=shapes/two.yaml" + w, 2, "was trained for 6 classes"},
      {"fit from weights that are text", txt_dataset_with("w.pt", "not weights\n"),
       std::string("fit data=shapes/txt.yaml pretrained=w.pt") + kShortFit, 2, "w.pt"},
  });
}
