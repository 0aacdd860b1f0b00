// What source= resolves to: one file, a folder (sorted, images and videos only), a glob, a .txt
// list relative to its folder; and the errors for a missing path or a source without images.
#include <doctest/doctest.h>

#include "core/error.h"
#include "predict/source.h"
#include "test_support.h"

using namespace trainer;
using predict::resolve_source;
using predict::SourceKind;
namespace fs = std::filesystem;

namespace {
std::vector<std::string> names_of(const std::vector<predict::SourceFile>& files) {
  std::vector<std::string> out;
  for (const auto& f : files) out.push_back(f.path.filename().string());
  return out;
}
}  // namespace

TEST_CASE("source: an image, a folder, a glob and a txt list") {
  test::TempDir dir;
  fs::create_directories(dir / "imgs" / "sub");
  for (const char* name : {"b.jpg", "a.png", "c.JPG", "notes.md", "clip.avi", "sub/d.jpg"}) {
    test::write_text(dir.path() / "imgs" / name, "x");
  }
  const auto one = resolve_source((dir / "imgs" / "a.png").string());
  REQUIRE(one.size() == 1);
  CHECK(one[0].kind == SourceKind::kImage);

  const auto folder = resolve_source((dir / "imgs").string());
  CHECK(names_of(folder) == std::vector<std::string>{"a.png", "b.jpg", "c.JPG", "clip.avi"});
  CHECK(folder[3].kind == SourceKind::kVideo);

  const auto glob = resolve_source((dir / "imgs" / "*.jpg").string());
  CHECK(names_of(glob) == std::vector<std::string>{"b.jpg"});

  test::write_text(dir / "list.txt",
                   "imgs/sub/d.jpg\n\n" + (dir / "imgs" / "a.png").string() + "\n");
  const auto list = resolve_source((dir / "list.txt").string());
  CHECK(names_of(list) == std::vector<std::string>{"d.jpg", "a.png"});
}

TEST_CASE("source: missing paths and sources without images are errors naming them") {
  test::TempDir dir;
  CHECK_THROWS_WITH_AS(resolve_source((dir / "nope.jpg").string()),
                       doctest::Contains("nope.jpg: no such file or folder"), core::InputError);
  fs::create_directories(dir / "empty");
  CHECK_THROWS_WITH_AS(resolve_source((dir / "empty").string()),
                       doctest::Contains("no images or videos found"), core::InputError);
  CHECK_THROWS_WITH_AS(resolve_source((dir / "empty" / "*.jpg").string()),
                       doctest::Contains("no file matches"), core::InputError);
  test::write_text(dir / "model.yaml", "x");
  CHECK_THROWS_WITH_AS(resolve_source((dir / "model.yaml").string()),
                       doctest::Contains("not an image or video"), core::InputError);
  test::write_text(dir / "bad.txt", "missing.jpg\n");
  CHECK_THROWS_WITH_AS(resolve_source((dir / "bad.txt").string()),
                       doctest::Contains("missing.jpg: no such file"), core::InputError);
}
