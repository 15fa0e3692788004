// A real-valued expression of named variables, compiled once and evaluated at every node (the
// `expression` initial condition: u(x, y, z) at t = 0; `where` regions and sources).
//
//   expression := conjunction { "||" conjunction }                        (1 if true, else 0)
//   conjunction:= comparison { "&&" comparison }                          (1 if true, else 0)
//   comparison := sum [ ("<" | "<=" | ">" | ">=" | "==" | "!=") sum ]     (1 if true, else 0)
//   sum        := product { ("+" | "-") product }
//   product    := unary { ("*" | "/") unary }
//   unary      := ("-" | "+" | "!") unary | power             (!a is 1 if a == 0, else 0)
//   power      := primary [ "^" unary ]                   (right-associative; -x^2 = -(x^2))
//   primary    := number | name | name "(" expression { "," expression } ")" | "(" expression ")"
//
// Names are the variables given to compile(), the constants pi and e, and the functions
//   sin cos tan asin acos atan sinh cosh tanh exp log log10 sqrt abs floor ceil   (one argument)
//   min max pow atan2 hypot                                                        (two)
// with the C library's meaning. `&&`, `||` and `!` have C's meaning and precedence: a value is
// true when nonzero (NaN included), the result is 1 or 0. Numbers are decimal (1, 0.5, .5,
// 2e-3). Blanks are ignored.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace heatsim::solver {

// What is wrong with an expression, and where: column is 1-based, 0 for the whole text.
class ExpressionError : public std::invalid_argument {
 public:
  ExpressionError(const std::string& message, int column)
      : std::invalid_argument(message), column_(column) {}
  int column() const { return column_; }

 private:
  int column_;
};

class Expression {
 public:
  // Longest text and deepest nesting compile() takes.
  static constexpr std::size_t kMaxLength = 4096;
  static constexpr int kMaxDepth = 64;

  // Compiles `text`; `variables` name the values eval() takes, in that order. Throws
  // ExpressionError.
  static Expression compile(const std::string& text, const std::vector<std::string>& variables);

  // The value for variables[i] = values[i]. Safe to call from several threads at once.
  double eval(const double* values) const;

  // The values at up to kBlock points at once, each bit for bit eval()'s: variables[i][j] is
  // variable i at point j, out[j] the value at point j. One instruction runs over the whole
  // block before the next, so the program is walked once per block instead of once per
  // point. `scratch` holds block_scratch() doubles of the caller's (one per thread).
  static constexpr int kBlock = 256;
  std::size_t block_scratch() const {
    return static_cast<std::size_t>((stack_depth_ > 0 ? stack_depth_ : 1) + registers_) * kBlock;
  }
  void eval_block(const double* const* variables, int count, double* out, double* scratch) const;

  // Whether the value depends on variables[index] at all (the program reads it): where it does
  // not, points that differ only in that variable have the same value, to the bit.
  bool reads(int index) const;

  // The node test of a `where` shape over a grid of `n` nodes per axis (memory order, x first;
  // 1 on unused axes): inside[i] = 1 where the value at node i is nonzero and not NaN.
  // position(a, c) is the coordinate of index c on axis a. Blocks of kBlock nodes along x,
  // shared out over the threads: each value eval()'s, to the bit.
  template <typename Position>
  void node_test(int dims, const std::int64_t n[3], Position&& position, char* inside) const;

  // One instruction of the postfix program (public for the compiler in expression.cpp).
  struct Op {
    int code = 0;
    double value = 0.0;              // a number
    int index = 0;                   // a variable
    double (*f1)(double) = nullptr;  // a one-argument function
    double (*f2)(double, double) = nullptr;
    int operation = 0;  // a fused instruction's two-operand operation (eval_block's program)
  };

 private:
  std::vector<Op> program_;
  // program_ for eval_block: a variable or a number taken straight into the two-operand
  // operation that follows it (one pass over the block instead of two or three, the same
  // operation on the same operands: the same bits), and a part written twice or more (a
  // checkerboard's sum of floors) computed once and kept for the others.
  std::vector<Op> block_program_;
  int registers_ = 0;    // block_program_'s values kept for a second use (share_subtrees)
  int stack_depth_ = 0;  // the most values on the stack at once
};

template <typename Position>
void Expression::node_test(int dims, const std::int64_t n[3], Position&& position,
                           char* inside) const {
  const std::int64_t per_row = (n[0] + kBlock - 1) / kBlock, rows = n[1] * n[2];
#pragma omp parallel if (rows * n[0] >= 32768)
  {
    std::vector<double> scratch(block_scratch()), coords[3], values(kBlock);
    for (int a = 0; a < dims; ++a) coords[a].resize(kBlock);
    const double* columns[3] = {coords[0].data(), coords[1].data(), coords[2].data()};
#pragma omp for schedule(static)
    for (std::int64_t w = 0; w < rows * per_row; ++w) {
      const std::int64_t row = w / per_row, x0 = w % per_row * kBlock;
      const int count = static_cast<int>(std::min<std::int64_t>(kBlock, n[0] - x0));
      for (int j = 0; j < count; ++j) coords[0][j] = position(0, x0 + j);
      for (int a = 1; a < dims; ++a)
        std::fill_n(coords[a].begin(), count, position(a, a == 1 ? row % n[1] : row / n[1]));
      eval_block(columns, count, values.data(), scratch.data());
      for (int j = 0; j < count; ++j)
        inside[row * n[0] + x0 + j] = values[j] != 0.0 && !std::isnan(values[j]) ? 1 : 0;
    }
  }
}

}  // namespace heatsim::solver
