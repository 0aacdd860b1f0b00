// Output names: one stem per source, de-duplicated as <stem>_2, <stem>_3, ... in source order,
// apart from a video's <stem>_<frame> labels; and the refusal to write over a source.
#include <doctest/doctest.h>

#include "core/error.h"
#include "predict/output_names.h"
#include "test_support.h"

using namespace trainer;
using predict::SourceFile;
using predict::SourceKind;
namespace fs = std::filesystem;

namespace {
SourceFile image(const std::string& path) {
  return {path, SourceKind::kImage};
}
SourceFile video(const std::string& path) {
  return {path, SourceKind::kVideo};
}
}  // namespace

TEST_CASE("output names: one stem per source, the later ones numbered") {
  CHECK(predict::output_stems(
            {image("a/img.jpg"), image("b/img.jpg"), image("c/img.png"), image("d/other.jpg")}) ==
        std::vector<std::string>{"img", "img_2", "img_3", "other"});
  // A source already named like a numbered one: the next free number.
  CHECK(predict::output_stems({image("a/img_2.jpg"), image("b/img.jpg"), image("c/img.jpg")}) ==
        std::vector<std::string>{"img_2", "img", "img_3"});
  // Case matters (Linux file names), and a stem with dots keeps them.
  CHECK(predict::output_stems(
            {image("a/IMG.jpg"), image("b/img.jpg"), image("c/x.v2.jpg"), image("d/x.v2.png")}) ==
        std::vector<std::string>{"IMG", "img", "x.v2", "x.v2_2"});
}

TEST_CASE("output names: a video's frame labels and an image stem exclude each other") {
  // clip.avi writes labels clip_1.txt, clip_2.txt, ...: clip_3.jpg would meet its frame 3.
  CHECK(predict::output_stems({video("v/clip.avi"), image("i/clip_3.jpg")}) ==
        std::vector<std::string>{"clip", "clip_3_2"});
  CHECK(predict::output_stems({image("i/clip_3.jpg"), video("v/clip.avi")}) ==
        std::vector<std::string>{"clip_3", "clip_2"});
  // Frame numbers have no leading zero, so clip_03 meets nothing; a video beside a video is
  // apart by its .mp4 and its labels (clip_3_1, ... against clip_1, ...).
  CHECK(
      predict::output_stems({video("v/clip.avi"), image("i/clip_03.jpg"), video("w/clip_3.mp4")}) ==
      std::vector<std::string>{"clip", "clip_03", "clip_3"});
  CHECK(predict::output_stems({video("v/clip.avi"), video("w/clip.mp4")}) ==
        std::vector<std::string>{"clip", "clip_2"});
}

TEST_CASE("output names: the annotated copy of an image keeps its suffix, a video becomes mp4") {
  CHECK(predict::annotated_output(image("a/img.PNG"), "img_2", "runs/p") ==
        fs::path("runs/p/img_2.PNG"));
  CHECK(predict::annotated_output(video("a/clip.avi"), "clip", "runs/p") ==
        fs::path("runs/p/clip.mp4"));
}

TEST_CASE("output names: a run folder that holds a source is refused, by file identity") {
  test::TempDir dir;
  test::write_text(dir / "imgs" / "a.jpg", "original");
  test::write_text(dir / "imgs" / "b.jpg", "original");
  const std::vector<SourceFile> sources = {image((dir / "imgs" / "a.jpg").string()),
                                           image((dir / "imgs" / "b.jpg").string())};
  const auto stems = predict::output_stems(sources);
  const std::string over_a = "over the source " + (dir / "imgs" / "a.jpg").string();
  CHECK_THROWS_WITH_AS(predict::check_outputs_spare_sources(sources, stems, dir / "imgs"),
                       doctest::Contains(over_a.c_str()), core::ConfigError);
  // The same folder through a symlink, and through a spelling with "." in it.
  fs::create_directory_symlink(dir / "imgs", dir / "link");
  CHECK_THROWS_AS(predict::check_outputs_spare_sources(sources, stems, dir / "link"),
                  core::ConfigError);
  CHECK_THROWS_AS(predict::check_outputs_spare_sources(sources, stems, dir / "imgs" / "."),
                  core::ConfigError);
  // A hard link to a source under an output's name elsewhere.
  fs::create_directories(dir / "out");
  fs::create_hard_link(dir / "imgs" / "b.jpg", dir / "out" / "b.jpg");
  const std::string over_b = "over the source " + (dir / "imgs" / "b.jpg").string();
  CHECK_THROWS_WITH_AS(predict::check_outputs_spare_sources(sources, stems, dir / "out"),
                       doctest::Contains(over_b.c_str()), core::ConfigError);
  // A reused folder with files of the same names that are not sources: they are outputs to
  // replace (exist_ok=true), not originals.
  fs::remove(dir / "out" / "b.jpg");
  test::write_text(dir / "out" / "a.jpg", "an earlier prediction");
  CHECK_NOTHROW(predict::check_outputs_spare_sources(sources, stems, dir / "out"));
  CHECK_NOTHROW(predict::check_outputs_spare_sources(sources, stems, dir / "new"));
}
