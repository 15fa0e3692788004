// The few collective operations a decomposed run needs, over all processes of the run
// (MPI_COMM_WORLD). comm_mpi.cpp implements them with MPI; comm_serial.cpp, built when MPI is
// off, for a single process (rank 0 of 1). Nothing else in heatsim calls MPI.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace heatsim::solver::parallel {

// Starts MPI for the life of the object (threads funneled to the main one: OpenMP regions
// never call MPI) and finalizes it at the end. A process not started by a launcher (mpirun,
// mpiexec, srun) is one rank and starts no MPI; the collectives below are then never called
// (a run of one rank calls none).
class Environment {
 public:
  Environment(int& argc, char**& argv);
  ~Environment();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;
};

// True when heatsim was built with MPI.
bool mpi_built();
// The MPI library's own description (MPI_Get_library_version's first line); empty without MPI.
std::string mpi_library();
// Whether the MPI library says, at run time, that it takes CUDA device pointers (Open MPI's
// MPIX_Query_cuda_support, where its mpi-ext.h offers it); false without MPI, or where the
// library cannot say. The halos go through pinned host buffers either way (docs/parallel.md).
bool cuda_aware_mpi();
int rank();
int size();
// This process's rank among the processes of its node (those that share its memory:
// MPI_Comm_split_type with MPI_COMM_TYPE_SHARED), and how many there are; 0 and 1 alone.
int node_rank();
int node_size();
// Memory the processes of this node share (MPI_Win_allocate_shared over the node's processes):
// this process contributes `bytes` (rounded up to whole pages), and parts[r] is world rank r's
// part as this process addresses it (null for a rank on another node, and for every rank where
// the node could not have the segment: why_not says why). base and bytes span the
// node's whole segment where it is contiguous in this process (else null and 0). The segment
// lives until MPI is finalized: freeing it is collective over the node, which a rank unwinding
// from a failure must not wait for. Collective over every process; without MPI every part is
// null.
struct NodeSegment {
  std::vector<double*> parts;
  void* base = nullptr;
  std::size_t bytes = 0;
  std::string why_not;  // where this node has no segment (every part null): the MPI error
};
NodeSegment allocate_node_shared(std::size_t bytes);
// Orders this process's stores into node-shared memory before a message that tells another
// process to read them, and its loads after a message that told it to (MPI_Win_sync on each
// segment). Nothing without MPI.
void sync_node_shared();
// Ends every process of the run with exit status `code` (MPI_Abort); the caller prints why
// first. Without MPI, std::exit(code).
[[noreturn]] void abort_all(int code);
void barrier();

// Element-wise maximum / minimum / sum over every process, in place.
void max_all(std::vector<std::int64_t>& values);
void max_all(std::vector<double>& values);
void min_all(std::vector<double>& values);
void sum_all(std::vector<double>& values);
// Every process's value, in rank order, on every process.
std::vector<double> gather_all(double value);
// Sends `send` to `dest` and receives `recv.size()` values from `source` (either -1: none).
void send_receive(const std::vector<double>& send, int dest, std::vector<double>& recv, int source,
                  int tag);
// One message of an exchange: `send` goes to `dest`, `recv` (sized by the caller) comes from
// `source` (either -1: none), both under `tag`.
struct Transfer {
  const double* send = nullptr;
  std::size_t send_count = 0;
  int dest = -1;
  double* recv = nullptr;
  std::size_t recv_count = 0;
  int source = -1;
  int tag = 0;
};
// A whole vector sent to `dest`, or received from `source` into a vector of the message's size.
inline Transfer sending(const std::vector<double>& values, int dest, int tag) {
  Transfer t;
  t.send = values.data();
  t.send_count = values.size();
  t.dest = dest;
  t.tag = tag;
  return t;
}
inline Transfer receiving(std::vector<double>& values, int source, int tag) {
  Transfer t;
  t.recv = values.data();
  t.recv_count = values.size();
  t.source = source;
  t.tag = tag;
  return t;
}
// Every transfer at once (all receives and sends posted, then one wait for all of them), so
// the messages of one exchange travel together instead of one round trip after the other.
void send_receive_all(const std::vector<Transfer>& transfers);
// Rank 0 receives every process's text in rank order; other ranks get an empty result.
std::vector<std::string> gather_text_to_root(const std::string& mine);
// Rank 0 receives every process's values in rank order (`counts[r]` from rank r); other
// ranks get an empty result.
std::vector<double> gather_to_root(const std::vector<double>& mine,
                                   const std::vector<std::int64_t>& counts);

// Every process's values in rank order (`counts[r]` from rank r), on every process.
std::vector<double> gather_all(const std::vector<double>& mine,
                               const std::vector<std::int64_t>& counts);
// Rank 0 hands out `all` in rank order, `counts[r]` values to rank r (`all` is read on rank 0
// only); each process gets its part.
std::vector<double> scatter_from_root(const std::vector<double>& all,
                                      const std::vector<std::int64_t>& counts);

}  // namespace heatsim::solver::parallel
