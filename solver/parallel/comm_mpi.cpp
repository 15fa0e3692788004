// The MPI implementation of comm.hpp: the only file of heatsim that includes mpi.h.
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI's extensions: MPIX_Query_cuda_support
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "comm.hpp"

namespace heatsim::solver::parallel {
namespace {

std::string error_text(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return std::string(text, static_cast<std::size_t>(std::max(len, 0)));
}

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  throw std::runtime_error(std::string(what) + ": " + error_text(rc));
}

int as_int(std::size_t n) {
  if (n > static_cast<std::size_t>(2147483647))
    throw std::runtime_error("MPI message of more than 2^31 values");
  return static_cast<int>(n);
}

// Whether a launcher (mpirun or mpiexec of OpenMPI, MPICH or Intel MPI, srun with PMI or PMIx)
// started this process: each leaves its variables in the environment.
bool started_by_a_launcher() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(name)) return true;
  return false;
}

// MPI runs only under a launcher. A process started alone is rank 0 of 1 without it: OpenMPI's
// singleton start-up spawns a helper daemon in the process's group (0.4 s on a 2-core machine),
// and a Ctrl-C or `timeout -s INT` reaching the group then kills the daemon and fails MPI_Init,
// so that a run stopped in its first moments wrote nothing and exited 1.
bool g_mpi = false;

}  // namespace

Environment::Environment(int& argc, char**& argv) {
  if (!started_by_a_launcher()) return;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  g_mpi = true;
}

namespace {

// The node-shared segments of allocate_node_shared, freed when MPI is finalized.
std::vector<MPI_Win>& node_windows() {
  static std::vector<MPI_Win> windows;
  return windows;
}

}  // namespace

Environment::~Environment() {
  if (!g_mpi) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  for (MPI_Win& w : node_windows()) {
    MPI_Win_unlock_all(w);
    MPI_Win_free(&w);
  }
  node_windows().clear();
  MPI_Finalize();
}

bool mpi_built() { return true; }
bool cuda_aware_mpi() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}
std::string mpi_library() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string s(text, static_cast<std::size_t>(std::max(length, 0)));
  const std::size_t end = s.find_first_of("\n,");
  return s.substr(0, end);
}

