// The generated bad-input corpus indexed in process (also under AddressSanitizer/UBSan in the
// sanitizer build): every problem named with its file, the good part kept, every broken dataset
// a clear error naming the culprit, and the loader runs an epoch over what is left.
#include <doctest/doctest.h>

#include "bad_input_corpus.h"
#include "core/error.h"
#include "data/dataset.h"
#include "data/dataset_yaml.h"
#include "data/loader.h"
#include "data_test_util.h"

using namespace trainer::data;
using trainer::test::TempDir;

namespace {

LoadOptions quiet_no_cache() {
  LoadOptions o;
  o.use_cache = false;
  o.log = false;
  return o;
}

std::string load_error(const std::filesystem::path& yaml, Split split) {
  try {
    load_split(load_dataset_yaml(yaml), split, quiet_no_cache());
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("bad-input corpus: each problem is named with its file and the good part is indexed") {
  TempDir dir;
  const auto corpus = trainer::test::make_bad_input_corpus(dir.path());
  const DatasetIndex index =
      load_split(load_dataset_yaml(corpus.data_yaml), Split::kTrain, quiet_no_cache());
  CHECK(index.stats.images == corpus.usable_train_images);
  CHECK(index.stats.corrupt == corpus.corrupt_train_images);
  const auto& problems = index.stats.problems;
  for (const auto& expected : corpus.train_problems) {
    const std::string file = expected.file.string();
    INFO(file << ": " << expected.reason);
    int found = 0;
    for (const auto& p : problems) {
      if (p.rfind(file + ":", 0) == 0 && p.find(expected.reason) != std::string::npos) ++found;
    }
    CHECK(found == 1);
  }
  CHECK(problems.size() == corpus.train_problems.size());
  // The odd-but-readable images decode to their real sizes.
  for (const auto& item : index.items) {
    INFO(item.image.string());
    CHECK(item.width >= 32);
    CHECK(item.height >= 30);
  }
}

TEST_CASE(
    "bad-input corpus: empty and all-corrupt splits, malformed yaml and json are clear errors") {
  TempDir dir;
  const auto corpus = trainer::test::make_bad_input_corpus(dir.path());
  const std::string empty = load_error(corpus.data_yaml, Split::kTest);
  CHECK(empty.find((dir / "images/empty").string() + ": no images found") != std::string::npos);
  const std::string all_corrupt = load_error(corpus.all_corrupt_yaml, Split::kTrain);
  CHECK(all_corrupt.find("no usable images in the train split") != std::string::npos);
  CHECK(all_corrupt.find("0 images, 0 backgrounds, 2 corrupt") != std::string::npos);
  for (const auto& broken : corpus.broken_datasets) {
    const std::string error = load_error(broken.yaml, Split::kTrain);
    INFO(broken.yaml.string() << " -> " << error);
    CHECK(error.find(broken.culprit.string()) != std::string::npos);
    CHECK(error.find(broken.reason) != std::string::npos);
  }
}

TEST_CASE("bad-input corpus: the loader runs an epoch of mosaics over the good part") {
  TempDir dir;
  const auto corpus = trainer::test::make_bad_input_corpus(dir.path());
  const DatasetIndex index =
      load_split(load_dataset_yaml(corpus.data_yaml), Split::kTrain, quiet_no_cache());
  LoaderOptions options;
  options.imgsz = 64;
  options.batch = 4;
  options.workers = 2;
  options.augment = true;
  Loader loader(index, options);
  trainer::test::LogCapture log;
  loader.start_epoch(0, /*mosaic=*/true);
  int64_t images = 0;
  while (auto batch = loader.next()) images += batch->images.size(0);
  CHECK(images == static_cast<int64_t>(index.size()));
  CHECK(loader.unreadable_images() == 0);
  CHECK(log.count("another image takes its place") == 0);
}
