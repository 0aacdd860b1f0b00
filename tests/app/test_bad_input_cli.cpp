// The bad-input corpus through the binary: every case is a few bytes of wrong input (a broken
// yaml, a folder where a file belongs, a dataset that would train on wrong labels) and one command
// a user would type. Each must exit with the README's status, print exactly one `error:` line that
// names the culprit, show no library text, and leave nothing behind (no run folder, no partial
// file: the case folder holds afterwards exactly what it held before, label caches aside).
//
// Why one table: the promise is about a class of failures, so a new one found later is a row here,
// checked by the same five rules, instead of a test written (or forgotten) for its own sake.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

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

// The txt dataset with every training label file holding `row`.
std::function<void(const fs::path&)> txt_labels(const std::string& row) {
  return [row](const fs::path& dir) {
    copy_txt_dataset(dir);
    for (const auto& label : fs::directory_iterator(dir / "shapes/labels/train"))
      write_text(label.path(), row);
  };
}

// The COCO dataset with its training json edited by `edit`.
std::function<void(const fs::path&)> coco_train_json(
    const std::function<void(nlohmann::json&)>& edit) {
  return [edit](const fs::path& dir) {
    copy_dataset(dir);
    const fs::path file = dir / "shapes/annotations/instances_train.json";
    auto json = nlohmann::json::parse(trainer::test::read_text(file));
    edit(json);
    write_text(file, json.dump());
  };
}

// `name` holding the first `bytes` bytes of `source`.
std::function<void(const fs::path&)> cut_copy(const std::string& source, const std::string& name,
                                              size_t bytes) {
  return [source, name, bytes](const fs::path& dir) {
    write_text(dir / name, trainer::test::read_text(source).substr(0, bytes));
  };
}

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
       std::string("fit data=shapes/txt.yaml") + kShortFit, 2,
       "no usable images in the train split (0 images, 0 backgrounds, 4 corrupt, 0 boxes):\n  "},
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

TEST_CASE("bad-input corpus (CLI): subcommand words and values out of their range") {
  check_all({
      {"bench with an unknown subcommand", nullptr, "bench nothing", 2,
       "trainer bench: unknown subcommand 'nothing' (one of: abba, "},
      {"data with an unknown subcommand", nullptr, "data chek", 2,
       "trainer data: unknown subcommand 'chek' (one of: check, preview)"},
      {"data without its subcommand", nullptr, "data", 2, "trainer data: a subcommand is required"},
      {"epochs 0", nullptr, "config epochs=0", 2,
       "key 'epochs' expects an integer in [1, 100000], got '0'"},
      {"epochs in exponent form", nullptr, "config epochs=1e1", 2, "got '1e1'"},
      {"unknown optimizer", nullptr, "config optimizer=Adamx", 2,
       "key 'optimizer' expects one of: auto, MuSGD, SGD, AdamW, got 'Adamx'"},
      {"fp16 precision", nullptr, "config precision=fp16", 2,
       "key 'precision' expects one of: auto, bf16, fp32, got 'fp16'"},
      {"imgsz under 32", nullptr, "config imgsz=31", 2, "expects an integer in [32, 8192]"},
      {"batch 0", nullptr, "config batch=0", 2, "key 'batch' expects an integer in [1, 4096]"},
      {"mosaic over 1", nullptr, "config mosaic=2", 2, "key 'mosaic' expects a number in [0, 1]"},
      {"lr0 nan", nullptr, "config lr0=nan", 2, "key 'lr0' expects a number in (0, 10], got 'nan'"},
      {"lr0 hexadecimal", nullptr, "config lr0=0x1p-3", 2, "got '0x1p-3'"},
      {"device not a device", copy_txt_dataset,
       std::string("fit data=shapes/txt.yaml device=banana") + kShortFit, 2,
       "device: \"banana\" is not one device"},
      {"synth a negative count", nullptr, "synth s --train -1 --val 1", 2, "--train"},
  });
}

