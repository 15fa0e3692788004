// The steady heat-conduction system heatsim solves, assembled with hypre's Struct interface and
// solved by PFMG-preconditioned CG: the peer for scripts/hypre-vs-heatsim. Not part of the
// CMake build; the script compiles it against Debian's libhypre-dev:
//   mpicxx -O2 scripts/hypre_driver.cpp -I/usr/include/hypre -lHYPRE -o hypre_driver
//
// The case: a cube of side L (0.05 m), n^3 nodes, h = L/(n-1) on every axis, every face held at
// 300 K. Free nodes are the interior (n-2)^3; each row i is heatsim's (solver/multigrid/
// conductance.hpp, interior rows have node weight 1):
//   sum_j G_ij (u_i - u_j) = q_i,   G_ij = K_ij / h^2,   K_ij = 2 k_i k_j / (k_i + k_j),
// with a Dirichlet neighbour's G_ij * 300 moved to the right-hand side. Conductivity and source:
//   homogeneous  k = 237 everywhere, q = 1e5 W/m^3 everywhere;
//   cube         copper k = 390 on the nodes within m = floor(3 (n-1) / 10) of the centre node
//                along every axis (a cube of half-width (m + 1/2) h, about 15 mm, whose faces
//                lie midway between nodes: there heatsim's geometry below the grid gives these
//                node values, the harmonic means and whole-node sources exactly), epoxy k = 0.2
//                elsewhere; q = 1e5 W/m^3 on the cube's nodes;
//   ball         copper on the nodes within 15 mm of the centre (1e-9 h), epoxy elsewhere, q on
//                the ball's nodes: a node-sampled ball, which heatsim no longer solves (it
//                takes the ball's surface between the nodes: solver/subgrid.hpp), kept to show
//                the difference.
// The start vector is 300 K on every free node (heatsim's steady run starts from its initial
// field, constant 300 K).
//
// Grid split in z among the ranks. The solver: HYPRE_StructPCG (two-norm, relative tolerance
// --tolerance on the recursively updated residual), preconditioned by one PFMG V-cycle (Galerkin
// coarse operators, RAP type 0; red-black Gauss-Seidel, relax type 2, the symmetric ordering a
// CG preconditioner needs; 1 pre and 1 post sweep; hypre's default levels and skip-relax).
//
// Prints one line per result, `key value` pairs the script reads:
//   hypre iterations 9 setup_s 0.12 solve_s 0.45 own_relres 3e-11 true_relres 3e-11 centre 312.5
// where true_relres = ||b - A x|| / ||b|| computed after the solve with HYPRE_StructMatrixMatvec.
// With --field PATH (a raw little-endian fp64 field of the n^3 nodes, x fastest: heatsim's
// output as `h5dump -b LE` writes it) the same residual and the centre value of that field:
//   field true_relres 4e-11 centre 312.5 maxdiff 1e-9 maxrise 17.7
// (maxdiff: the largest |field - hypre's x| over the free nodes; maxrise: hypre's largest
// |x - 300 K|).
// The MPI C API only (OpenMPI and MPICH otherwise pull in their C++ bindings).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <HYPRE_struct_ls.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Options {
  int n = 65;
  std::string material = "cube";  // homogeneous | cube | ball
  double tolerance = 1e-10;
  int max_iterations = 500;
  std::string field;  // heatsim's solution to check, or empty
};

constexpr double kLength = 0.05;
constexpr double kFace = 300.0;
constexpr double kDensity = 1e5;  // W/m^3

[[noreturn]] void usage(const char* message) {
  std::fprintf(stderr,
               "hypre_driver: %s\nusage: hypre_driver --n N --case homogeneous|cube|ball "
               "[--tolerance 1e-10] [--max-iterations 500] [--field heatsim.bin]\n",
               message);
  MPI_Abort(MPI_COMM_WORLD, 2);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage(("missing value after " + a).c_str());
    const char* v = argv[++i];
    if (a == "--n")
      o.n = std::atoi(v);
    else if (a == "--case")
      o.material = v;
    else if (a == "--tolerance")
      o.tolerance = std::atof(v);
    else if (a == "--max-iterations")
      o.max_iterations = std::atoi(v);
    else if (a == "--field")
      o.field = v;
    else
      usage(("unknown option " + a).c_str());
  }
  if (o.n < 5) usage("--n must be at least 5");
  if (o.material != "homogeneous" && o.material != "cube" && o.material != "ball")
    usage("--case: homogeneous, cube or ball");
  if (o.material == "cube" && o.n % 2 == 0) usage("--case cube needs an odd --n (a centre node)");
  return o;
}

