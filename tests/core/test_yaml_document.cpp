// Every yaml we read: a repeated key is refused with both lines, a byte-order mark is harmless,
// a syntax error names its line, and a bad value's key and text can be found from yaml-cpp's mark.
#include <doctest/doctest.h>

#include "core/error.h"
#include "core/yaml_document.h"
#include "test_support.h"

using trainer::core::parse_yaml_document;

namespace {

std::string error_of(const std::string& text) {
  try {
    parse_yaml_document(text, "d.yaml");
  } catch (const trainer::core::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("yaml document: a key given twice is refused with the key and both lines") {
  CHECK(error_of("epochs: 1\nbatch: 2\nepochs: 3\n") ==
        "d.yaml:3: key 'epochs' is given twice (first at line 1); keep one");
  // Inside a nested mapping, and inside a mapping in a list.
  CHECK(error_of("names:\n  0: a\n  1: b\n  0: c\n") ==
        "d.yaml:4: key '0' is given twice (first at line 2); keep one");
  CHECK(error_of("- {x: 1, x: 2}\n") ==
        "d.yaml:1: key 'x' is given twice (first at line 1); keep one");
  // The same key in two different mappings is fine.
  CHECK(error_of("a: {x: 1}\nb: {x: 2}\n").empty());
}

TEST_CASE("yaml document: a byte-order mark is dropped, a syntax error names its line") {
  const YAML::Node root = parse_yaml_document(
      "\xEF\xBB\xBF"
      "nc: 2\n",
      "d.yaml");
  CHECK(root["nc"].as<int>() == 2);
  CHECK(error_of("a: 1\nb: [1, 2\n").rfind("d.yaml:3: malformed YAML", 0) == 0);
}

TEST_CASE("yaml document: a file that is missing or a folder is a ConfigError") {
  trainer::test::TempDir dir;
  CHECK_THROWS_WITH_AS(trainer::core::load_yaml_file(dir.path()),
                       (dir.path().string() + " is a folder, not a yaml file").c_str(),
                       trainer::core::ConfigError);
  CHECK_THROWS_AS(trainer::core::load_yaml_file(dir / "none.yaml"), trainer::core::ConfigError);
  trainer::test::write_text(dir / "a.yaml", "x: 1\nx: 2\n");
  CHECK_THROWS_WITH_AS(trainer::core::load_yaml_file(dir / "a.yaml"),
                       ((dir / "a.yaml").string() + ":2: key 'x' is given twice (first at line "
                                                    "1); keep one")
                           .c_str(),
                       trainer::core::ConfigError);
}

TEST_CASE("yaml document: the key and the scalar behind a conversion error") {
  const YAML::Node root =
      parse_yaml_document("path: .\nnc: abc\nflip_idx:\n  - 0\n  - x\nnames: [a]\n", "d.yaml");
  YAML::Mark mark;
  try {
    root["flip_idx"].as<std::vector<int>>();
    FAIL("expected a conversion error");
  } catch (const YAML::Exception& e) {
    mark = e.mark;
  }
  CHECK(mark.line == 4);
  CHECK(trainer::core::top_level_key_at_line(root, mark.line + 1) == "flip_idx");
  CHECK(trainer::core::scalar_at_mark(root, mark) == "x");
  CHECK(trainer::core::top_level_key_at_line(root, 2) == "nc");
  CHECK(trainer::core::top_level_key_at_line(root, 1) == "path");
  CHECK(trainer::core::top_level_key_at_line(root, 6) == "names");
  CHECK(trainer::core::top_level_key_at_line(YAML::Node(), 1).empty());
}
