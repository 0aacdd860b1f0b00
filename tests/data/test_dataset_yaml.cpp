// The Ultralytics dataset yaml: names as list or map, path rules, env expansion, errors.
#include <doctest/doctest.h>

#include <cstdlib>

#include "core/error.h"
#include "data/dataset_yaml.h"
#include "test_support.h"

using namespace trainer::data;
using trainer::core::ConfigError;
using trainer::test::TempDir;
using trainer::test::write_text;

TEST_CASE("names as a map, path relative to the yaml, splits relative to the root") {
  TempDir dir;
  std::filesystem::create_directories(dir / "sets/d/images/train");
  std::filesystem::create_directories(dir / "sets/d/images/val");
  write_text(
      dir / "cfg/d.yaml",
      "path: ../sets/d\ntrain: images/train\nval: [images/val]\nnames:\n  0: cat\n  1: dog\n");
  const auto spec = load_dataset_yaml(dir / "cfg/d.yaml");
  CHECK(spec.root == (dir.path() / "sets/d").lexically_normal());
  REQUIRE(spec.train.size() == 1);
  CHECK(spec.train[0] == (dir.path() / "sets/d/images/train").lexically_normal());
  CHECK(spec.val.size() == 1);
  CHECK(spec.nc() == 2);
  CHECK(spec.names[1] == "dog");
  CHECK_FALSE(spec.kpt_shape.has_value());
}

TEST_CASE("environment expansion with defaults") {
  ::setenv("TRAINER_TEST_ROOT", "/mnt/x", 1);
  CHECK(expand_env("${TRAINER_TEST_ROOT}/coco") == "/mnt/x/coco");
  CHECK(expand_env("${TRAINER_TEST_UNSET_VAR:-/fallback}/coco") == "/fallback/coco");
  CHECK_THROWS_WITH(expand_env("${TRAINER_TEST_UNSET_VAR}/a"),
                    "environment variable TRAINER_TEST_UNSET_VAR is not set (used in "
                    "'${TRAINER_TEST_UNSET_VAR}/a')");
  ::unsetenv("TRAINER_TEST_ROOT");
}

TEST_CASE("bad dataset yamls name the file, line and problem") {
  TempDir dir;
  CHECK_THROWS_WITH_AS(load_dataset_yaml(dir / "none.yaml"),
                       ("dataset yaml not found: " + (dir / "none.yaml").string()).c_str(),
                       ConfigError);
  write_text(dir / "gap.yaml", "train: .\nval: .\nnames:\n  0: a\n  2: c\n");
  CHECK_THROWS_WITH_AS(
      load_dataset_yaml(dir / "gap.yaml"),
      ((dir / "gap.yaml").string() + ":4: 'names' ids must be 0..nc-1 without gaps; missing id 1")
          .c_str(),
      ConfigError);
  write_text(dir / "missing.yaml", "train: images/nope\nval: .\nnames: [a]\n");
  CHECK_THROWS_WITH_AS(load_dataset_yaml(dir / "missing.yaml"),
                       ((dir / "missing.yaml").string() + ":1: dataset 'train' path not found: " +
                        (dir.path() / "images/nope").string())
                           .c_str(),
                       ConfigError);
  write_text(dir / "nonames.yaml", "train: .\nval: .\n");
  CHECK_THROWS_WITH_AS(load_dataset_yaml(dir / "nonames.yaml"),
                       ((dir / "nonames.yaml").string() + ": missing key 'names'").c_str(),
                       ConfigError);
  write_text(dir / "nc.yaml", "train: .\nval: .\nnc: 3\nnames: [a, b]\n");
  CHECK_THROWS_WITH_AS(load_dataset_yaml(dir / "nc.yaml"),
                       ((dir / "nc.yaml").string() + ":3: 'nc' is 3 but 'names' has 2").c_str(),
                       ConfigError);
}

