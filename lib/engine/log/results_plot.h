// results.png: one small line chart per results.csv column, as users expect next to the csv.
//
// Why: a glance at the curves answers "is it learning, is it overfitting, did the lr do what I
// meant" faster than reading numbers. Drawn with OpenCV (already a dependency), no plotting stack.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace trainer::engine {

// Draws every column except "epoch" and "time" against epoch into a grid of panels and writes a
// PNG. Returns false (and writes nothing) when there are no rows.
bool plot_results(const std::vector<std::string>& columns,
                  const std::vector<std::vector<double>>& rows, const std::filesystem::path& png);

}  // namespace trainer::engine
