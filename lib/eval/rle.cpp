// COCO RLE operations; see rle.h. Where maskApi.c does its arithmetic in 32-bit unsigned or int,
// so does this file, so that rounding and wrapping land where they land there.
#include "eval/rle.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "eval/coco_match.h"

namespace trainer::eval {
namespace {

[[noreturn]] void invalid(const std::string& what) {
  throw std::invalid_argument(what);
}

// maskApi keeps a mask's size in unsigned longs; negative sizes never reach it.
void check_size(int height, int width) {
  if (height < 0 || width < 0) {
    invalid("RLE size " + std::to_string(height) + "x" + std::to_string(width) + " is negative");
  }
}

}  // namespace

Rle rle_encode(const uint8_t* mask, int height, int width) {
  check_size(height, width);
  const size_t h = static_cast<size_t>(height), w = static_cast<size_t>(width);
  // A run starts wherever a pixel differs from the one before it in column-major order: the pixel
  // above, or for the top row the bottom pixel of the column to the left (background before the
  // first). Rows are compared whole, in the caller's row-major layout, so a mask costs one pass
  // over contiguous memory; the starts are then ordered by column (counting sort; within a column
  // they come in row order).
  std::vector<std::pair<uint32_t, uint32_t>> starts;  // (x, y)
  std::vector<uint32_t> per_column(w + 1, 0);
  for (size_t y = 0; y < h; ++y) {
    const uint8_t* row = mask + y * w;
    const uint8_t* above = y > 0 ? row - w : nullptr;
    if (above && std::memcmp(row, above, w) == 0) continue;
    for (size_t x = 0; x < w; ++x) {
      const bool before = above ? above[x] != 0 : x > 0 && mask[(h - 1) * w + x - 1] != 0;
      if ((row[x] != 0) != before) {
        starts.emplace_back(static_cast<uint32_t>(x), static_cast<uint32_t>(y));
        ++per_column[x + 1];
      }
    }
  }
  for (size_t x = 0; x < w; ++x) per_column[x + 1] += per_column[x];
  std::vector<uint32_t> positions(starts.size());
  for (const auto& [x, y] : starts) {
    positions[per_column[x]++] = static_cast<uint32_t>(x * h + y);
  }
  Rle out{height, width, {}};
  out.counts.reserve(positions.size() + 1);
  uint32_t previous = 0;
  for (uint32_t position : positions) {
    out.counts.push_back(position - previous);
    previous = position;
  }
  out.counts.push_back(static_cast<uint32_t>(h * w) - previous);
  return out;
}

uint64_t rle_pixels(const Rle& rle) {
  uint64_t total = 0;
  for (uint32_t c : rle.counts) total += c;
  return total;
}

std::vector<uint8_t> rle_decode(const Rle& rle) {
  check_size(rle.height, rle.width);
  const size_t h = static_cast<size_t>(rle.height), w = static_cast<size_t>(rle.width);
  if (rle_pixels(rle) != static_cast<uint64_t>(h) * w) {
    invalid("RLE counts cover " + std::to_string(rle_pixels(rle)) + " pixels, not " +
            std::to_string(rle.height) + "x" + std::to_string(rle.width));
  }
  std::vector<uint8_t> mask(h * w, 0);
  size_t p = 0;  // column-major position
  for (size_t j = 0; j < rle.counts.size(); ++j) {
    const size_t end = p + rle.counts[j];
    if (j % 2 == 1) {
      for (size_t q = p; q < end; ++q) mask[(q % h) * w + q / h] = 1;
    }
    p = end;
  }
  return mask;
}

std::string rle_to_string(const Rle& rle) {
  std::string out;
  out.reserve(rle.counts.size() * 2);
  for (size_t i = 0; i < rle.counts.size(); ++i) {
    int64_t x = rle.counts[i];
    if (i > 2) x -= rle.counts[i - 2];
    for (bool more = true; more;) {
      int c = static_cast<int>(x & 0x1f);
      x >>= 5;  // arithmetic: the sign stays
      more = (c & 0x10) ? x != -1 : x != 0;
      if (more) c |= 0x20;
      out.push_back(static_cast<char>(c + 48));
    }
  }
  return out;
}

Rle rle_from_string(std::string_view s, int height, int width) {
  check_size(height, width);
  Rle out{height, width, {}};
  size_t numbers = 0;  // characters without the continuation bit end a number
  for (char c : s) numbers += ((static_cast<unsigned char>(c) - 48) & 0x20) == 0;
  out.counts.reserve(numbers);
  size_t p = 0;
  while (p < s.size()) {
    int64_t x = 0;
    int k = 0;
    for (bool more = true; more; ++k) {
      if (p >= s.size()) invalid("RLE string ends inside a number");
      if (k >= 8) invalid("RLE string holds a number beyond 32 bits");
      const int c = static_cast<unsigned char>(s[p++]) - 48;
      if (c < 0 || c > 63) invalid(std::string("RLE string holds '") + s[p - 1] + "'");
      x |= static_cast<int64_t>(c & 0x1f) << (5 * k);
      more = (c & 0x20) != 0;
      if (!more && (c & 0x10)) x |= static_cast<int64_t>(~uint64_t{0} << (5 * (k + 1)));
    }
    const size_t m = out.counts.size();
    if (m > 2) x += out.counts[m - 2];
    if (x < 0 || x > static_cast<int64_t>(UINT32_MAX)) {
      invalid("RLE string gives count #" + std::to_string(m) + " = " + std::to_string(x));
    }
    out.counts.push_back(static_cast<uint32_t>(x));
  }
  return out;
}

uint64_t rle_area(const Rle& rle) {
  uint64_t area = 0;
  for (size_t j = 1; j < rle.counts.size(); j += 2) area += rle.counts[j];
  return area;
}

std::array<double, 4> rle_to_bbox(const Rle& rle) {
  const uint32_t h = static_cast<uint32_t>(rle.height), w = static_cast<uint32_t>(rle.width);
  const size_t m = rle.counts.size() / 2 * 2;
  if (m == 0 || h == 0) return {0, 0, 0, 0};
  uint32_t xs = w, ys = h, xe = 0, ye = 0, cc = 0;
  for (size_t j = 0; j < m; ++j) {
    const uint32_t start = cc;
    cc += rle.counts[j];
    if (j % 2 == 0 || rle.counts[j] == 0) continue;  // background, or an empty foreground run
    const uint32_t x_start = start / h, x_end = (cc - 1) / h;
    xs = std::min(xs, x_start);
    xe = std::max(xe, x_end);
    if (x_start < x_end) {  // the run crosses a column: it covers the full height somewhere
      ys = 0;
      ye = h - 1;
    } else {
      ys = std::min(ys, start % h);
      ye = std::max(ye, (cc - 1) % h);
    }
  }
  return {static_cast<double>(xs), static_cast<double>(ys), static_cast<double>(xe - xs + 1),
          static_cast<double>(ye - ys + 1)};
}

Rle rle_from_polygon(const double* xy, size_t k, int height, int width) {
  check_size(height, width);
  constexpr double kScale = 5;
  // The corners on the 5x grid, rounded as maskApi rounds them: (int)(5 x + .5), towards zero.
  std::vector<int> px(k + 1), py(k + 1);
  for (size_t j = 0; j < k; ++j) {
    px[j] = static_cast<int>(kScale * xy[2 * j] + .5);
    py[j] = static_cast<int>(kScale * xy[2 * j + 1] + .5);
  }
  if (k > 0) px[k] = px[0], py[k] = py[0];

  // Every grid point along every edge, stepping one unit along its longer axis. Where the walk
  // moves to the next grid column, it may cross a pixel column's centre line: the first pixel
  // below the crossing is a boundary in that column's run sequence.
  const uint32_t h = static_cast<uint32_t>(height);
  const double x_last = static_cast<double>(static_cast<uint64_t>(width) - 1);  // maskApi's w-1
  std::vector<uint32_t> a;  // boundaries, as column-major positions
  int last_u = 0, last_v = 0;
  bool first = true;
  const auto point = [&](int u, int v) {
    const int pu = last_u, pv = last_v;
    const bool moved = !first && u != pu;
    last_u = u, last_v = v, first = false;
    if (!moved) return;
    double xd = static_cast<double>(u < pu ? u : u - 1);
    xd = (xd + .5) / kScale - .5;
    if (std::floor(xd) != xd || xd < 0 || xd > x_last) return;
    double yd = static_cast<double>(v < pv ? v : pv);
    yd = (yd + .5) / kScale - .5;
    if (yd < 0) {
      yd = 0;
    } else if (yd > height) {
      yd = height;
    }
    yd = std::ceil(yd);
    a.push_back(
        static_cast<uint32_t>(static_cast<int>(xd) * static_cast<int>(h) + static_cast<int>(yd)));
  };
  for (size_t j = 0; j < k; ++j) {
    int xs = px[j], xe = px[j + 1], ys = py[j], ye = py[j + 1];
    const int dx = std::abs(xe - xs), dy = std::abs(ys - ye);
    // Walk from the lower end of the longer axis (so both directions round alike), and visit the
    // points in the edge's own order.
    const bool flip = (dx >= dy && xs > xe) || (dx < dy && ys > ye);
    if (flip) std::swap(xs, xe), std::swap(ys, ye);
    if (dx == 0 && dy == 0) {  // a repeated corner: maskApi's 0/0 slope; its v is never used
      point(xs, ys);
      continue;
    }
    if (dx >= dy) {
      const double s = static_cast<double>(ye - ys) / dx;
      for (int d = 0; d <= dx; ++d) {
        const int t = flip ? dx - d : d;
        point(t + xs, static_cast<int>(ys + s * t + .5));
      }
    } else {
      const double s = static_cast<double>(xe - xs) / dy;
      for (int d = 0; d <= dy; ++d) {
        const int t = flip ? dy - d : d;
        point(static_cast<int>(xs + s * t + .5), t + ys);
      }
    }
  }
  a.push_back(h * static_cast<uint32_t>(width));
  std::sort(a.begin(), a.end());
  // Boundaries to run lengths; a zero-length run cancels a boundary pair (joins its neighbours).
  uint32_t previous = 0;
  for (uint32_t& value : a) {
    const uint32_t t = value;
    value -= previous;
    previous = t;
  }
  Rle out{height, width, {}};
  out.counts.reserve(a.size());
  size_t j = 0;
  out.counts.push_back(a[j++]);
  while (j < a.size()) {
    if (a[j] > 0) {
      out.counts.push_back(a[j++]);
    } else if (++j < a.size()) {
      out.counts.back() += a[j++];
    }
  }
  return out;
}

Rle rle_from_polygon(const std::vector<double>& xy, int height, int width) {
  return rle_from_polygon(xy.data(), xy.size() / 2, height, width);
}

Rle rle_from_bbox(const std::array<double, 4>& b, int height, int width) {
  const double xs = b[0], xe = xs + b[2], ys = b[1], ye = ys + b[3];
  const double xy[8] = {xs, ys, xs, ye, xe, ye, xe, ys};
  return rle_from_polygon(xy, 4, height, width);
}

Rle rle_merge(const std::vector<const Rle*>& rles, bool intersect) {
  if (rles.empty()) return {};
  Rle out = *rles[0];
  if (rles.size() == 1) return out;
  for (const Rle* r : rles) {
    if (r->counts.empty()) invalid("rle_merge: an RLE without counts");
  }
  std::vector<uint32_t> merged;
  for (size_t i = 1; i < rles.size(); ++i) {
    const Rle& b = *rles[i];
    if (b.height != out.height || b.width != out.width) return {};
    merged.clear();
    merged.reserve(out.counts.size() + b.counts.size());
    const std::vector<uint32_t>& ac = out.counts;
    const std::vector<uint32_t>& bc = b.counts;
    uint32_t ca = ac[0], cb = bc[0], cc = 0;
    size_t ia = 1, ib = 1;
    bool va = false, vb = false, v = false;
    for (uint64_t remaining = 1; remaining > 0;) {
      const uint32_t c = std::min(ca, cb);
      cc += c;
      ca -= c;
      if (ca == 0 && ia < ac.size()) ca = ac[ia++], va = !va;
      cb -= c;
      if (cb == 0 && ib < bc.size()) cb = bc[ib++], vb = !vb;
      remaining = static_cast<uint64_t>(ca) + cb;
      const bool previous = v;
      v = intersect ? (va && vb) : (va || vb);
      if (v != previous || remaining == 0) {
        merged.push_back(cc);
        cc = 0;
      }
    }
    out.counts.swap(merged);
  }
  return out;
}

Rle rle_merge(const std::vector<Rle>& rles, bool intersect) {
  std::vector<const Rle*> pointers;
  pointers.reserve(rles.size());
  for (const Rle& r : rles) pointers.push_back(&r);
  return rle_merge(pointers, intersect);
}

double rle_iou(const Rle& dt, const std::array<double, 4>& dt_box, const Rle& gt,
               const std::array<double, 4>& gt_box, bool gt_crowd) {
  const double box_iou = coco_box_iou(dt_box, gt_box, gt_crowd);
  if (!(box_iou > 0)) return box_iou;
  if (dt.height != gt.height || dt.width != gt.width) return -1;
  const std::vector<uint32_t>& a = dt.counts;
  const std::vector<uint32_t>& b = gt.counts;
  uint64_t inter = 0, uni = 0;
  uint32_t ca = a[0], cb = b[0];
  size_t ia = 1, ib = 1;
  bool va = false, vb = false;
  for (uint64_t remaining = 1; remaining > 0;) {
    const uint32_t c = std::min(ca, cb);
    if (va || vb) {
      uni += c;
      if (va && vb) inter += c;
    }
    ca -= c;
    if (ca == 0 && ia < a.size()) ca = a[ia++], va = !va;
    cb -= c;
    if (cb == 0 && ib < b.size()) cb = b[ib++], vb = !vb;
    remaining = static_cast<uint64_t>(ca) + cb;
  }
  if (inter == 0) {
    uni = 1;
  } else if (gt_crowd) {
    uni = rle_area(dt);
  }
  return static_cast<double>(inter) / static_cast<double>(uni);
}

std::vector<double> rle_iou(const std::vector<Rle>& dt, const std::vector<Rle>& gt,
                            const std::vector<uint8_t>& gt_crowd) {
  if (gt_crowd.size() != gt.size()) {
    invalid("rle_iou: one crowd flag per ground truth mask is needed");
  }
  std::vector<std::array<double, 4>> dt_boxes, gt_boxes;
  for (const Rle& r : dt) dt_boxes.push_back(rle_to_bbox(r));
  for (const Rle& r : gt) gt_boxes.push_back(rle_to_bbox(r));
  std::vector<double> out(dt.size() * gt.size());
  for (size_t d = 0; d < dt.size(); ++d) {
    for (size_t g = 0; g < gt.size(); ++g) {
      out[d * gt.size() + g] = rle_iou(dt[d], dt_boxes[d], gt[g], gt_boxes[g], gt_crowd[g] != 0);
    }
  }
  return out;
}

}  // namespace trainer::eval
