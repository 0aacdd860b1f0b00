// The structural check of torch.save files (model/pickle_check.h, model/torch_zip_check.h),
// against hand-computed byte positions.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "model/pickle_check.h"

using namespace trainer::model;

namespace {

std::optional<std::string> check(const std::string& pickle) {
  return check_pickle(reinterpret_cast<const unsigned char*>(pickle.data()), pickle.size());
}

const std::string kProto2("\x80\x02", 2);

}  // namespace

TEST_CASE("pickle check: each opcode's argument must fit") {
  CHECK_FALSE(check(std::string("\x80\x02K\x05.", 5)));           // PROTO 2, BININT1 5, STOP
  CHECK_FALSE(check(std::string("\x80\x02X\x02\0\0\0ab.", 10)));  // a 2-byte string
  CHECK_FALSE(check(kProto2 + "ctorch\nFloatStorage\n."));        // GLOBAL: two lines of text
  CHECK(*check(std::string("\x80\x02X\x04\0\0\0ab.", 10)) ==
        "pickle declares 4 bytes at byte 2 but has 3 left");
  CHECK(*check(std::string("\x80\x02K\x05", 4)) == "pickle has no STOP opcode");
  CHECK(*check(std::string("\x80\x02K", 3)) == "pickle ends inside an opcode");
  CHECK(*check(kProto2 + "ctorch\n") == "pickle ends inside a text argument");
  CHECK(*check(std::string("\x80\x02Nr\xff\xff\xff\x7f.", 9)) ==
        "pickle memo index at byte 3 is out of range");
  CHECK(*check(std::string("\x80\x02\xff.", 4)) == "unknown pickle opcode 0xff at byte 2");
}
