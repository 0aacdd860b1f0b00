// `trainer predict` arguments: the reference's defaults, typed values, and errors naming the key.
#include <doctest/doctest.h>

#include "core/error.h"
#include "predict/predict_options.h"

using trainer::core::ConfigError;
using trainer::predict::NmsChoice;
using trainer::predict::parse_predict_args;

TEST_CASE("predict options: the reference's defaults") {
  const auto o = parse_predict_args({"weights=w.pt", "source=img.jpg"});
  CHECK(o.weights == "w.pt");
  CHECK(o.source == "img.jpg");
  CHECK(o.imgsz == 640);
  CHECK(o.conf == doctest::Approx(0.25));
  CHECK(o.iou == doctest::Approx(0.7));
  CHECK(o.max_det == 300);
  CHECK(o.batch == 1);
  CHECK(o.save);
  CHECK_FALSE(o.save_txt);
  CHECK_FALSE(o.save_conf);
  CHECK_FALSE(o.save_json);
  CHECK(o.name == "predict");
  CHECK(o.vid_stride == 1);
  CHECK(o.nms == NmsChoice::kAuto);
}

TEST_CASE("predict options: values parse as YAML scalars") {
  const auto o = parse_predict_args({"weights=w.ckpt", "source=dir", "imgsz=320", "conf=0.5",
                                     "save_txt=True", "save=false", "batch=4", "nms=false",
                                     "line_width=3", "name=null", "project='out dir'"});
  CHECK(o.imgsz == 320);
  CHECK(o.conf == doctest::Approx(0.5));
  CHECK(o.save_txt);
  CHECK_FALSE(o.save);
  CHECK(o.batch == 4);
  CHECK(o.nms == NmsChoice::kOff);
  CHECK(o.line_width == 3);
  CHECK(o.name == "predict");
  CHECK(o.project == "out dir");
}

TEST_CASE("predict options: errors name the key") {
  CHECK_THROWS_WITH_AS(parse_predict_args({"weights=w.pt", "source=x", "confidence=0.3"}),
                       doctest::Contains("unknown key 'confidence'"), ConfigError);
  CHECK_THROWS_WITH_AS(parse_predict_args({"weights=w.pt", "source=x", "save_text=true"}),
                       doctest::Contains("did you mean 'save_txt'"), ConfigError);
  CHECK_THROWS_WITH_AS(parse_predict_args({"weights=w.pt", "source=x", "conf=high"}),
                       doctest::Contains("conf=high: expected a number"), ConfigError);
  CHECK_THROWS_WITH_AS(parse_predict_args({"weights=w.pt", "source=x", "batch=0"}),
                       doctest::Contains("batch=0"), ConfigError);
  // Bounds as a user writes them; nan, inf and hexadecimal are not numbers here.
  CHECK_THROWS_WITH_AS(parse_predict_args({"weights=w.pt", "source=x", "imgsz=31"}),
                       "predict: imgsz=31: expected a value in [32, 8192]", ConfigError);
  CHECK_THROWS_WITH_AS(parse_predict_args({"weights=w.pt", "source=x", "conf=2"}),
                       "predict: conf=2: expected a value in [0, 1]", ConfigError);
  for (const char* bad : {"conf=nan", "conf=inf", "conf=0x0.8p0"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(parse_predict_args({"weights=w.pt", "source=x", bad}),
                         doctest::Contains("expected a number"), ConfigError);
  }
  CHECK_THROWS_WITH_AS(parse_predict_args({"weights=w.pt", "source=x", "save=maybe"}),
                       doctest::Contains("true or false"), ConfigError);
  CHECK_THROWS_WITH_AS(parse_predict_args({"source=x"}), doctest::Contains("weights=PATH"),
                       ConfigError);
  CHECK_THROWS_WITH_AS(parse_predict_args({"weights=w.pt"}), doctest::Contains("source=PATH"),
                       ConfigError);
  CHECK_THROWS_WITH_AS(parse_predict_args({"weights=w.pt", "source=x", "imgsz"}),
                       doctest::Contains("not key=value"), ConfigError);
}
