// What source= resolves to: one file, a folder (sorted, images and videos only), a glob, a .txt
// list relative to its folder, paths with glob characters; and the errors for a missing path, a
// source without images, a bad list entry (with its line) or a path stat refuses.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <string>

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

TEST_CASE("source: ** matches zero or more folders, as Python's recursive glob and globstar") {
  test::TempDir dir;
  for (const char* name : {"top.jpg", "x/a.jpg", "x/y/b.jpg", "x/y/c.png", ".hidden/h.jpg"}) {
    test::write_text(dir / "data" / name, "x");
  }
  const auto paths = [](const std::vector<predict::SourceFile>& files, const fs::path& root) {
    std::vector<std::string> out;
    for (const auto& f : files) out.push_back(fs::relative(f.path, root).string());
    return out;
  };
  const fs::path data = dir / "data";
  CHECK(paths(resolve_source((data / "**" / "*.jpg").string()), data) ==
        std::vector<std::string>{"top.jpg", "x/a.jpg", "x/y/b.jpg"});
  CHECK(paths(resolve_source((data / "**").string()), data) ==
        std::vector<std::string>{"top.jpg", "x/a.jpg", "x/y/b.jpg", "x/y/c.png"});
  CHECK(paths(resolve_source((data / "x" / "**" / "b.*").string()), data) ==
        std::vector<std::string>{"x/y/b.jpg"});
  // Not a whole component: glob(3)'s two stars, one folder level.
  CHECK(paths(resolve_source((data / "x" / "y" / "**g").string()), data) ==
        std::vector<std::string>{"x/y/b.jpg", "x/y/c.png"});
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

TEST_CASE("source: a list's text, entries with their lines, BOM, CRLF and blank lines") {
  const auto entries = predict::parse_source_list(
      "\xEF\xBB\xBF"
      "a.jpg\r\n\r\n  \nimgs/*.png \t\nlast",
      "l.txt");
  REQUIRE(entries.size() == 3);
  CHECK(entries[0].path == "a.jpg");
  CHECK(entries[0].line == 1);
  CHECK(entries[1].path == "imgs/*.png");
  CHECK(entries[1].line == 4);
  CHECK(entries[2].path == "last");
  CHECK(entries[2].line == 5);
  CHECK(predict::parse_source_list("", "l.txt").empty());
  CHECK_THROWS_WITH_AS(predict::parse_source_list(std::string("a.jpg\nb\0c\n", 10), "l.txt"),
                       doctest::Contains("l.txt:2: a NUL byte"), core::InputError);
}

TEST_CASE("source: a wrong entry of a list is named with the list's file and line") {
  test::TempDir dir;
  test::write_text(dir / "a.jpg", "x");
  test::write_text(dir / "bad.txt", "a.jpg\n\nmissing.jpg\n");
  const std::string where = (dir / "bad.txt").string() + ":3: source " +
                            (dir / "missing.jpg").string() + ": no such file";
  CHECK_THROWS_WITH_AS(resolve_source((dir / "bad.txt").string()), doctest::Contains(where.c_str()),
                       core::InputError);
  // A list saved by Windows Notepad: a byte-order mark before the first path.
  test::write_text(dir / "bom.txt",
                   "\xEF\xBB\xBF"
                   "a.jpg\r\n");
  CHECK(names_of(resolve_source((dir / "bom.txt").string())) == std::vector<std::string>{"a.jpg"});
}

TEST_CASE("source: paths with glob characters that exist are themselves") {
  test::TempDir dir;
  test::write_text(dir / "set[1]" / "d.jpg", "x");
  test::write_text(dir / "set1" / "other.jpg", "x");  // what set[1] would match as a pattern
  CHECK(names_of(resolve_source((dir / "set[1]").string())) == std::vector<std::string>{"d.jpg"});
  // A list in that folder: its patterns apply inside it, the folder's name is not one.
  test::write_text(dir / "set[1]" / "list.txt", "*.jpg\n");
  CHECK(names_of(resolve_source((dir / "set[1]" / "list.txt").string())) ==
        std::vector<std::string>{"d.jpg"});
  // A pattern is still a pattern.
  CHECK(names_of(resolve_source((dir / "set[1]" / "*.jpg").string())) ==
        std::vector<std::string>{"other.jpg"});
}

TEST_CASE("source: a name too long and a path that is no regular file are input errors") {
  test::TempDir dir;
  CHECK_THROWS_AS(resolve_source((dir / (std::string(300, 'x') + ".jpg")).string()),
                  core::InputError);
  test::write_text(dir / "long.txt", std::string(300, 'x') + ".jpg\n");
  CHECK_THROWS_WITH_AS(resolve_source((dir / "long.txt").string()),
                       doctest::Contains("long.txt:1: source "), core::InputError);
  // A FIFO named like an image would block the reader forever.
  REQUIRE(::mkfifo((dir / "pipe.jpg").c_str(), 0600) == 0);
  CHECK_THROWS_WITH_AS(resolve_source((dir / "pipe.jpg").string()),
                       doctest::Contains("pipe.jpg: not a regular file"), core::InputError);
}
