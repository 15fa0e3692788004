// A backend that steps one global field split over the ranks of an MPI run
// (decomposition.hpp): each rank holds a normal backend (cpu, cuda-..., whatever the run chose)
// set up for its local problem, and this class presents the global field to the time loop.
//
// Every method is collective (every rank calls it, in the same order) except name(),
// capabilities(), unsupported_reason() and fusion_depth():
//   upload(global field)  each rank takes its local box from the global field it holds;
//   upload_owned(values)  each rank gives only its owned nodes; the overlaps are exchanged;
//   download(field)       rank 0 receives the global field (gathered owned boxes); the other
//                         ranks get an empty vector;
//   advance(steps, step0) at most steps-per-exchange at a time, in pieces that end on its
//                         multiples (exchange_pieces), the overlaps exchanged before each
//                         piece that follows a piece (the overlaps are left as they are after
//                         the last); where a piece is one pass of the local backend, its
//                         interior is computed while the halo travels (advance_around);
//   stats()               over the owned nodes of the body (a void's are left out, as the
//                         serial backends leave them), reduced: min, max, non-finite count;
//                         the total heat (each node's enthalpy where its capacity varies with
//                         temperature) sums the ranks' partial sums in rank order (the same on
//                         every rank and every run with this decomposition);
//   sample(nodes)         every rank gets every value (the owner's, bit for bit).
#pragma once

#include <array>
#include <memory>
#include <string>

#include "comm.hpp"
#include "decomposition.hpp"
#include "distributed_field.hpp"
#include "kernels/backend.hpp"
#include "kernels/temperature_laws.hpp"

namespace heatsim::solver::parallel {

struct DecomposedOptions {
  std::array<int, 3> procs{0, 0, 0};  // ranks per axis; 0: balanced
  // Steps between exchanges: a multiple of the local backend's fusion depth, so the passes are
  // the serial run's; 0: the fusion depth. A deeper overlap trades more redundant work for
  // fewer messages (communication avoiding).
  int exchange_every = 0;
  // The interior of a block stepped while its halo travels (Backend::advance_around), where
  // the local backend can and a piece is one of its passes; false: exchange, then step (the
  // same bits either way). HEATSIM_HALO_OVERLAP=0 in the environment turns it off as well.
  bool overlap_halo = true;
};

class DecomposedBackend final : public kernels::Backend, public DistributedField {
 public:
  DecomposedBackend(std::unique_ptr<kernels::Backend> local, DecomposedOptions options = {});

  std::string name() const override { return local_->name(); }
  kernels::Capabilities capabilities() const override { return local_->capabilities(); }
  std::string unsupported_reason(const kernels::StencilProblem& problem) const override {
    return local_->unsupported_reason(problem);
  }
  // `problem` is the global one. Throws std::invalid_argument when the grid cannot be split
  // this way (blocks thinner than the overlap).
  void setup(const kernels::StencilProblem& problem) override;
  void upload(const std::vector<double>& field) override;
  void download(std::vector<double>& field) override;
  void advance(std::int64_t steps, std::int64_t step0) override;
  kernels::FieldStats stats() override;
  void sample(const std::vector<std::int64_t>& nodes, std::vector<double>& values) override;
  void synchronize() override { local_->synchronize(); }
  int fusion_depth() const override { return local_->fusion_depth(); }

  // This rank's owned nodes (decomposition().owned(), x fastest), no communication: what a
  // collective file write takes from each rank.
  void download_owned(std::vector<double>& values) override;
  // The reverse, collective: each rank's owned nodes (a part of a file read by
  // read_field_file_collective), then one exchange fills the overlaps. The same local fields
  // as upload() of the global field, which no rank needs to hold.
  void upload_owned(const std::vector<double>& values) override;
  const Decomposition& decomposition() const override { return decomposition_; }
  int exchange_every() const { return exchange_every_; }
  // One line for the run log: "4 ranks as 2 x 2 x 1, overlap 3 layers, exchange every 3 steps".
  std::string describe() const override;
  // "halo exchanges 0.021 s of 0.35 s (6.0%), 120 exchanges, 119 of them while the interior
  // stepped; per exchange 0.05 ms out, 0.09 ms MPI, 0.03 ms in": the wall time of the
  // exchanges (the device's packing and copies included; those beside a split pass's interior
  // overlap its stepping) against that of advance() on this rank, then each exchange's mean
  // time reading its slabs out of the field (read_box), moving them (MPI) and writing the
  // received ones into the overlaps (write_box).
  std::string exchange_summary() const override;

 private:
  // Exchanges the overlaps; adds the time of each part to `parts` (out, MPI, in) if given.
  void exchange(double* parts = nullptr);
  kernels::FieldBox field_box(const Box& global_box) const;  // in the local field

  std::unique_ptr<kernels::Backend> local_;
  DecomposedOptions options_;
  kernels::StencilProblem global_;
  Decomposition decomposition_;
  int exchange_every_ = 1;
  std::vector<double> weights_;  // per owned node: trapezoid weight (x capacity with fields)
  std::shared_ptr<const kernels::TemperatureDependence> laws_;
  std::vector<std::int32_t> law_;       // per owned node: its varying-capacity law, or -1; or empty
  const double* read_owned();           // into owned_staging_
  kernels::HostStaging staging_;        // the exchange's slabs: out low, out high, in low, in high
  kernels::HostStaging owned_staging_;  // this rank's owned block (stats, samples, files)
  std::size_t slab_points_ = 0;         // the largest slab's nodes
  double exchange_seconds_ = 0.0, advance_seconds_ = 0.0;
  double part_seconds_[3] = {0.0, 0.0, 0.0};          // timed exchanges: out, MPI, in
  // The rest of the stepping on this rank's thread: waiting for the local steps to finish
  // (synchronize), and the passes themselves less the exchanges run inside them (on a device
  // mostly launches; on the CPU the steps).
  double wait_seconds_ = 0.0, pass_seconds_ = 0.0;
  std::int64_t exchanges_ = 0, beside_interior_ = 0;  // all, and those a split pass hid
  bool decide_first_step_ = false;  // after an upload: first_step_single over all ranks
  bool overlaps_stale_ = false;     // a piece ran since the last exchange
  // The owned nodes no overlap node reaches in a pass (the owned box less the halo on every
  // side with a neighbour), in the local field; split_: whether a pass may be split around
  // it (an exchange per pass, an interior left, overlap_halo).
  kernels::FieldBox inner_;
  bool split_ = false;
  // Exchanges the overlaps, timed (exchange_seconds_, exchanges_).
  void timed_exchange();
  // Neighbours on this node: their slabs through node-shared memory (share_slabs, in setup;
  // HEATSIM_HALO_SHARED=0 in the environment sends every slab as a message instead).
  void share_slabs();
  double* shared_slab(int owner, int a, int side, int parity) const;
  NodeSegment segment_;
  kernels::HostStaging shared_pin_;            // the segment pinned for a device's copies
  std::string shared_pin_note_;                // why it is not, where it could not be
  std::size_t shared_bytes_ = 0;               // this rank's part
  std::size_t shared_points_ = 0;              // per slab; 0: nothing shared
  std::array<int, 3> split_axes_{-1, -1, -1};  // each split axis's index among them
  std::int64_t exchange_round_ = 0;            // exchanges so far (their parity picks the slabs)
};

}  // namespace heatsim::solver::parallel
