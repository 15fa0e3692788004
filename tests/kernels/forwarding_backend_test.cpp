// ForwardingBackend (kernels/forwarding_backend.hpp): every call reaches the backend setup()
// chose, what that backend answers comes back unchanged (its fusion depth, bytes per point and
// first-step answer too), and before a backend is chosen (or after its setup failed) the calls say so.
#include "kernels/forwarding_backend.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/host_field.hpp"

namespace heatsim::kernels {
namespace {

// A backend that keeps its field in a vector and counts each call by name.
class Recording final : public Backend {
 public:
  explicit Recording(std::map<std::string, int>& calls) : calls_(calls) {}
  std::string name() const override { return "recording"; }
  Capabilities capabilities() const override { return {}; }
  void setup(const StencilProblem& p) override {
    ++calls_["setup"];
    if (p.n[0] == 13) throw std::runtime_error("13 nodes refused");
    field_.assign(static_cast<std::size_t>(p.points()), 0.0);
  }
  void upload(const std::vector<double>& f) override {
    ++calls_["upload"];
    field_ = f;
  }
  void upload_from(const HostField&) override { ++calls_["upload_from"]; }
  void download(std::vector<double>& f) override {
    ++calls_["download"];
    f = field_;
  }
  void download_to(double* out) override {
    ++calls_["download_to double"];
    for (std::size_t i = 0; i < field_.size(); ++i) out[i] = field_[i];
  }
  void download_to(float* out) override {
    ++calls_["download_to float"];
    for (std::size_t i = 0; i < field_.size(); ++i) out[i] = static_cast<float>(field_[i]);
  }
  HostStaging allocate_host_staging(std::size_t bytes) override {
    ++calls_["allocate_host_staging"];
    return Backend::allocate_host_staging(bytes);
  }
  void advance(std::int64_t steps, std::int64_t step0) override {
    ++calls_["advance"];
    for (double& v : field_) v += static_cast<double>(steps + step0);
  }
  bool advance_around(std::int64_t steps, std::int64_t step0, const FieldBox& inner,
                      const std::function<void()>& between) override {
    ++calls_["advance_around"];
    if (inner.extent[0] == 0) return false;
    between();
    advance(steps, step0);
    return true;
  }
  FieldStats stats() override {
    ++calls_["stats"];
    FieldStats s;
    s.max = 42.0;
    return s;
  }
  void sample(const std::vector<std::int64_t>& nodes, std::vector<double>& values) override {
    ++calls_["sample"];
    values.clear();
    for (std::int64_t i : nodes) values.push_back(field_[static_cast<std::size_t>(i)]);
  }
  void read_box(const FieldBox& box, double* values) override {
    ++calls_["read_box"];
    for (std::int64_t i = 0; i < box.points(); ++i) values[i] = field_[static_cast<std::size_t>(i)];
  }
  void write_box(const FieldBox& box, const double* values) override {
    ++calls_["write_box"];
    for (std::int64_t i = 0; i < box.points(); ++i) field_[static_cast<std::size_t>(i)] = values[i];
  }
  void synchronize() override { ++calls_["synchronize"]; }
  int fusion_depth() const override { return 3; }
  double bytes_per_point_step() const override { return 17.0; }
  bool first_step_single(std::int64_t step0) override {
    ++calls_["first_step_single"];
    return step0 == 7 && !imposed_;
  }
  void set_first_step_single(bool single) override {
    ++calls_["set_first_step_single"];
    imposed_ = single;
  }

 private:
  std::map<std::string, int>& calls_;
  std::vector<double> field_;
  bool imposed_ = false;
};

// Chooses a Recording at setup(), as the CUDA drivers choose theirs.
class Chooser final : public ForwardingBackend {
 public:
  explicit Chooser(std::map<std::string, int>& calls) : calls_(calls) {}
  std::string name() const override { return "chooser"; }
  Capabilities capabilities() const override { return {}; }
  void setup(const StencilProblem& p) override {
    forget();
    auto inner = std::make_unique<Recording>(calls_);
    inner->setup(p);
    choose(std::move(inner));
  }

