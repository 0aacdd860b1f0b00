// Listing a split's images: symlinks are followed as `find -L` does, and a loop, a link to itself
// or a broken link is skipped with a warning instead of aborting the run.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "data/image_files.h"
#include "data_test_util.h"

namespace fs = std::filesystem;
using trainer::data::list_image_files;

TEST_CASE(
    "image files: symlinked folders are listed, loops and broken links are skipped and logged") {
  trainer::test::TempDir dir;
  const fs::path train = dir / "images" / "train";
  trainer::test::write_text(train / "a.jpg", "x");
  trainer::test::write_text(dir / "elsewhere" / "b.jpg", "x");
  fs::create_directory_symlink(dir / "elsewhere", train / "linked");
  fs::create_directory_symlink("..", train / "up");  // loops back to images/
  fs::create_symlink("self.jpg", train / "self.jpg");
  fs::create_symlink("nowhere.jpg", train / "broken.jpg");
  trainer::test::LogCapture log;
  const std::vector<fs::path> files = list_image_files({train});
  REQUIRE(files.size() == 2);
  CHECK(files[0] == train / "a.jpg");
  CHECK(files[1] == train / "linked" / "b.jpg");
  CHECK(log.count((train / "up").string() + ": skipped: a symlink to " +
                  fs::canonical(dir / "images").string() +
                  ", a folder it is already inside (a loop)") == 1);
  CHECK(log.count((train / "self.jpg").string() + ": skipped: ") == 1);
  CHECK(log.count((train / "broken.jpg").string() + ": skipped: a broken symlink") == 1);
}
