// A dataset of every kind of bad input, generated at test time (never committed): broken and odd
// images, every kind of bad label line, malformed COCO json and YAML, a non-UTF-8 file name, an
// empty split, a split whose every image is corrupt.
//
// Why: the data issue promises that bad input is named (file and line), skipped, and never
// crashes. One generator feeds the in-process check (also run under AddressSanitizer/UBSan), the
// `trainer data check` CLI test and the fit-on-the-good-part test, so all three see the same
// corpus and the same expected problems.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace trainer::test {

struct ExpectedProblem {
  std::filesystem::path file;  // the image or label file the message must name
  std::string reason;          // a substring of the message
};

// A dataset yaml that must fail to load with a clear error naming the culprit file.
struct BrokenDataset {
  std::filesystem::path yaml;
  std::filesystem::path culprit;
  std::string reason;  // a substring of the error
};

struct BadInputCorpus {
  std::filesystem::path data_yaml;         // train: the mixed split, val: good images, test: empty
  std::filesystem::path all_corrupt_yaml;  // train: only corrupt images
  int usable_train_images = 0;
  int corrupt_train_images = 0;
  std::vector<ExpectedProblem> train_problems;
  std::vector<BrokenDataset> broken_datasets;
};

// Writes the corpus into `root` (an empty folder).
BadInputCorpus make_bad_input_corpus(const std::filesystem::path& root);

}  // namespace trainer::test
