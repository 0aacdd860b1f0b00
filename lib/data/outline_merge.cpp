// Joining an object's polygons; see outline_merge.h.
// Tested by tests/data/test_outlines.cpp: merge_outlines joins two squares at closest corners (by
//   hand).
#include "data/outline_merge.h"

#include <algorithm>
#include <array>
#include <limits>
#include <utility>

namespace trainer::data {
namespace {

using Point = std::array<double, 2>;
using Ring = std::vector<Point>;

// The first (row-major) pair of vertices at the smallest squared distance (np.argmin).
std::pair<size_t, size_t> closest_pair(const Ring& a, const Ring& b) {
  double best = std::numeric_limits<double>::infinity();
  std::pair<size_t, size_t> at{0, 0};
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t j = 0; j < b.size(); ++j) {
      const double dx = a[i][0] - b[j][0], dy = a[i][1] - b[j][1];
      const double d = dx * dx + dy * dy;
      if (d < best) best = d, at = {i, j};
    }
  }
  return at;
}

}  // namespace

std::vector<double> merge_outlines(const std::vector<std::vector<double>>& polygons) {
  if (polygons.size() == 1) return polygons.front();
  std::vector<Ring> rings;
  for (const auto& flat : polygons) {
    Ring& r = rings.emplace_back();
    for (size_t k = 0; k + 1 < flat.size(); k += 2) r.push_back({flat[k], flat[k + 1]});
  }
  const size_t n = rings.size();
  // links[i]: polygon i's vertex linked to the previous polygon (if any), then to the next one.
  std::vector<std::vector<size_t>> links(n);
  for (size_t i = 1; i < n; ++i) {
    const auto [a, b] = closest_pair(rings[i - 1], rings[i]);
    links[i - 1].push_back(a);
    links[i].push_back(b);
  }
  std::vector<Ring> parts;
  // Out: every ring rotated to start at its first link and closed; the first and last polygons
  // whole, the middle ones from the first link to the second (reversed when that is shorter
  // going backwards).
  for (size_t i = 0; i < n; ++i) {
    std::vector<size_t> idx = links[i];
    Ring& r = rings[i];
    if (idx.size() == 2 && idx[0] > idx[1]) {
      for (auto& x : idx) x = r.size() - 1 - x;
      std::reverse(r.begin(), r.end());
    }
    std::rotate(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(idx[0]), r.end());
    r.push_back(r.front());
    if (i == 0 || i == n - 1) {
      parts.push_back(r);
    } else {
      const size_t end = idx[1] - idx[0];
      parts.emplace_back(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(end + 1));
    }
  }
  // Back: the rest of each middle polygon, last to first.
  for (size_t i = n; i-- > 0;) {
    if (i == 0 || i == n - 1) continue;
    const size_t a = links[i][0], b = links[i][1];
    const size_t skip = a > b ? a - b : b - a;
    parts.emplace_back(rings[i].begin() + static_cast<std::ptrdiff_t>(skip), rings[i].end());
  }
  std::vector<double> out;
  for (const Ring& r : parts) {
    for (const Point& p : r) out.insert(out.end(), {p[0], p[1]});
  }
  return out;
}

}  // namespace trainer::data
