// A user's file path: missing and "a folder" are told apart, and a run folder names its weights.
#include <doctest/doctest.h>

#include "core/error.h"
#include "core/file_checks.h"
#include "test_support.h"

using trainer::core::require_file;

TEST_CASE("require_file: missing, a folder, a run folder, a file") {
  trainer::test::TempDir dir;
  CHECK_THROWS_WITH_AS(require_file(dir / "w.pt", "weights file", " (hint)"),
                       ("weights file not found: " + (dir / "w.pt").string() + " (hint)").c_str(),
                       trainer::core::ConfigError);
  CHECK_THROWS_WITH_AS(require_file(dir.path(), "resume"),
                       ("resume: " + dir.path().string() + " is a folder, not a file").c_str(),
                       trainer::core::ConfigError);
  trainer::test::write_text(dir / "weights" / "last.ckpt", "x");
  CHECK_THROWS_WITH_AS(
      require_file(dir.path(), "resume"),
      ("resume: " + dir.path().string() + " is a folder, not a file (a run folder: did you mean " +
       (dir / "weights" / "last.ckpt").string() + "?)")
          .c_str(),
      trainer::core::ConfigError);
  CHECK_NOTHROW(require_file(dir / "weights" / "last.ckpt", "resume"));
}
