// The results-entry scanner; see coco_results_scan.h. It follows the json grammar (RFC 8259) for
// what it accepts, and numbers become doubles by std::from_chars, which rounds correctly as the
// general reader's strtod does, so both readers give the same values.
#include "eval/coco_results_scan.h"

#include <charconv>
#include <limits>
#include <system_error>

namespace trainer::eval {
namespace {

class Scanner {
 public:
  explicit Scanner(std::string_view text) : s_(text) {}

  bool eat(char c) {
    space();
    if (p_ < s_.size() && s_[p_] == c) {
      ++p_;
      return true;
    }
    return false;
  }

  bool at_end() {
    space();
    return p_ == s_.size();
  }

  // A string without escapes (the keys we look for), as a view into the text.
  bool key(std::string_view* out) {
    space();
    if (p_ >= s_.size() || s_[p_] != '"') return false;
    const size_t begin = ++p_;
    for (; p_ < s_.size(); ++p_) {
      const unsigned char c = static_cast<unsigned char>(s_[p_]);
      if (c == '"') {
        *out = s_.substr(begin, p_++ - begin);
        return true;
      }
      if (c < 0x20 || c >= 0x80 || c == '\\') return false;
    }
    return false;
  }

  // A string with its escapes resolved (ASCII only, no \u), into `out`; null `out` skips it.
  bool string(std::string* out) {
    space();
    if (p_ >= s_.size() || s_[p_] != '"') return false;
    if (out) out->clear();
    size_t begin = ++p_;
    for (; p_ < s_.size(); ++p_) {
      const unsigned char c = static_cast<unsigned char>(s_[p_]);
      if (c == '"') {
        if (out) out->append(s_, begin, p_ - begin);
        ++p_;
        return true;
      }
      if (c < 0x20 || c >= 0x80) return false;
      if (c != '\\') continue;
      if (out) out->append(s_, begin, p_ - begin);
      if (++p_ >= s_.size()) return false;
      char resolved = 0;
      switch (s_[p_]) {
        case '"':
          resolved = '"';
          break;
        case '\\':
          resolved = '\\';
          break;
        case '/':
          resolved = '/';
          break;
        case 'b':
          resolved = '\b';
          break;
        case 'f':
          resolved = '\f';
          break;
        case 'n':
          resolved = '\n';
          break;
        case 'r':
          resolved = '\r';
          break;
        case 't':
          resolved = '\t';
          break;
        default:
          return false;  // \u and anything else: the general reader decides
      }
      if (out) out->push_back(resolved);
      begin = p_ + 1;
    }
    return false;
  }

  // A json number token: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
  bool number_token(std::string_view* token, bool* integer) {
    space();
    const size_t begin = p_;
    if (p_ < s_.size() && s_[p_] == '-') ++p_;
    if (p_ >= s_.size() || !digit(s_[p_])) return false;
    if (s_[p_++] != '0') {
      while (p_ < s_.size() && digit(s_[p_])) ++p_;
    }
    *integer = true;
    if (p_ < s_.size() && s_[p_] == '.') {
      *integer = false;
      if (++p_ >= s_.size() || !digit(s_[p_])) return false;
      while (p_ < s_.size() && digit(s_[p_])) ++p_;
    }
    if (p_ < s_.size() && (s_[p_] == 'e' || s_[p_] == 'E')) {
      *integer = false;
      ++p_;
      if (p_ < s_.size() && (s_[p_] == '+' || s_[p_] == '-')) ++p_;
      if (p_ >= s_.size() || !digit(s_[p_])) return false;
      while (p_ < s_.size() && digit(s_[p_])) ++p_;
    }
    *token = s_.substr(begin, p_ - begin);
    return true;
  }

  bool number(double* out) {
    std::string_view token;
    bool integer = false;
    if (!number_token(&token, &integer)) return false;
    const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), *out);
    return error == std::errc() && end == token.data() + token.size();
  }

