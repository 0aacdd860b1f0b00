// The epoch record: 8.4.190's results.csv columns in its order, header and row from one list.
#include <doctest/doctest.h>

#include <cmath>

#include "engine/epoch_record.h"

using namespace trainer::engine;

TEST_CASE("epoch record: YOLO26 columns as 8.4.190 writes them, then trainer's extras") {
  EpochRecord r;
  r.epoch = 3;
  r.seconds = 12.5;
  r.loss_names = detection_loss_names(1);
  r.train_loss = {1.5, 2.5, 0.75};
  r.learning_rates = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8};
  EpochValidation v;
  v.precision = 0.5;
  v.recall = 0.25;
  v.map50 = 0.125;
  v.map50_95 = 0.0625;
  v.coco_ap = 0.06;
  v.coco_ap50 = 0.12;
  v.loss_items = {3.0, 4.0, 5.0};
  r.validation = v;
  const std::vector<std::string> expected = {"epoch",
                                             "time",
                                             "train/box_loss",
                                             "train/cls_loss",
                                             "train/l1_loss",
                                             "metrics/precision(B)",
                                             "metrics/recall(B)",
                                             "metrics/mAP50(B)",
                                             "metrics/mAP50-95(B)",
                                             "val/box_loss",
                                             "val/cls_loss",
                                             "val/l1_loss",
                                             "lr/pg0",
                                             "lr/pg1",
                                             "lr/pg2",
                                             "lr/pg3",
                                             "lr/pg4",
                                             "lr/pg5",
                                             "lr/pg6",
                                             "lr/pg7",
                                             "metrics/coco/AP",
                                             "metrics/coco/AP50"};
  CHECK(r.header() == expected);
  const std::vector<double> row = r.row();
  REQUIRE(row.size() == expected.size());
  CHECK(row[0] == 3);
  CHECK(row[4] == 0.75);
  CHECK(row[8] == 0.0625);
  CHECK(row[11] == 5.0);
  CHECK(row[19] == 0.8);
  CHECK(row[21] == 0.12);
}

TEST_CASE("epoch record: YOLO11 names dfl_loss, and no validation writes NaN metrics") {
  EpochRecord r;
  r.loss_names = detection_loss_names(16);
  r.train_loss = {1, 2, 3};
  r.learning_rates = {0.01, 0.01, 0.01};
  const auto header = r.header();
  CHECK(header[4] == "train/dfl_loss");
  CHECK(header[11] == "val/dfl_loss");
  CHECK(header.size() == 2 + 3 + 4 + 3 + 3 + 2);
  const auto row = r.row();
  CHECK(std::isnan(row[5]));
  CHECK(std::isnan(row[9]));
  CHECK(row[12] == 0.01);
  r.train_loss.pop_back();
  CHECK_THROWS_AS(r.row(), std::logic_error);
}