 private:
  std::map<std::string, int>& calls_;
};

StencilProblem problem_of(std::int64_t n) {
  StencilProblem p;
  p.dims = 1;
  p.n = {n, 1, 1};
  return p;
}

TEST(ForwardingBackend, EveryCallReachesTheChosenBackend) {
  std::map<std::string, int> calls;
  Chooser b(calls);
  b.setup(problem_of(4));
  b.upload({1.0, 2.0, 3.0, 4.0});
  b.advance(2, 1);  // + 3 each
  std::vector<double> got;
  b.download(got);
  EXPECT_EQ(got, (std::vector<double>{4.0, 5.0, 6.0, 7.0}));
  double d[4];
  b.download_to(d);
  EXPECT_EQ(d[3], 7.0);
  float f[4];
  b.download_to(f);
  EXPECT_EQ(f[0], 4.0f);
  b.upload_from(HostField(4, false));
  std::vector<double> sampled;
  b.sample({0, 2}, sampled);
  EXPECT_EQ(sampled, (std::vector<double>{4.0, 6.0}));
  FieldBox box;
  box.grid = {4, 1, 1};
  box.extent = {2, 1, 1};
  std::vector<double> values;
  b.read_box(box, values);  // the vector overload, through the forwarded pointer one
  EXPECT_EQ(values, (std::vector<double>{4.0, 5.0}));
  b.write_box(box, std::vector<double>{9.0, 8.0});
  b.download(got);
  EXPECT_EQ(got, (std::vector<double>{9.0, 8.0, 6.0, 7.0}));
  EXPECT_EQ(b.stats().max, 42.0);
  b.synchronize();
  HostStaging staging = b.allocate_host_staging(64);
  EXPECT_EQ(staging.bytes(), 64u);
  EXPECT_EQ(b.fusion_depth(), 3);
  EXPECT_EQ(b.bytes_per_point_step(), 17.0);
  EXPECT_TRUE(b.first_step_single(7));
  EXPECT_FALSE(b.first_step_single(8));
  b.set_first_step_single(true);
  EXPECT_FALSE(b.first_step_single(7));  // the Recording answers false once imposed
  EXPECT_EQ(calls["first_step_single"], 3);
  int between = 0;
  box.extent = {0, 1, 1};
  EXPECT_FALSE(b.advance_around(1, 0, box, [&] { ++between; }));  // the Recording's refusal
  box.extent = {2, 1, 1};
  EXPECT_TRUE(b.advance_around(1, 0, box, [&] { ++between; }));
  EXPECT_EQ(between, 1);
  EXPECT_EQ(calls["advance_around"], 2);
  EXPECT_EQ(calls["advance"], 2);  // advance() above, and the split pass's
  for (const char* call : {"setup", "upload", "upload_from", "download_to double",
                           "download_to float", "allocate_host_staging", "stats",
                           "sample", "read_box", "write_box", "synchronize",
                           "set_first_step_single"})
    EXPECT_EQ(calls[call], 1) << call;
  EXPECT_EQ(calls["download"], 2);
}

TEST(ForwardingBackend, CallsBeforeAChoiceOrAfterAFailedSetupSaySo) {
  std::map<std::string, int> calls;
  Chooser b(calls);
  const auto expect_refused = [&](const char* when) {
    std::vector<double> v;
    try {
      b.download(v);
      ADD_FAILURE() << when << ": download went through";
    } catch (const std::logic_error& e) {
      EXPECT_NE(std::string(e.what()).find("chooser backend: used before setup()"),
                std::string::npos)
          << e.what();
    }
    EXPECT_THROW(b.advance(1, 0), std::logic_error) << when;
    EXPECT_THROW(b.stats(), std::logic_error) << when;
    EXPECT_THROW(b.first_step_single(0), std::logic_error) << when;
    EXPECT_EQ(b.fusion_depth(), 1) << when;
    EXPECT_EQ(b.bytes_per_point_step(), 0.0) << when;
  };
  expect_refused("before setup");
  b.setup(problem_of(4));
  EXPECT_THROW(b.setup(problem_of(13)), std::runtime_error);
  expect_refused("after a failed setup");
  EXPECT_EQ(calls["advance"], 0);
}

}  // namespace
}  // namespace heatsim::kernels