  // An integer token that fits int64_t (ids written as 7.0 go to the general reader).
  bool integer(int64_t* out) {
    std::string_view token;
    bool integer = false;
    if (!number_token(&token, &integer) || !integer) return false;
    const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), *out);
    return error == std::errc() && end == token.data() + token.size();
  }

  bool skip_value(int depth = 0) {
    space();
    if (p_ >= s_.size() || depth > 64) return false;
    const char c = s_[p_];
    if (c == '"') return string(nullptr);
    if (c == '{' || c == '[') {
      const char close = c == '{' ? '}' : ']';
      ++p_;
      if (eat(close)) return true;
      for (;;) {
        if (c == '{' && (!string(nullptr) || !eat(':'))) return false;
        if (!skip_value(depth + 1)) return false;
        if (eat(',')) continue;
        return eat(close);
      }
    }
    for (const std::string_view literal : {"true", "false", "null"}) {
      if (s_.substr(p_, literal.size()) == literal) {
        p_ += literal.size();
        return true;
      }
    }
    std::string_view token;
    bool integer = false;
    return number_token(&token, &integer);
  }

 private:
  static bool digit(char c) { return c >= '0' && c <= '9'; }

  void space() {
    while (p_ < s_.size() &&
           (s_[p_] == ' ' || s_[p_] == '\n' || s_[p_] == '\r' || s_[p_] == '\t')) {
      ++p_;
    }
  }

  std::string_view s_;
  size_t p_ = 0;
};

// "segmentation": {"size": [h, w], "counts": "..."}, other keys of the object skipped.
bool scan_rle(Scanner& in, ScannedEntry* out) {
  if (!in.eat('{')) return false;
  bool size = false, counts = false;
  if (!in.eat('}')) {
    for (;;) {
      std::string_view key;
      if (!in.key(&key) || !in.eat(':')) return false;
      if (key == "size") {
        if (!in.eat('[') || !in.integer(&out->height) || !in.eat(',') || !in.integer(&out->width) ||
            !in.eat(']')) {
          return false;
        }
        constexpr int64_t kLimit = std::numeric_limits<int32_t>::max();
        if (out->height < 0 || out->width < 0 || out->height > kLimit || out->width > kLimit) {
          return false;
        }
        size = true;
      } else if (key == "counts") {
        if (!in.string(&out->counts)) return false;  // uncompressed counts: the general reader
        counts = true;
      } else if (!in.skip_value()) {
        return false;
      }
      if (in.eat(',')) continue;
      if (in.eat('}')) break;
      return false;
    }
  }
  return size && counts;
}

}  // namespace

bool scan_results_entry(std::string_view entry, ScannedEntry* out) {
  out->has_score = false;
  out->bbox_values = -1;
  out->has_segmentation = false;
  out->counts.clear();
  Scanner in(entry);
  if (!in.eat('{')) return false;
  bool image_id = false, category_id = false;
  if (!in.eat('}')) {
    for (;;) {
      std::string_view key;
      if (!in.key(&key) || !in.eat(':')) return false;
      if (key == "image_id") {
        if (!in.integer(&out->image_id)) return false;
        image_id = true;
      } else if (key == "category_id") {
        if (!in.integer(&out->category_id)) return false;
        category_id = true;
      } else if (key == "score") {
        if (!in.number(&out->score)) return false;
        out->has_score = true;
      } else if (key == "bbox") {
        if (!in.eat('[')) return false;
        if (in.eat(']')) {
          out->bbox_values = 0;
        } else {
          for (int k = 0; k < 4; ++k) {
            if ((k > 0 && !in.eat(',')) || !in.number(&out->bbox[static_cast<size_t>(k)])) {
              return false;
            }
          }
          if (!in.eat(']')) return false;
          out->bbox_values = 4;
        }
      } else if (key == "segmentation") {
        if (!scan_rle(in, out)) return false;  // polygons, uncompressed: the general reader
        out->has_segmentation = true;
      } else if (key == "keypoints" || key == "rbox" || key == "poly") {
        return false;  // other result kinds: the general reader
      } else if (!in.skip_value()) {
        return false;
      }
      if (in.eat(',')) continue;
      if (in.eat('}')) break;
      return false;
    }
  }
  return image_id && category_id && in.at_end();
}

}  // namespace trainer::eval