// The case's conductivity and source at node (i, j, k) of the n^3 grid.
struct Case {
  int n;
  double h;
  std::string material;

  bool inside(int i, int j, int k) const {
    if (material == "cube") {
      const int mid = (n - 1) / 2, m = 3 * (n - 1) / 10;
      return std::abs(i - mid) <= m && std::abs(j - mid) <= m && std::abs(k - mid) <= m;
    }
    const double c = 0.5 * kLength;
    const double x = i * h - c, y = j * h - c, z = k * h - c;
    return std::sqrt(x * x + y * y + z * z) <= 0.015 + 1e-9 * h;
  }
  double conductivity(int i, int j, int k) const {
    if (material == "homogeneous") return 237.0;
    return inside(i, j, k) ? 390.0 : 0.2;
  }
  double source(int i, int j, int k) const {
    if (material == "homogeneous") return kDensity;
    return inside(i, j, k) ? kDensity : 0.0;
  }
  bool fixed(int i, int j, int k) const {
    return i == 0 || j == 0 || k == 0 || i == n - 1 || j == n - 1 || k == n - 1;
  }
};

double harmonic(double a, double b) { return 2.0 * a * b / (a + b); }

double global_norm(const std::vector<double>& v) {
  double local = 0.0;
  for (double x : v) local += x * x;
  double sum = 0.0;
  MPI_Allreduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return std::sqrt(sum);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const Options opt = parse(argc, argv);
  HYPRE_Init();

  const int n = opt.n;
  const Case c{n, kLength / (n - 1), opt.material};
  const double g = 1.0 / (c.h * c.h);

  // This rank's slab of the free nodes 1..n-2 in z.
  const int planes = n - 2;
  const int z0 = 1 + static_cast<int>(static_cast<long long>(planes) * rank / ranks);
  const int z1 = static_cast<int>(static_cast<long long>(planes) * (rank + 1) / ranks);  // incl.
  int lower[3] = {1, 1, z0}, upper[3] = {n - 2, n - 2, z1};
  const int m = n - 2;
  const std::size_t local = static_cast<std::size_t>(m) * m * std::max(0, z1 - z0 + 1);

  const double t_assemble = MPI_Wtime();
  HYPRE_StructGrid grid;
  HYPRE_StructGridCreate(MPI_COMM_WORLD, 3, &grid);
  if (local > 0) HYPRE_StructGridSetExtents(grid, lower, upper);
  HYPRE_StructGridAssemble(grid);

  // Entry 0 the node itself, then x-, x+, y-, y+, z-, z+.
  const int offsets[7][3] = {{0, 0, 0}, {-1, 0, 0}, {1, 0, 0}, {0, -1, 0},
                             {0, 1, 0}, {0, 0, -1}, {0, 0, 1}};
  HYPRE_StructStencil stencil;
  HYPRE_StructStencilCreate(3, 7, &stencil);
  for (int e = 0; e < 7; ++e)
    HYPRE_StructStencilSetElement(stencil, e, const_cast<int*>(offsets[e]));

  HYPRE_StructMatrix A;
  HYPRE_StructMatrixCreate(MPI_COMM_WORLD, grid, stencil, &A);
  HYPRE_StructMatrixInitialize(A);
  std::vector<double> values(local * 7), rhs(local), start(local, kFace);
  {
    std::size_t p = 0;
    for (int k = z0; k <= z1; ++k)
      for (int j = 1; j <= n - 2; ++j)
        for (int i = 1; i <= n - 2; ++i, ++p) {
          const double ki = c.conductivity(i, j, k);
          double diagonal = 0.0, b = c.source(i, j, k);
          for (int e = 1; e < 7; ++e) {
            const int a = i + offsets[e][0], bj = j + offsets[e][1], bk = k + offsets[e][2];
            const double gij = harmonic(ki, c.conductivity(a, bj, bk)) * g;
            diagonal += gij;
            if (c.fixed(a, bj, bk)) {
              values[p * 7 + e] = 0.0;  // the Dirichlet neighbour's term is in b
              b += gij * kFace;
            } else {
              values[p * 7 + e] = -gij;
            }
          }
          values[p * 7] = diagonal;
          rhs[p] = b;
        }
  }
  int entries[7] = {0, 1, 2, 3, 4, 5, 6};
  if (local > 0) HYPRE_StructMatrixSetBoxValues(A, lower, upper, 7, entries, values.data());
  HYPRE_StructMatrixAssemble(A);

  HYPRE_StructVector b, x;
  HYPRE_StructVectorCreate(MPI_COMM_WORLD, grid, &b);
  HYPRE_StructVectorCreate(MPI_COMM_WORLD, grid, &x);
  HYPRE_StructVectorInitialize(b);
  HYPRE_StructVectorInitialize(x);
  if (local > 0) {
    HYPRE_StructVectorSetBoxValues(b, lower, upper, rhs.data());
    HYPRE_StructVectorSetBoxValues(x, lower, upper, start.data());
  }
  HYPRE_StructVectorAssemble(b);
  HYPRE_StructVectorAssemble(x);
  MPI_Barrier(MPI_COMM_WORLD);
  const double assemble_s = MPI_Wtime() - t_assemble;

  HYPRE_StructSolver pcg, pfmg;
  HYPRE_StructPCGCreate(MPI_COMM_WORLD, &pcg);
  HYPRE_StructPCGSetTol(pcg, opt.tolerance);
  HYPRE_StructPCGSetMaxIter(pcg, opt.max_iterations);
  HYPRE_StructPCGSetTwoNorm(pcg, 1);
  HYPRE_StructPCGSetRelChange(pcg, 0);
  HYPRE_StructPCGSetLogging(pcg, 1);
  HYPRE_StructPFMGCreate(MPI_COMM_WORLD, &pfmg);
  HYPRE_StructPFMGSetMaxIter(pfmg, 1);
  HYPRE_StructPFMGSetTol(pfmg, 0.0);
  HYPRE_StructPFMGSetZeroGuess(pfmg);
  HYPRE_StructPFMGSetRAPType(pfmg, 0);
  HYPRE_StructPFMGSetRelaxType(pfmg, 2);
  HYPRE_StructPFMGSetNumPreRelax(pfmg, 1);
  HYPRE_StructPFMGSetNumPostRelax(pfmg, 1);
  HYPRE_StructPCGSetPrecond(pcg, HYPRE_StructPFMGSolve, HYPRE_StructPFMGSetup, pfmg);

  MPI_Barrier(MPI_COMM_WORLD);
  const double t_setup = MPI_Wtime();
  HYPRE_StructPCGSetup(pcg, A, b, x);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t_solve = MPI_Wtime();
  HYPRE_StructPCGSolve(pcg, A, b, x);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t_end = MPI_Wtime();

  int iterations = 0, max_levels = 0, skip = 0;
  double own = 0.0;
  HYPRE_StructPCGGetNumIterations(pcg, &iterations);
  HYPRE_StructPCGGetFinalRelativeResidualNorm(pcg, &own);
  HYPRE_StructPFMGGetMaxLevels(pfmg, &max_levels);
  HYPRE_StructPFMGGetSkipRelax(pfmg, &skip);

  const double norm_b = global_norm(rhs);
  // ||b - A v|| / ||b|| and the centre node's value of a vector v given on this rank's slab.
  HYPRE_StructVector r;
  HYPRE_StructVectorCreate(MPI_COMM_WORLD, grid, &r);
  HYPRE_StructVectorInitialize(r);
  const int centre = (n - 1) / 2;
  std::vector<double> solution(local);  // hypre's answer, to compare the field with
  auto judge = [&](HYPRE_StructVector v, double& relres, double& at_centre) {
    if (local > 0) HYPRE_StructVectorSetBoxValues(r, lower, upper, rhs.data());
    HYPRE_StructVectorAssemble(r);
    HYPRE_StructMatrixMatvec(-1.0, A, v, 1.0, r);
    std::vector<double> res(local), sol(local);
    if (local > 0) {
      HYPRE_StructVectorGetBoxValues(r, lower, upper, res.data());
      HYPRE_StructVectorGetBoxValues(v, lower, upper, sol.data());
    }
    relres = global_norm(res) / norm_b;
    double mine = 0.0;
    if (centre >= z0 && centre <= z1)
      mine = sol[(static_cast<std::size_t>(centre - z0) * m + (centre - 1)) * m + (centre - 1)];
    MPI_Allreduce(&mine, &at_centre, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  };
  double relres = 0.0, at_centre = 0.0;
  judge(x, relres, at_centre);
  if (local > 0) HYPRE_StructVectorGetBoxValues(x, lower, upper, solution.data());
  if (rank == 0) {
    std::printf(
        "# %s n %d: %d rank%s, %lld free nodes, h %.6g m, PFMG max_levels %d, "
        "skip_relax %d, assembly %.3f s\n",
        opt.material.c_str(), n, ranks, ranks == 1 ? "" : "s", static_cast<long long>(m) * m * m,
        c.h, max_levels, skip, assemble_s);
    std::printf(
        "hypre iterations %d setup_s %.6f solve_s %.6f own_relres %.6e true_relres %.6e "
        "centre %.15g\n",
        iterations, t_solve - t_setup, t_end - t_solve, own, relres, at_centre);
  }

  if (!opt.field.empty()) {
    // This rank's planes of the full n^3 field, then its free nodes.
    std::FILE* f = std::fopen(opt.field.c_str(), "rb");
    if (!f) usage(("cannot open --field " + opt.field).c_str());
    std::fseek(f, 0, SEEK_END);
    const long long bytes = std::ftell(f);
    if (bytes != static_cast<long long>(n) * n * n * 8) usage("--field: not n^3 doubles");
    std::vector<double> plane(static_cast<std::size_t>(n) * n), given(local);
    std::size_t p = 0;
    for (int k = z0; k <= z1; ++k) {
      std::fseek(f, static_cast<long>(static_cast<long long>(k) * n * n * 8), SEEK_SET);
      if (std::fread(plane.data(), 8, plane.size(), f) != plane.size())
        usage("--field: short read");
      for (int j = 1; j <= n - 2; ++j)
        for (int i = 1; i <= n - 2; ++i) given[p++] = plane[static_cast<std::size_t>(j) * n + i];
    }
    std::fclose(f);
    HYPRE_StructVector v;
    HYPRE_StructVectorCreate(MPI_COMM_WORLD, grid, &v);
    HYPRE_StructVectorInitialize(v);
    if (local > 0) HYPRE_StructVectorSetBoxValues(v, lower, upper, given.data());
    HYPRE_StructVectorAssemble(v);
    double field_relres = 0.0, field_centre = 0.0;
    judge(v, field_relres, field_centre);
    // The largest difference from hypre's answer over the free nodes, and the largest rise
    // above the faces' 300 K, which it is best read against.
    double mine[2] = {0.0, 0.0}, most[2] = {0.0, 0.0};
    for (std::size_t i = 0; i < local; ++i) {
      mine[0] = std::max(mine[0], std::abs(given[i] - solution[i]));
      mine[1] = std::max(mine[1], std::abs(solution[i] - kFace));
    }
    MPI_Allreduce(mine, most, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
      std::printf("field true_relres %.6e centre %.15g maxdiff %.6e maxrise %.6e\n", field_relres,
                  field_centre, most[0], most[1]);
    HYPRE_StructVectorDestroy(v);
  }

  HYPRE_StructVectorDestroy(r);
  HYPRE_StructPFMGDestroy(pfmg);
  HYPRE_StructPCGDestroy(pcg);
  HYPRE_StructVectorDestroy(x);
  HYPRE_StructVectorDestroy(b);
  HYPRE_StructMatrixDestroy(A);
  HYPRE_StructStencilDestroy(stencil);
  HYPRE_StructGridDestroy(grid);
  HYPRE_Finalize();
  MPI_Finalize();
  return 0;
}
