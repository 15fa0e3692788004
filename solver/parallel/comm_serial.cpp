// One process, no MPI: every collective is the identity.
#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "comm.hpp"

namespace heatsim::solver::parallel {

Environment::Environment(int&, char**&) {}
Environment::~Environment() = default;
bool mpi_built() { return false; }
bool cuda_aware_mpi() { return false; }
std::string mpi_library() { return ""; }
int rank() { return 0; }
int size() { return 1; }
int node_rank() { return 0; }
int node_size() { return 1; }
NodeSegment allocate_node_shared(std::size_t) {
  NodeSegment s;
  s.parts.assign(1, nullptr);
  return s;
}
void sync_node_shared() {}
void abort_all(int code) { std::exit(code); }
void barrier() {}

void max_all(std::vector<std::int64_t>&) {}
void max_all(std::vector<double>&) {}
void min_all(std::vector<double>&) {}
void sum_all(std::vector<double>&) {}
std::vector<double> gather_all(double value) { return {value}; }

void send_receive(const std::vector<double>& send, int dest, std::vector<double>& recv, int source,
                  int) {
  if (dest == 0 && source == 0) recv.assign(send.begin(), send.begin() + recv.size());
}

// A message to itself (rank 0 of 1) arrives from the transfer of the same tag.
void send_receive_all(const std::vector<Transfer>& transfers) {
  for (const Transfer& t : transfers) {
    if (t.source != 0) continue;
    for (const Transfer& s : transfers)
      if (s.dest == 0 && s.tag == t.tag)
        std::copy_n(s.send, std::min(s.send_count, t.recv_count), t.recv);
  }
}

std::vector<std::string> gather_text_to_root(const std::string& mine) { return {mine}; }

std::vector<double> gather_to_root(const std::vector<double>& mine,
                                   const std::vector<std::int64_t>&) {
  return mine;
}

std::vector<double> gather_all(const std::vector<double>& mine, const std::vector<std::int64_t>&) {
  return mine;
}

std::vector<double> scatter_from_root(const std::vector<double>& all,
                                      const std::vector<std::int64_t>&) {
  return all;
}

}  // namespace heatsim::solver::parallel