TEST_CASE("a dataset yaml with a key twice, or a value of the wrong type, names key and line") {
  TempDir dir;
  write_text(dir / "twice.yaml", "train: a\nval: .\nnames: [a]\ntrain: .\n");
  CHECK_THROWS_WITH_AS(
      load_dataset_yaml(dir / "twice.yaml"),
      ((dir / "twice.yaml").string() + ":4: key 'train' is given twice (first at line 1); keep one")
          .c_str(),
      ConfigError);
  write_text(dir / "nc.yaml", "train: .\nval: .\nnc: abc\nnames: [a]\n");
  CHECK_THROWS_WITH_AS(load_dataset_yaml(dir / "nc.yaml"),
                       ((dir / "nc.yaml").string() +
                        ":3: 'nc' must be an integer (the number of classes), got 'abc'")
                           .c_str(),
                       ConfigError);
  write_text(dir / "flip.yaml",
             "train: .\nval: .\nnames: [a]\nkpt_shape: [2, 3]\nflip_idx: [1, x]\n");
  CHECK_THROWS_WITH_AS(load_dataset_yaml(dir / "flip.yaml"),
                       ((dir / "flip.yaml").string() +
                        ":5: 'flip_idx' must be a list of keypoint indices (integers), got 'x'")
                           .c_str(),
                       ConfigError);
  write_text(dir / "kpt.yaml", "train: .\nval: .\nnames: [a]\nkpt_shape: [seventeen, 3]\n");
  CHECK_THROWS_WITH_AS(load_dataset_yaml(dir / "kpt.yaml"),
                       ((dir / "kpt.yaml").string() +
                        ":4: 'kpt_shape' must be [keypoints, dims] of integers, e.g. 'kpt_shape: "
                        "[17, 3]', got 'seventeen'")
                           .c_str(),
                       ConfigError);
  // An editor's byte-order mark is not part of the first key.
  write_text(dir / "bom.yaml", "\xEF\xBB\xBFtrain: .\nval: .\nnames: [a]\n");
  CHECK(load_dataset_yaml(dir / "bom.yaml").names.size() == 1);
}

TEST_CASE("the shared coco8 and coco8-pose yamls written the Ultralytics way load") {
  TRAINER_SKIP_IF_NO_SHARED_DATA(coco8, "coco8");
  TempDir dir;
  write_text(dir / "coco8.yaml", "path: " + coco8->string() +
                                     "\ntrain: images/train\nval: images/val\nnames:\n  0: person\n"
                                     "  1: bicycle\n");
  const auto spec = load_dataset_yaml(dir / "coco8.yaml");
  CHECK(spec.train[0] == *coco8 / "images/train");
  TRAINER_SKIP_IF_NO_SHARED_DATA(pose, "coco8-pose");
  write_text(dir / "pose.yaml", "path: " + pose->string() +
                                    "\ntrain: images/train\nval: images/val\nkpt_shape: [17, 3]\n"
                                    "flip_idx: [0, 2, 1, 4, 3, 6, 5, 8, 7, 10, 9, 12, 11, 14, 13, "
                                    "16, 15]\nnames: [person]\n");
  const auto pose_spec = load_dataset_yaml(dir / "pose.yaml");
  REQUIRE(pose_spec.kpt_shape.has_value());
  CHECK((*pose_spec.kpt_shape)[0] == 17);
  CHECK(pose_spec.flip_idx.size() == 17);
  CHECK(pose_spec.flip_idx[1] == 2);
}

TEST_CASE("kpt_oks_sigmas: one positive value per keypoint, else a config error with the line") {
  TempDir dir;
  write_text(dir / "ok.yaml",
             "train: .\nval: .\nnames: [a]\nkpt_shape: [3, 3]\nkpt_oks_sigmas: [0.1, 0.2, 0.05]\n");
  const auto spec = load_dataset_yaml(dir / "ok.yaml");
  REQUIRE(spec.kpt_oks_sigmas.size() == 3);
  CHECK(spec.kpt_oks_sigmas[1] == doctest::Approx(0.2));
  write_text(dir / "short.yaml",
             "train: .\nval: .\nnames: [a]\nkpt_shape: [3, 3]\nkpt_oks_sigmas: [0.1, 0.2]\n");
  CHECK_THROWS_WITH_AS(load_dataset_yaml(dir / "short.yaml"),
                       ((dir / "short.yaml").string() +
                        ":5: 'kpt_oks_sigmas' must list 3 positive values (one per keypoint of "
                        "kpt_shape)")
                           .c_str(),
                       ConfigError);
  write_text(dir / "zero.yaml",
             "train: .\nval: .\nnames: [a]\nkpt_shape: [2, 2]\nkpt_oks_sigmas: [0.1, 0]\n");
  CHECK_THROWS_WITH_AS(load_dataset_yaml(dir / "zero.yaml"),
                       doctest::Contains("'kpt_oks_sigmas' values must be positive and finite"),
                       ConfigError);
}