int rank() {
  int r = 0;
  if (g_mpi) MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int size() {
  int s = 1;
  if (g_mpi) MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

namespace {

// The processes of this node, split once and kept for the run.
MPI_Comm node_comm() {
  static MPI_Comm node = MPI_COMM_NULL;
  if (node == MPI_COMM_NULL)
    check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
          "MPI_Comm_split_type");
  return node;
}

}  // namespace

int node_rank() {
  int r = 0;
  if (!g_mpi) return r;
  check(MPI_Comm_rank(node_comm(), &r), "MPI_Comm_rank");
  return r;
}

int node_size() {
  int s = 1;
  if (!g_mpi) return s;
  check(MPI_Comm_size(node_comm(), &s), "MPI_Comm_size");
  return s;
}

NodeSegment allocate_node_shared(std::size_t bytes) {
  NodeSegment segment;
  segment.parts.assign(static_cast<std::size_t>(size()), nullptr);
  if (!g_mpi) return segment;
  constexpr std::size_t kPage = 4096;
  bytes = std::max<std::size_t>((bytes + kPage - 1) / kPage * kPage, kPage);
  const MPI_Comm node = node_comm();
  void* mine = nullptr;
  MPI_Win win = MPI_WIN_NULL;
  // A node without room for the segment (a small /dev/shm or session directory) is no error:
  // its ranks exchange messages instead, all of them, as agreed below.
  MPI_Errhandler fatal;
  check(MPI_Comm_get_errhandler(node, &fatal), "MPI_Comm_get_errhandler");
  check(MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  const int rc = MPI_Win_allocate_shared(static_cast<MPI_Aint>(bytes), sizeof(double),
                                         MPI_INFO_NULL, node, &mine, &win);
  check(MPI_Comm_set_errhandler(node, fatal), "MPI_Comm_set_errhandler");
  MPI_Errhandler_free(&fatal);
  int everywhere = rc == MPI_SUCCESS ? 1 : 0;
  check(MPI_Allreduce(MPI_IN_PLACE, &everywhere, 1, MPI_INT, MPI_MIN, node), "MPI_Allreduce");
  if (!everywhere) {
    // A window some ranks of the node have and others not cannot be freed together (its free
    // is collective): it is left to the end of the process.
    segment.why_not = rc == MPI_SUCCESS ? "another rank of this node could not have it"
                                        : error_text(rc);
    return segment;
  }
  check(MPI_Win_lock_all(MPI_MODE_NOCHECK, win), "MPI_Win_lock_all");
  node_windows().push_back(win);  // unlocked and freed when MPI is finalized
  // Its pages touched now: memory the system promised but cannot give (a full tmpfs) fails
  // here, before the run, not in the middle of it. Every rank of the node is done with that
  // before any writes a slab into another's part.
  std::memset(mine, 0, bytes);
  check(MPI_Win_sync(win), "MPI_Win_sync");
  check(MPI_Barrier(node), "MPI_Barrier");
  // The node's ranks as world ranks.
  int count = 0;
  check(MPI_Comm_size(node, &count), "MPI_Comm_size");
  std::vector<int> local(static_cast<std::size_t>(count)), world(local.size());
  for (int i = 0; i < count; ++i) local[static_cast<std::size_t>(i)] = i;
  MPI_Group node_group, world_group;
  check(MPI_Comm_group(node, &node_group), "MPI_Comm_group");
  check(MPI_Comm_group(MPI_COMM_WORLD, &world_group), "MPI_Comm_group");
  check(MPI_Group_translate_ranks(node_group, count, local.data(), world_group, world.data()),
        "MPI_Group_translate_ranks");
  MPI_Group_free(&node_group);
  MPI_Group_free(&world_group);
  char* expected = nullptr;  // where the next part starts if the segment is contiguous
  bool contiguous = true;
  for (int i = 0; i < count; ++i) {
    MPI_Aint part_bytes = 0;
    int unit = 0;
    void* part = nullptr;
    check(MPI_Win_shared_query(win, i, &part_bytes, &unit, &part), "MPI_Win_shared_query");
    segment.parts[static_cast<std::size_t>(world[static_cast<std::size_t>(i)])] =
        static_cast<double*>(part);
    if (i == 0)
      segment.base = part;
    else if (static_cast<char*>(part) != expected)
      contiguous = false;
    expected = static_cast<char*>(part) + part_bytes;
  }
  if (contiguous && segment.base) {
    segment.bytes = static_cast<std::size_t>(expected - static_cast<char*>(segment.base));
  } else {
    segment.base = nullptr;
  }
  return segment;
}

void sync_node_shared() {
  for (MPI_Win w : node_windows()) check(MPI_Win_sync(w), "MPI_Win_sync");
}

void abort_all(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  if (!g_mpi) std::exit(code);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // not reached
}

void barrier() { check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

void max_all(std::vector<std::int64_t>& values) {
  check(MPI_Allreduce(MPI_IN_PLACE, values.data(), as_int(values.size()), MPI_INT64_T, MPI_MAX,
                      MPI_COMM_WORLD),
        "MPI_Allreduce");
}

void max_all(std::vector<double>& values) {
  check(MPI_Allreduce(MPI_IN_PLACE, values.data(), as_int(values.size()), MPI_DOUBLE, MPI_MAX,
                      MPI_COMM_WORLD),
        "MPI_Allreduce");
}

void min_all(std::vector<double>& values) {
  check(MPI_Allreduce(MPI_IN_PLACE, values.data(), as_int(values.size()), MPI_DOUBLE, MPI_MIN,
                      MPI_COMM_WORLD),
        "MPI_Allreduce");
}

void sum_all(std::vector<double>& values) {
  check(MPI_Allreduce(MPI_IN_PLACE, values.data(), as_int(values.size()), MPI_DOUBLE, MPI_SUM,
                      MPI_COMM_WORLD),
        "MPI_Allreduce");
}

std::vector<double> gather_all(double value) {
  std::vector<double> all(static_cast<std::size_t>(size()));
  check(MPI_Allgather(&value, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD),
        "MPI_Allgather");
  return all;
}

void send_receive(const std::vector<double>& send, int dest, std::vector<double>& recv, int source,
                  int tag) {
  check(MPI_Sendrecv(send.data(), dest < 0 ? 0 : as_int(send.size()), MPI_DOUBLE,
                     dest < 0 ? MPI_PROC_NULL : dest, tag, recv.data(),
                     source < 0 ? 0 : as_int(recv.size()), MPI_DOUBLE,
                     source < 0 ? MPI_PROC_NULL : source, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
        "MPI_Sendrecv");
}

void send_receive_all(const std::vector<Transfer>& transfers) {
  std::vector<MPI_Request> requests;
  requests.reserve(2 * transfers.size());
  // Receives first, so every message finds its buffer posted.
  for (const Transfer& t : transfers) {
    if (t.source < 0) continue;
    requests.emplace_back();
    check(MPI_Irecv(t.recv, as_int(t.recv_count), MPI_DOUBLE, t.source, t.tag,
                    MPI_COMM_WORLD, &requests.back()),
          "MPI_Irecv");
  }
  for (const Transfer& t : transfers) {
    if (t.dest < 0) continue;
    requests.emplace_back();
    check(MPI_Isend(t.send, as_int(t.send_count), MPI_DOUBLE, t.dest, t.tag,
                    MPI_COMM_WORLD, &requests.back()),
          "MPI_Isend");
  }
  check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
        "MPI_Waitall");
}

std::vector<std::string> gather_text_to_root(const std::string& mine) {
  const bool root = rank() == 0;
  const int length = as_int(mine.size());
  std::vector<int> lengths(root ? static_cast<std::size_t>(size()) : 0), offsets;
  check(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD),
        "MPI_Gather");
  std::string all;
  if (root) {
    int total = 0;
    for (int l : lengths) {
      offsets.push_back(total);
      total += l;
    }
    all.resize(static_cast<std::size_t>(total));
  }
  check(MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
                    MPI_CHAR, 0, MPI_COMM_WORLD),
        "MPI_Gatherv");
  std::vector<std::string> texts;
  for (std::size_t r = 0; r < lengths.size(); ++r)
    texts.push_back(
        all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  return texts;
}

std::vector<double> gather_to_root(const std::vector<double>& mine,
                                   const std::vector<std::int64_t>& counts) {
  const bool root = rank() == 0;
  std::vector<int> sizes, offsets;
  std::vector<double> all;
  if (root) {
    std::int64_t total = 0;
    for (std::int64_t c : counts) {
      sizes.push_back(as_int(static_cast<std::size_t>(c)));
      offsets.push_back(as_int(static_cast<std::size_t>(total)));
      total += c;
    }
    all.resize(static_cast<std::size_t>(total));
  }
  check(MPI_Gatherv(mine.data(), as_int(mine.size()), MPI_DOUBLE, all.data(), sizes.data(),
                    offsets.data(), MPI_DOUBLE, 0, MPI_COMM_WORLD),
        "MPI_Gatherv");
  return all;
}

namespace {

// MPI's counts and displacements of a v-collective from per-rank counts.
void displacements(const std::vector<std::int64_t>& counts, std::vector<int>& sizes,
                   std::vector<int>& offsets, std::size_t& total) {
  total = 0;
  for (std::int64_t c : counts) {
    sizes.push_back(as_int(static_cast<std::size_t>(c)));
    offsets.push_back(as_int(total));
    total += static_cast<std::size_t>(c);
  }
}

}  // namespace

std::vector<double> gather_all(const std::vector<double>& mine,
                               const std::vector<std::int64_t>& counts) {
  std::vector<int> sizes, offsets;
  std::size_t total = 0;
  displacements(counts, sizes, offsets, total);
  std::vector<double> all(total);
  check(MPI_Allgatherv(mine.data(), as_int(mine.size()), MPI_DOUBLE, all.data(), sizes.data(),
                       offsets.data(), MPI_DOUBLE, MPI_COMM_WORLD),
        "MPI_Allgatherv");
  return all;
}

std::vector<double> scatter_from_root(const std::vector<double>& all,
                                      const std::vector<std::int64_t>& counts) {
  std::vector<int> sizes, offsets;
  std::size_t total = 0;
  displacements(counts, sizes, offsets, total);
  std::vector<double> mine(static_cast<std::size_t>(counts.at(static_cast<std::size_t>(rank()))));
  check(MPI_Scatterv(all.data(), sizes.data(), offsets.data(), MPI_DOUBLE, mine.data(),
                     as_int(mine.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD),
        "MPI_Scatterv");
  return mine;
}

}  // namespace heatsim::solver::parallel
