// The field holder of an implicit or steady run over the ranks of an MPI run: the implicit
// steps' backend (solver/multigrid/implicit_backend.hpp) whose multigrid runs on
// DecomposedLevelOps, seen by the run's files as a field split over the ranks. Every rank
// steps the same solves together; every method is collective except name(), capabilities(),
// unsupported_reason(), fusion_depth(), decomposition() and describe(). The field as the
// backend interface gives it (download, stats, samples) is the whole field on every rank.
#pragma once

#include <memory>
#include <string>

#include "decomposed_level_ops.hpp"
#include "distributed_field.hpp"
#include "kernels/backend.hpp"

namespace heatsim::solver::parallel {

class DecomposedImplicitBackend final : public kernels::Backend, public DistributedField {
 public:
  // `implicit`: the implicit backend whose stepper's level operations are `ops`.
  DecomposedImplicitBackend(std::unique_ptr<kernels::Backend> implicit,
                            const DecomposedLevelOps& ops);

  std::string name() const override { return implicit_->name(); }
  kernels::Capabilities capabilities() const override { return implicit_->capabilities(); }
  std::string unsupported_reason(const kernels::StencilProblem& problem) const override {
    return implicit_->unsupported_reason(problem);
  }
  void setup(const kernels::StencilProblem& problem) override { implicit_->setup(problem); }
  void upload(const std::vector<double>& field) override { implicit_->upload(field); }
  void download(std::vector<double>& field) override { implicit_->download(field); }
  void advance(std::int64_t steps, std::int64_t step0) override {
    implicit_->advance(steps, step0);
  }
  kernels::FieldStats stats() override { return implicit_->stats(); }
  void sample(const std::vector<std::int64_t>& nodes, std::vector<double>& values) override {
    implicit_->sample(nodes, values);
  }
  int fusion_depth() const override { return implicit_->fusion_depth(); }

  const Decomposition& decomposition() const override { return ops_.decomposition(); }
  void download_owned(std::vector<double>& values) override;
  void upload_owned(const std::vector<double>& values) override;
  std::string describe() const override;

 private:
  std::unique_ptr<kernels::Backend> implicit_;
  const DecomposedLevelOps& ops_;
};

}  // namespace heatsim::solver::parallel
