// The epoch record: 8.4.190's results.csv columns in its order, header and row from one list.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "engine/log/epoch_record.h"
#include "engine/task/detect_task.h"

using namespace trainer::engine;

TEST_CASE("epoch record: YOLO26 columns as 8.4.190 writes them, then trainer's extras") {
  EpochRecord r;
  r.columns = detection_columns(1);
  r.epoch = 3;
  r.seconds = 12.5;
  r.train_loss = {1.5, 2.5, 0.75};
  r.learning_rates = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8};
  EpochValidation v;
  v.metrics = {0.5, 0.25, 0.125, 0.0625};
  v.extras = {0.06, 0.12};
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
  CHECK(r.value("epoch") == 3);
  CHECK(r.value("time") == 12.5);
  CHECK(r.value("train/l1_loss") == 0.75);
  CHECK(r.value("metrics/mAP50-95(B)") == 0.0625);
  CHECK(r.value("val/l1_loss") == 5.0);
  CHECK(r.value("lr/pg7") == 0.8);
  CHECK(r.value("metrics/coco/AP50") == 0.12);
  CHECK_THROWS_AS(r.value("metrics/mAP50(P)"), std::out_of_range);
}

TEST_CASE("epoch record: YOLO11 names dfl_loss, no validation is NaN in cells and 0 in rows") {
  EpochRecord r;
  r.columns = detection_columns(16);
  r.train_loss = {1, 2, 3};
  r.learning_rates = {0.01, 0.01, 0.01};
  const auto header = r.header();
  CHECK(header[4] == "train/dfl_loss");
  CHECK(header[11] == "val/dfl_loss");
  CHECK(header.size() == 2 + 3 + 4 + 3 + 3 + 2);
  CHECK(std::isnan(r.value("metrics/precision(B)")));
  CHECK(std::isnan(r.value("val/box_loss")));
  CHECK(std::isnan(r.value("metrics/coco/AP")));
  CHECK(r.value("lr/pg0") == 0.01);
  // results.csv writes 0 there, as the reference does before its first validation; a NaN loss
  // stays NaN (it is what happened).
  r.train_loss[1] = std::nan("");
  const std::vector<double> row = r.row();
  CHECK(row[5] == 0.0);       // metrics/precision(B)
  CHECK(row[9] == 0.0);       // val/box_loss
  CHECK(row.back() == 0.0);   // metrics/coco/AP50
  CHECK(std::isnan(row[3]));  // train/cls_loss
  // An extra that was not computed (NaN) is 0 in the row, NaN in the cells.
  r.validation = EpochValidation{{0.5, 0.5, 0.25, 0.125}, {0.2, std::nan("")}, {}};
  CHECK(r.row().back() == 0.0);
  CHECK(r.row()[r.row().size() - 2] == doctest::Approx(0.2));
  CHECK(std::isnan(r.value("metrics/coco/AP50")));
  r.train_loss.pop_back();
  CHECK_THROWS_AS(r.row(), std::logic_error);
}

TEST_CASE("epoch record: a task's own loss items and metrics become its columns") {
  EpochRecord r;  // e.g. a keypoint task: more loss items, (B) and (P) metrics
  r.columns.loss_names = {"box_loss", "pose_loss", "kobj_loss", "cls_loss"};
  r.columns.metric_names = {"metrics/mAP50-95(B)", "metrics/mAP50-95(P)"};
  r.train_loss = {1, 2, 3, 4};
  EpochValidation v;
  v.metrics = {0.5, 0.25};
  r.validation = v;  // no val loss: those columns are NaN
  CHECK(r.header() == std::vector<std::string>{
                          "epoch", "time", "train/box_loss", "train/pose_loss", "train/kobj_loss",
                          "train/cls_loss", "metrics/mAP50-95(B)", "metrics/mAP50-95(P)",
                          "val/box_loss", "val/pose_loss", "val/kobj_loss", "val/cls_loss"});
  CHECK(r.value("metrics/mAP50-95(P)") == 0.25);
  CHECK(std::isnan(r.value("val/kobj_loss")));
}