TEST_CASE("bad-input corpus (CLI): more config and dataset yamls") {
  const std::string fit = std::string("fit data=shapes/d.yaml") + kShortFit;
  const std::string pose = std::string("fit data=shapes/d.yaml model=yolo26n-pose") + kShortFit;
  const std::string splits = "path: .\ntrain: images/train\nval: images/val\n";
  check_all({
      {"config indented with a tab", file("c.yaml", "epochs:\n\t- 3\n"), "config c.yaml", 2,
       "c.yaml:2: malformed YAML"},
      {"config nests keys under a section", file("c.yaml", "train:\n  epochs: 3\n"),
       "config c.yaml", 2, "c.yaml:1: unknown key 'train'"},
      {"config list for an integer", file("c.yaml", "imgsz: [640, 480]\n"), "config c.yaml", 2,
       "key 'imgsz' expects an integer in [32, 8192], got a list"},
      {"config of binary bytes", file("c.yaml", std::string("\x01\x02 \"\\q\"\n")), "config c.yaml",
       2, "a config must be a mapping of key: value"},
      {"config base is a folder",
       [](const fs::path& d) {
         fs::create_directory(d / "b");
         write_text(d / "c.yaml", "base: b\n");
       },
       "config c.yaml", 2, "is a folder, not a file"},
      {"config empty", file("c.yaml", ""), "fit c.yaml", 2, "c.yaml sets no data:"},
      {"dataset yaml empty", txt_dataset_with("shapes/d.yaml", ""), fit, 2,
       "d.yaml:1: the dataset yaml is empty (it needs path, train, val and names)"},
      {"dataset yaml a list", txt_dataset_with("shapes/d.yaml", "- a\n- b\n"), fit, 2,
       "d.yaml:1: a dataset yaml must be a mapping of key: value"},
      {"dataset yaml given as a folder", copy_txt_dataset,
       std::string("fit data=shapes") + kShortFit, 2, "shapes is a folder, not a file"},
      {"dataset names a string", txt_dataset_with("shapes/d.yaml", splits + "names: abc\n"), fit, 2,
       "d.yaml:4: 'names' must be a list or an {id: name} mapping"},
      {"dataset names empty", txt_dataset_with("shapes/d.yaml", splits + "names: []\n"), fit, 2,
       "d.yaml:4: 'names' is empty"},
      {"dataset names id twice",
       txt_dataset_with("shapes/d.yaml", splits + "names:\n  0: a\n  0: b\n"), fit, 2,
       "d.yaml:6: key '0' is given twice (first at line 5)"},
      {"dataset nc negative", txt_dataset_with("shapes/d.yaml", splits + "nc: -1\nnames: [a]\n"),
       fit, 2, "'nc' is -1 but 'names' has 1"},
      {"dataset indented with a tab",
       txt_dataset_with("shapes/d.yaml", splits + "names: [a]\n\tx: 1\n"), fit, 2,
       "d.yaml:5: malformed YAML"},
      {"dataset kpt_shape of one number",
       txt_dataset_with("shapes/d.yaml", splits + "names: [a]\nkpt_shape: [17]\n"), pose, 2,
       "d.yaml:5: 'kpt_shape' must be [keypoints, dims]"},
      {"dataset kpt_shape of 4 dims",
       txt_dataset_with("shapes/d.yaml", splits + "names: [a]\nkpt_shape: [17, 4]\n"), pose, 2,
       "dims 2 (x y) or 3 (x y visibility)"},
      {"dataset flip_idx too short",
       txt_dataset_with("shapes/d.yaml", splits + "names: [a]\nkpt_shape: [2, 3]\nflip_idx: [0]\n"),
       pose, 2, "d.yaml:6: 'flip_idx' must be a permutation of 0..1"},
      {"dataset flip_idx out of range",
       txt_dataset_with("shapes/d.yaml",
                        splits + "names: [a]\nkpt_shape: [2, 3]\nflip_idx: [0, 5]\n"),
       pose, 2, "'flip_idx' must be a permutation of 0..1"},
      {"dataset path missing",
       txt_dataset_with("shapes/d.yaml",
                        "path: nowhere\ntrain: images/train\nval: images/val\nnames: [a]\n"),
       fit, 2, "d.yaml:2: dataset 'train' path not found"},
      {"dataset train list missing",
       txt_dataset_with("shapes/d.yaml", "path: .\ntrain: list.txt\nval: images/val\nnames: [a]\n"),
       fit, 2, "list.txt"},
      {"val of a dataset whose val path is missing",
       txt_dataset_with("shapes/d.yaml",
                        "path: .\ntrain: images/train\nval: images/none\nnames: [a]\n"),
       "data check shapes/d.yaml", 2, "d.yaml:3: dataset 'val' path not found"},
  });
}

