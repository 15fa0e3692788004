// The writer's part of the progress line (run/report.hpp): sizes a reader can tell apart; the
// summary's time line, with a checkpoints item only where the run writes checkpoints.
#include "run/report.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

heatsim::io::WriterActivity writing(double bytes, double done, double seconds, int queued) {
  heatsim::io::WriterActivity a;
  a.busy = true;
  a.file = "/some/dir/field_00000225.h5";
  a.bytes = bytes;
  a.bytes_done = done;
  a.seconds = seconds;
  a.queued = queued;
  return a;
}

// A field of 81^3 nodes in fp64 is a 4.26 MB file: its progress reads in MB, not
// "0.00 of 0.00 GB".
TEST(DescribeWriter, FilesUnderAGigabyteInMegabytes) {
  EXPECT_EQ(heatsim::run::describe_writer(writing(4.26e6, 2.2e6, 0.02, 1)),
            "writing field_00000225.h5 (2.20 of 4.26 MB, 0.11 GB/s), 1 more queued");
  EXPECT_EQ(heatsim::run::describe_writer(writing(4.26e6, 0.0, 0.01, 0)),
            "writing field_00000225.h5 (4.26 MB)");
}

TEST(DescribeWriter, FilesFromAGigabyteInGigabytes) {
  EXPECT_EQ(heatsim::run::describe_writer(writing(1.07e9, 0.53e9, 1.0, 0)),
            "writing field_00000225.h5 (0.53 of 1.07 GB, 0.53 GB/s)");
}

TEST(DescribeWriter, IdleWriterSaysNothing) {
  heatsim::io::WriterActivity a;
  EXPECT_EQ(heatsim::run::describe_writer(a), "");
}

// Parts chosen so that every figure is exact in the printed digits: other = 1.5 - 0.25 - 1.0 -
// 0.2 = 0.05 s; writing 0.5 + 0.25 = 0.75 s of which 0.15 s waited for, 0.6 s (80%) hidden.
heatsim::run::WallTime transient_wall_time() {
  heatsim::run::WallTime t;
  t.setup = 0.25;
  t.stepping = 1.0;
  t.files = 0.2;
  t.waited = 0.15;
  t.output = 0.5;
  t.output_bytes = 1e8;
  t.checkpoints = 0.25;
  t.checkpoint_bytes = 5e7;
  return t;
}

TEST(DescribeWallTime, ATransientRunShowsItsCheckpoints) {
  EXPECT_EQ(heatsim::run::describe_wall_time(transient_wall_time(), 1.5),
            "time: setup 0.250 s, stepping 1.000 s, files 0.200 s, other 0.050 s; total 1.500 s; "
            "output 0.500 s (0.100 GB, 0.2 GB/s), checkpoints 0.250 s (0.050 GB, 0.2 GB/s); "
            "0.600 of 0.750 s of writing hidden (80%)");
  // One that wrote none (checkpoint.every: 0) still has the item: a signal would write one.
  heatsim::run::WallTime none = transient_wall_time();
  none.checkpoints = 0.0;
  none.checkpoint_bytes = 0.0;
  EXPECT_EQ(heatsim::run::describe_wall_time(none, 1.5),
            "time: setup 0.250 s, stepping 1.000 s, files 0.200 s, other 0.050 s; total 1.500 s; "
            "output 0.500 s (0.100 GB, 0.2 GB/s), checkpoints 0.000 s (0.000 GB, 0 GB/s); "
            "0.350 of 0.500 s of writing hidden (70%)");
}

// A steady state writes no checkpoints: no "checkpoints 0.000 s" item.
TEST(DescribeWallTime, ASteadyStateHasNoCheckpointsItem) {
  heatsim::run::WallTime t = transient_wall_time();
  t.stepping_name = "solve";
  t.writes_checkpoints = false;
  t.checkpoints = 0.0;
  t.checkpoint_bytes = 0.0;
  EXPECT_EQ(heatsim::run::describe_wall_time(t, 1.5),
            "time: setup 0.250 s, solve 1.000 s, files 0.200 s, other 0.050 s; total 1.500 s; "
            "output 0.500 s (0.100 GB, 0.2 GB/s); 0.350 of 0.500 s of writing hidden (70%)");
}

}  // namespace
