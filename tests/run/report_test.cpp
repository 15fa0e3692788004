// The writer's part of the progress line (run/report.hpp): sizes a reader can tell apart.
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

}  // namespace