TEST_CASE("bad-input corpus (CLI): labels and COCO json that would train wrong, file by file") {
  const std::string txt = std::string("fit data=shapes/txt.yaml") + kShortFit;
  const std::string coco = std::string("fit data=shapes/synthetic.yaml") + kShortFit;
  const std::string none = "no usable images in the train split";
  check_all({
      {"labels in hexadecimal", txt_labels("0 0x1p-1 0.5 0.2 0.2\n"), txt, 2,
       "'0x1p-1' (hexadecimal floats are not label values) (image skipped)"},
      {"labels nan", txt_labels("0 nan 0.5 0.2 0.2\n"), txt, 2, "is not a number: 'nan'"},
      {"labels of 4 values", txt_labels("0 0.5 0.5 0.2\n"), txt, 2,
       "expected 5 values (class cx cy w h), got 4"},
      {"labels in pixels", txt_labels("0 32 32 10 10\n"), txt, 2, "(not normalised?)"},
      {"labels with a negative class", txt_labels("-1 0.5 0.5 0.2 0.2\n"), txt, 2,
       "class '-1' is not a non-negative integer"},
      {"labels with a fractional class", txt_labels("0.5 0.5 0.5 0.2 0.2\n"), txt, 2,
       "class '0.5' is not a non-negative integer"},
      {"labels of boxes for a pose model",
       [](const fs::path& d) {
         txt_labels("0 0.5 0.5 0.2 0.2\n")(d);
         write_text(d / "shapes/p.yaml",
                    "path: .\ntrain: images/train\nval: images/val\nnames: [a, b, c, d, e, f]\n"
                    "kpt_shape: [17, 3]\n");
       },
       std::string("fit data=shapes/p.yaml model=yolo26n-pose") + kShortFit, 2,
       "expected 56 values (class cx cy w h + 17 x 3 keypoint values), got 5"},
      {"images that are text",
       [](const fs::path& d) {
         copy_txt_dataset(d);
         for (const auto& image : fs::directory_iterator(d / "shapes/images/train"))
           write_text(image.path(), "not an image");
       },
       txt, 2, "cannot decode image"},
      {"val folder empty",
       [](const fs::path& d) {
         copy_txt_dataset(d);
         for (const auto& image : fs::directory_iterator(d / "shapes/images/val"))
           fs::remove(image.path());
       },
       "fit data=shapes/txt.yaml epochs=1 imgsz=64 batch=2 workers=0", 2,
       "images/val: no images found"},
      {"COCO images not a list", coco_train_json([](nlohmann::json& j) {
         j["images"] = {{"a", 1}};
       }),
       coco, 2, "instances_train.json: \"images\" is not an array"},
      {"COCO unknown category",
       coco_train_json([](nlohmann::json& j) { j["annotations"][0]["category_id"] = 999; }), coco,
       2, "annotation id 1: unknown category_id 999"},
      {"COCO image id twice",
       coco_train_json([](nlohmann::json& j) { j["images"].push_back(j["images"][0]); }), coco, 2,
       "duplicate image id 0"},
      {"COCO bbox a string",
       coco_train_json([](nlohmann::json& j) { j["annotations"][0]["bbox"] = "x"; }), coco, 2,
       "\"bbox\" must be [x, y, w, h], got \"x\""},
      {"COCO unknown image",
       coco_train_json([](nlohmann::json& j) { j["annotations"][0]["image_id"] = 12345; }), coco, 2,
       "annotation id 1: unknown image_id 12345"},
      {"COCO images not on disk", coco_train_json([](nlohmann::json& j) {
         for (auto& image : j["images"])
           image["file_name"] = "gone_" + image["file_name"].get<std::string>();
       }),
       coco, 2, none + " (0 images, 0 backgrounds, 4 corrupt, 0 boxes):\n  "},
      {"COCO json empty",
       [](const fs::path& d) {
         copy_dataset(d);
         write_text(d / "shapes/annotations/instances_train.json", "");
       },
       coco, 2, "instances_train.json: the file is empty (a json document was expected)"},
  });
}

TEST_CASE("bad-input corpus (CLI): more paths, weights files and results files") {
  const fs::path run = fs::path(trained_weights()).parent_path();
  const std::string w = " weights=" + trained_weights();
  const std::string gt = "shapes/annotations/instances_val.json";
  const auto results = [](const std::string& text) {
    return [text](const fs::path& d) {
      copy_dataset(d);
      write_text(d / "r.json", text);
    };
  };
  check_all({
      {"fit project is a file", txt_dataset_with("afile", "x"),
       std::string("fit data=shapes/txt.yaml project=afile") + kShortFit, 2,
       "cannot create run folder afile: Not a directory (afile is a file, not a folder)"},
      {"fit project under a file", txt_dataset_with("afile", "x"),
       std::string("fit data=shapes/txt.yaml project=afile/runs") + kShortFit, 2,
       "(afile is a file, not a folder)"},
      {"predict project is a file", txt_dataset_with("afile", "x"),
       "predict" + w + " source=shapes/images/val project=afile", 2,
       "(afile is a file, not a folder)"},
      {"val of a checkpoint cut short",
       [run](const fs::path& d) {
         copy_txt_dataset(d);
         cut_copy((run / "last.ckpt").string(), "cut.ckpt", 3000)(d);
       },
       "val data=shapes/txt.yaml weights=cut.ckpt", 2, "cut.ckpt: not a readable checkpoint"},
      {"predict weights empty",
       [](const fs::path& d) {
         copy_txt_dataset(d);
         write_text(d / "w.pt", "");
       },
       "predict weights=w.pt source=shapes/images/val", 2, "w.pt is not a torch.save file"},
      {"predict weights cut short",
       [](const fs::path& d) {
         copy_txt_dataset(d);
         cut_copy(trained_weights(), "w.pt", 5000)(d);
       },
       "predict weights=w.pt source=shapes/images/val", 2, "w.pt is not a torch.save file"},
      {"eval results not a list", results("{\"a\": 1}"), "eval " + gt + " r.json", 2,
       "r.json: the top level is not a list of detections"},
      {"eval results of an unknown image",
       results(R"([{"image_id": 999, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 0.5}])"),
       "eval " + gt + " r.json", 2, "unknown image_id 999 (not in the ground truth)"},
      {"eval results with a 3-number bbox",
       results(R"([{"image_id": 0, "category_id": 1, "bbox": [1, 2, 3], "score": 0.5}])"),
       "eval " + gt + " r.json", 2, "\"bbox\" must be [x, y, w, h]"},
      {"data check of a missing yaml", nullptr, "data check none.yaml", 2,
       "dataset yaml not found: none.yaml"},
      {"info of a missing model yaml", nullptr, "info model=my.yaml", 2,
       "model yaml not found: my.yaml"},
  });
}

TEST_CASE("bad-input corpus (CLI): predict and val options and sources") {
  const std::string w = " weights=" + trained_weights();
  const std::string val_images = " source=shapes/images/val";
  check_all({
      {"predict glob matching nothing", copy_dataset, "predict" + w + " 'source=shapes/*.png'", 2,
       "source shapes/*.png: no file matches"},
      {"predict list naming a missing file", file("l.txt", "nothere.jpg\n"),
       "predict" + w + " source=l.txt", 2, "l.txt:1: source nothere.jpg: no such file or folder"},
      {"predict list empty", file("l.txt", ""), "predict" + w + " source=l.txt", 2,
       "no images or videos found"},
      {"predict imgsz under 32", copy_dataset, "predict" + w + val_images + " imgsz=31", 2,
       "predict: imgsz=31: expected a value in [32, 8192]"},
      {"predict conf over 1", copy_dataset, "predict" + w + val_images + " conf=2", 2,
       "predict: conf=2: expected a value in [0, 1]"},
      {"predict conf nan", copy_dataset, "predict" + w + val_images + " conf=nan", 2,
       "predict: conf=nan: expected a number"},
      {"predict vid_stride 0", copy_dataset, "predict" + w + val_images + " vid_stride=0", 2,
       "vid_stride=0: expected a value in [1, "},
      {"predict misspelt key", copy_dataset, "predict" + w + val_images + " saveconf=true", 2,
       "unknown key 'saveconf' (did you mean 'save_conf'?)"},
      {"val misspelt key", nullptr, "val" + w + " confidence=0.1", 2, "unknown key 'confidence'"},
  });
}
