// The expression compiler behind `initial: {type: expression}`: values against the same
// arithmetic written in C++, precedence, and the errors with their columns.
#include "solver/expression.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <string>

namespace heatsim::solver {
namespace {

const std::vector<std::string> kXyz{"x", "y", "z"};

double eval(const std::string& text, double x = 0.3, double y = -1.25, double z = 2.0) {
  const double v[3] = {x, y, z};
  return Expression::compile(text, kXyz).eval(v);
}

// The 1-based column of the error compile() throws, or -1 when it compiles.
int error_column(const std::string& text, std::string* message = nullptr) {
  try {
    Expression::compile(text, kXyz);
  } catch (const ExpressionError& e) {
    if (message) *message = e.what();
    return e.column();
  }
  return -1;
}

TEST(Expression, EvaluatesLikeTheSameArithmeticInCpp) {
  const double x = 0.3, y = -1.25, z = 2.0;
  EXPECT_EQ(eval("x"), x);
  EXPECT_EQ(eval("  42 "), 42.0);
  EXPECT_EQ(eval(".5e1"), 5.0);
  EXPECT_EQ(eval("x + y * z"), x + y * z);
  EXPECT_EQ(eval("(x + y) * z"), (x + y) * z);
  EXPECT_EQ(eval("x - y - z"), (x - y) - z);
  EXPECT_EQ(eval("x / y / z"), (x / y) / z);
  EXPECT_EQ(eval("sin(pi * x) * exp(-((y - 0.5)^2) / 0.01)"),
            std::sin(M_PI * x) * std::exp(-std::pow(y - 0.5, 2.0) / 0.01));
  EXPECT_EQ(eval("e"), M_E);
  EXPECT_EQ(
      eval("min(x, y) + max(x, z) + pow(z, 3) + atan2(y, x) + hypot(x, y)"),
      std::fmin(x, y) + std::fmax(x, z) + std::pow(z, 3.0) + std::atan2(y, x) + std::hypot(x, y));
  EXPECT_EQ(
      eval("abs(y) + sqrt(z) + log(z) + log10(z) + floor(y) + ceil(y)"),
      std::fabs(y) + std::sqrt(z) + std::log(z) + std::log10(z) + std::floor(y) + std::ceil(y));
  EXPECT_EQ(eval("tanh(x) + cosh(x) + sinh(x) + tan(x) + asin(x) + acos(x) + atan(x) + cos(x)"),
            std::tanh(x) + std::cosh(x) + std::sinh(x) + std::tan(x) + std::asin(x) + std::acos(x) +
                std::atan(x) + std::cos(x));
}

TEST(Expression, PowerBindsTighterThanSignAndToTheRight) {
  EXPECT_EQ(eval("-2^2"), -4.0);
  EXPECT_EQ(eval("2^3^2"), 512.0);
  EXPECT_EQ(eval("2^-1"), 0.5);
  EXPECT_EQ(eval("- -3"), 3.0);
  EXPECT_EQ(eval("+3 * -2"), -6.0);
}

// A literal 2 as the exponent is the product x * x, rounded once: the same bits as C++'s x * x
// for every argument, among them ones whose square by glibc 2.36's pow is a unit in the last
// place off (0x1.3bb8ca3d2e024p-6), a signed zero, a subnormal's square and an overflow; in a
// point and in a block. Any other exponent, and pow(x, 2), stay std::pow's.
TEST(Expression, SquareOfALiteralTwoIsTheProduct) {
  const double args[] = {0x1.3bb8ca3d2e024p-6, -0x1.c2414d12833dap-6, 0x1.6e7ede9ba84b2p-5,
                         -0.0, 1e-310, 1.4e154, -3.75, 0.015};
  for (const char* text : {"x^2", "x^2.0", "x ^ (2)", "x^+2"}) {
    const Expression e = Expression::compile(text, kXyz);
    for (double a : args) {
      const double v[3] = {a, 0.0, 0.0}, want = a * a;
      const double got = e.eval(v);
      EXPECT_EQ(std::memcmp(&got, &want, sizeof got), 0) << text << " at " << a;
    }
    const double* columns[3] = {args, args, args};
    std::vector<double> scratch(e.block_scratch()), out(std::size(args));
    e.eval_block(columns, static_cast<int>(std::size(args)), out.data(), scratch.data());
    for (std::size_t i = 0; i < std::size(args); ++i) {
      const double want = args[i] * args[i];
      EXPECT_EQ(std::memcmp(&out[i], &want, sizeof want), 0) << text << " in a block at " << i;
    }
  }
  volatile double two = 2.0;  // std::pow at run time, not folded into a product
  const double a = 0x1.3bb8ca3d2e024p-6;
  EXPECT_EQ(eval("pow(x, 2)", a), std::pow(a, two));
  EXPECT_EQ(eval("x^2.5", 2.0), std::pow(2.0, 2.5));
  EXPECT_EQ(eval("x^-2", 4.0), 1.0 / 16.0);
  EXPECT_EQ(eval("2^x^2", 3.0), 512.0);
  EXPECT_EQ(eval("-x^2", 3.0), -9.0);
}

// floor and abs are evaluated in place (not through a function pointer): the C library's
// values bit for bit, in a point and in a block, at signed zeros, halves, values past 2^52,
// infinities and NaN; min and max (calls) beside them keep fmin's and fmax's signed zeros
// (inlined in a block the compiler's gave -0 and +0 the other way round) and take the number
// beside a NaN.
TEST(Expression, InPlaceFunctionsAreTheLibrarys) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const double xs[] = {-0.0,   0.0,          -0.5, 0.5,  -2.5, 7.999999999999999,
                       -1e300, 0x1p53 + 2.0, inf,  -inf, nan,  3.0};
  const double ys[] = {0.0, -0.0, nan, -0.5, 1.0, 8.0, nan, 0x1p53, -inf, inf, 1.0, nan};
  struct Case {
    const char* text;
    double (*want)(double, double);
  };
  const Case cases[] = {
      {"floor(x)", [](double x, double) { return std::floor(x); }},
      {"abs(x)", [](double x, double) { return std::fabs(x); }},
      {"min(x, y)", [](double x, double y) { return std::fmin(x, y); }},
      {"max(x, y)", [](double x, double y) { return std::fmax(x, y); }},
      {"floor(x) + abs(y)", [](double x, double y) { return std::floor(x) + std::fabs(y); }},
  };
  const double zs[std::size(xs)] = {};
  for (const Case& c : cases) {
    const Expression f = Expression::compile(c.text, kXyz);
    const double* columns[3] = {xs, ys, zs};
    std::vector<double> scratch(f.block_scratch()), out(std::size(xs));
    f.eval_block(columns, static_cast<int>(std::size(xs)), out.data(), scratch.data());
    for (std::size_t i = 0; i < std::size(xs); ++i) {
      const double v[3] = {xs[i], ys[i], 0.0}, want = c.want(xs[i], ys[i]);
      const double got = f.eval(v);
      EXPECT_EQ(std::memcmp(&got, &want, sizeof got), 0)
          << c.text << " at " << xs[i] << ", " << ys[i];
      EXPECT_EQ(std::memcmp(&out[i], &want, sizeof want), 0)
          << c.text << " in a block at " << xs[i] << ", " << ys[i];
    }
  }
}

TEST(Expression, ComparisonsGiveOneOrZero) {
  EXPECT_EQ(eval("x < 0.5"), 1.0);
  EXPECT_EQ(eval("x >= 0.5"), 0.0);
  EXPECT_EQ(eval("(x <= 0.3) + (x == 0.3) + (x != 0.3) + (y > 0)"), 2.0);
  // A hot square: 2 inside [0.25, 0.75]^2, 0 outside.
  EXPECT_EQ(eval("2 * (x > 0.25) * (x < 0.75) * (y > 0.25) * (y < 0.75)", 0.5, 0.5), 2.0);
  EXPECT_EQ(eval("2 * (x > 0.25) * (x < 0.75) * (y > 0.25) * (y < 0.75)", 0.5, 0.8), 0.0);
}

TEST(Expression, LogicalOperatorsHaveCMeaningAndPrecedence) {
  const double x = 0.3, y = -1.25, z = 2.0;
  EXPECT_EQ(eval("x > 0 && y < 0"), 1.0);
  EXPECT_EQ(eval("x > 0 && y > 0"), 0.0);
  EXPECT_EQ(eval("x < 0 || y < 0"), 1.0);
  EXPECT_EQ(eval("x < 0 || y > 0"), 0.0);
  // Operands are true when nonzero; the result is 1 or 0 (C: 2 && -3 is 1).
  EXPECT_EQ(eval("2 && -3"), 1.0);
  EXPECT_EQ(eval("0 || 0.5"), 1.0);
  EXPECT_EQ(eval("!0"), 1.0);
  EXPECT_EQ(eval("!2.5"), 0.0);
  EXPECT_EQ(eval("!!z"), 1.0);
  // && binds tighter than ||, both looser than comparisons and arithmetic, as in C.
  EXPECT_EQ(eval("1 || 0 && 0"), double(1 || (0 && 0)));
  EXPECT_EQ(eval("0 && 0 || 1"), double((0 && 0) || 1));
  EXPECT_EQ(eval("x + 1 > 1 && z - 2 == 0"), double((x + 1 > 1) && (z - 2 == 0)));
  // ! is a unary operator as in C: !x < 1 is (!x) < 1, and !x^2 is !(x^2) like -x^2.
  EXPECT_EQ(eval("!x < 1"), double((!x) < 1));
  EXPECT_EQ(eval("!y^2"), 0.0);
  EXPECT_EQ(eval("!(x > 0) || y < 0"), 1.0);
  // The region formula: inside a slab of half width 0.004 around 0.01, above z = 0.002.
  const auto slab = [](double px, double pz) {
    return eval("abs(x - 0.01) < 0.004 && z > 0.002", px, 0.0, pz);
  };
  EXPECT_EQ(slab(0.012, 0.003), 1.0);
  EXPECT_EQ(slab(0.016, 0.003), 0.0);
  EXPECT_EQ(slab(0.012, 0.001), 0.0);
  EXPECT_EQ(eval("min(x > 0 && y > 0, 1) + (x || 0)"), 1.0);
  // NaN is nonzero in C, so it counts as true; !NaN is 0.
  EXPECT_EQ(eval("sqrt(y) && 1"), 1.0);
  EXPECT_EQ(eval("!sqrt(y)"), 0.0);
  (void)y;
}

TEST(Expression, LogicalOperatorErrorsSayWhere) {
  std::string m;
  EXPECT_EQ(error_column("x & y", &m), 3);
  EXPECT_NE(m.find("unexpected '&'"), std::string::npos) << m;
  EXPECT_EQ(error_column("x | y"), 3);
  EXPECT_EQ(error_column("x &&", &m), 5);
  EXPECT_NE(m.find("unexpected end"), std::string::npos) << m;
  EXPECT_EQ(error_column("|| x"), 1);
  EXPECT_GT(error_column(std::string(1000, '!') + "x", &m), 0);
  EXPECT_NE(m.find("nested deeper"), std::string::npos) << m;
}

// Python's logical words, where C's operators belong, are named with the operator to write.
TEST(Expression, LogicalWordsPointToTheOperators) {
  std::string m;
  EXPECT_EQ(error_column("x > 0.2 and y < 0.5", &m), 9);
  EXPECT_NE(m.find("unexpected 'and': write && for and"), std::string::npos) << m;
  EXPECT_EQ(error_column("x < 0 or x > 1", &m), 7);
  EXPECT_NE(m.find("write || for or"), std::string::npos) << m;
  EXPECT_EQ(error_column("not (x > 0)", &m), 1);
  EXPECT_NE(m.find("write ! for not"), std::string::npos) << m;
  // A word that merely begins so is no such hint.
  EXPECT_EQ(error_column("x > 0 android", &m), 7);
  EXPECT_NE(m.find("unexpected 'a' (an operator or the end)"), std::string::npos) << m;
}

TEST(Expression, VariablesAreTheOnesGiven) {
  const double v[1] = {3.0};
  EXPECT_EQ(Expression::compile("2 * x", {"x"}).eval(v), 6.0);
  std::string message;
  try {
    Expression::compile("x + y", {"x"});
    FAIL() << "compiled an unknown variable";
  } catch (const ExpressionError& e) {
    EXPECT_EQ(e.column(), 5);
    message = e.what();
  }
  EXPECT_NE(message.find("unknown name 'y'"), std::string::npos) << message;
  EXPECT_NE(message.find("variables: x,"), std::string::npos) << message;
}

// reads(i): whether the program takes variable i anywhere, constants and functions aside.
TEST(Expression, ReadsTheVariablesItNames) {
  const std::vector<std::string> xyz = {"x", "y", "z"};
  const Expression layers = Expression::compile("z / 2 - floor(z / 4 + pi) > 0.5", xyz);
  EXPECT_FALSE(layers.reads(0));
  EXPECT_FALSE(layers.reads(1));
  EXPECT_TRUE(layers.reads(2));
  const Expression mixed = Expression::compile("hypot(x, 3) + -y^2 * 0", xyz);
  EXPECT_TRUE(mixed.reads(0));
  EXPECT_TRUE(mixed.reads(1)) << "a variable multiplied by 0 is still read";
  EXPECT_FALSE(mixed.reads(2));
  const Expression constant = Expression::compile("e * 2", xyz);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(constant.reads(i));
}

// eval_block computes a part written twice once and keeps it: one block of scratch beyond the
// stack's per kept part; none where nothing repeats (a variable or a number is not kept).
TEST(Expression, BlocksKeepARepeatedPartOnce) {
  const std::vector<std::string> xyz = {"x", "y", "z"};
  const std::size_t block = Expression::kBlock;
  EXPECT_EQ(Expression::compile("sin(x) * cos(x)", xyz).block_scratch(), 2 * block);
  EXPECT_EQ(Expression::compile("sin(x) * sin(x)", xyz).block_scratch(), 3 * block);
  // The sum of floors twice: kept once (its own floors are then not kept apart).
  const std::string sum = "floor(x / 2) + floor(y / 2) + floor(z / 2)";
  const Expression board = Expression::compile(sum + " - 2 * floor((" + sum + ") / 2) > 0.5", xyz);
  const std::string other = "floor(x / 3) + floor(y / 3) + floor(z / 3)";  // nothing repeats
  const Expression single =
      Expression::compile(sum + " - 2 * floor((" + other + ") / 2) > 0.5", xyz);
  EXPECT_EQ(board.block_scratch(), single.block_scratch() + block);
  const double at[3] = {3.0, 1.0, 4.5};
  const double* columns[3] = {&at[0], &at[1], &at[2]};
  std::vector<double> scratch(board.block_scratch());
  double value = -1.0;
  board.eval_block(columns, 1, &value, scratch.data());
  EXPECT_EQ(value, 1.0);  // 1 + 0 + 2 = 3, odd
}

TEST(Expression, ErrorsSayWhatAndWhere) {
  std::string m;
  EXPECT_EQ(error_column("", &m), 0);
  EXPECT_NE(m.find("empty"), std::string::npos) << m;
  EXPECT_EQ(error_column("   "), 0);
  EXPECT_EQ(error_column("x +", &m), 4);
  EXPECT_NE(m.find("unexpected end"), std::string::npos) << m;
  EXPECT_EQ(error_column("(x + 1", &m), 7);
  EXPECT_NE(m.find("')' expected"), std::string::npos) << m;
  EXPECT_EQ(error_column("x $ 2", &m), 3);
  EXPECT_NE(m.find("unexpected '$'"), std::string::npos) << m;
  EXPECT_EQ(error_column("sinx(x)", &m), 1);
  EXPECT_NE(m.find("unknown function 'sinx'"), std::string::npos) << m;
  EXPECT_EQ(error_column("  min(x)", &m), 3);
  EXPECT_NE(m.find("'min' takes 2 arguments, got 1"), std::string::npos) << m;
  EXPECT_EQ(error_column("sin(x, y)", &m), 1);
  EXPECT_NE(m.find("takes 1 argument, got 2"), std::string::npos) << m;
  EXPECT_EQ(error_column("2x", &m), 1);
  EXPECT_NE(m.find("malformed number"), std::string::npos) << m;
  EXPECT_EQ(error_column("1.2.3"), 1);
  EXPECT_EQ(error_column("1e999", &m), 1);
  EXPECT_NE(m.find("out of range"), std::string::npos) << m;
  EXPECT_EQ(error_column("x < y < z", &m), 7);
  EXPECT_NE(m.find("do not chain"), std::string::npos) << m;
  EXPECT_EQ(error_column("x = 1"), 3);
  EXPECT_EQ(error_column("x y"), 3);
}

TEST(Expression, LimitsLengthAndNesting) {
  std::string deep(Expression::kMaxDepth + 5, '(');
  deep += "x" + std::string(Expression::kMaxDepth + 5, ')');
  std::string m;
  EXPECT_GT(error_column(deep, &m), 0);
  EXPECT_NE(m.find("nested deeper"), std::string::npos) << m;
  EXPECT_GT(error_column(std::string(1000, '-') + "x"), 0);
  EXPECT_GT(error_column(std::string(1000, '(')), 0);
  EXPECT_EQ(error_column(std::string(Expression::kMaxLength + 1, '1'), &m), 0);
  EXPECT_NE(m.find("longer than"), std::string::npos) << m;
  // Nesting within the limit compiles and evaluates.
  std::string ok(20, '(');
  ok += "x" + std::string(20, ')');
  EXPECT_EQ(eval(ok), 0.3);
  // A long flat sum needs a stack of two.
  std::string sum = "1";
  for (int i = 0; i < 500; ++i) sum += " + 1";
  EXPECT_EQ(eval(sum), 501.0);
  // Right-nested "1 + 2 * (...)" keeps two values pending per level: a stack of over 120,
  // more than the 64 kept on the call's frame.
  std::string right = "1";
  double expected = 1.0;
  for (int i = 0; i < 60; ++i) {
    right = "1 + 2 * (" + right + ")";
    expected = 1.0 + 2.0 * expected;
  }
  EXPECT_EQ(eval(right), expected);
  std::string powers = "1";
  for (int i = 0; i < 60; ++i) powers = "1 ^ " + powers;
  EXPECT_EQ(eval(powers), 1.0);
}

// Random token soup: every text either compiles, and then evaluates, or is refused with an
// ExpressionError whose column lies within the text; nothing else escapes.
TEST(Expression, RandomTextCompilesOrIsRefusedCleanly) {
  const char* const kTokens[] = {"x", "y", "z", "pi", "e", "1", "2.5", ".5", "1e-3", "3e",
                                 "+", "-", "*", "/", "^", "<", "<=", ">", "==", "!=",
                                 "&&", "||", "!", "(", ")", ",", "sin", "min", "pow", "sqrt",
                                 "q", " ", "$", "."};
  std::mt19937 rng(2026);
  std::uniform_int_distribution<int> pick(0, static_cast<int>(std::size(kTokens)) - 1);
  std::uniform_int_distribution<int> length(0, 24);
  int compiled = 0, refused = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    for (int n = length(rng); n > 0; --n) text += kTokens[pick(rng)];
    try {
      const Expression e = Expression::compile(text, kXyz);
      const double v[3] = {0.25, -0.5, 2.0};
      (void)e.eval(v);
      ++compiled;
    } catch (const ExpressionError& err) {
      EXPECT_GE(err.column(), 0) << text;
      EXPECT_LE(err.column(), static_cast<int>(text.size()) + 1) << text;
      ++refused;
    }
  }
  // Both outcomes occur: the soup is neither all valid nor all rejected.
  EXPECT_GT(compiled, 100);
  EXPECT_GT(refused, 100);
}

// The same bits, NaN's included.
bool same_bits(double a, double b) {
  std::uint64_t ia, ib;
  std::memcpy(&ia, &a, sizeof a);
  std::memcpy(&ib, &b, sizeof b);
  return ia == ib;
}

// eval_block against eval, point by point and bit for bit: the random texts that compile and
// a few written ones (a deep stack among them), over blocks of several lengths at points that
// include zeros, negatives, large values and a non-finite one.
TEST(Expression, BlockEvaluationIsPointEvaluationBitForBit) {
  const char* const kTokens[] = {"x", "y", "z", "pi", "e", "1", "2.5", ".5", "1e-3", "+", "-",
                                 "*", "/", "^", "<", "<=", ">", "==", "!=", "&&", "||", "!",
                                 "(", ")", ",", "sin", "min", "pow", "sqrt", "log", "atan2("};
  std::vector<std::string> texts{"sin(pi * x) + 0.5 * sin(3 * pi * x)",
                                 "exp(-((x - 0.5)^2 + (y - 0.25)^2) / 0.01) * (z > 0.5)",
                                 "x / y - log(z) + hypot(x, y) * atan2(z, x)",
                                 // operands taken straight into the operation that follows
                                 "floor(x / 0.3) + floor(y / 0.3) - 2 * floor(z / 0.6) > 0.5",
                                 "x - 1 < y && z >= 2 || (y != 0) == (x <= 1e-3)",
                                 "min(x, 0.5) * max(y, z) ^ 3 - pow(z, 0.5) / x + atan2(y, 2)",
                                 "2 - x * y / z + 1 / x - (y + z) * 2 ^ x",
                                 // parts written twice or more, computed once
                                 "floor(x / 0.3) + floor(y / 0.3) - 2 * floor((floor(x / 0.3) + "
                                 "floor(y / 0.3)) / 2) > 0.5",
                                 "sin(x) * sin(x) + (sin(x) * sin(x) + y) / (1 + sin(x) * sin(x))",
                                 "min(x, y) - min(y, x) + min(x, y) * -(x - y) + -(x - y)"};
  std::string deep = "x";
  for (int i = 0; i < 60; ++i) deep = "(y + " + deep + ")";
  texts.push_back(deep + " * (1 + (2 + (3 + (4 + x))))");
  std::mt19937 rng(77);
  std::uniform_int_distribution<int> pick(0, static_cast<int>(std::size(kTokens)) - 1);
  std::uniform_int_distribution<int> length(1, 20);
  while (texts.size() < 400) {
    std::string text;
    for (int n = length(rng); n > 0; --n) text += kTokens[pick(rng)];
    try {
      (void)Expression::compile(text, kXyz);
      texts.push_back(text);
    } catch (const ExpressionError&) {
    }
  }
  std::uniform_real_distribution<double> value(-3.0, 3.0);
  std::vector<double> xyz[3];
  for (auto& v : xyz) {
    v.resize(Expression::kBlock);
    for (double& d : v) d = value(rng);
    v[0] = 0.0;
    v[1] = -0.0;
    v[2] = 1e300;
    v[3] = -2.0;
  }
  xyz[1][5] = INFINITY;
  const double* columns[3] = {xyz[0].data(), xyz[1].data(), xyz[2].data()};
  int checked = 0;
  for (const std::string& text : texts) {
    const Expression e = Expression::compile(text, kXyz);
    std::vector<double> scratch(e.block_scratch(), -7.0), out(Expression::kBlock, -9.0);
    for (int count : {1, 7, Expression::kBlock}) {
      e.eval_block(columns, count, out.data(), scratch.data());
      for (int j = 0; j < count; ++j) {
        const double point[3] = {xyz[0][j], xyz[1][j], xyz[2][j]};
        const double expected = e.eval(point);
        ASSERT_TRUE(same_bits(out[j], expected))
            << text << " at point " << j << " of " << count << ": " << out[j] << " against "
            << expected;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 400 * 200);
}

// node_test against eval at every node, on grids of 1, 2 and 3 axes whose rows are not
// multiples of the block (one row shorter than a block, one longer than two), for shapes that
// hold some nodes, give NaN at some (outside) and hold nodes at a coordinate of 0; the output
// poisoned beforehand.
TEST(Expression, NodeTestIsTheNodeByNodeTest) {
  const std::vector<std::string> names{"x", "y", "z"};
  const char* const kShapes[] = {"abs(x - 0.37) < 0.21 && y > 0.1 * z", "sqrt(x - 0.4 * y) > 0.1",
                                 "x == 0 || sin(7 * x + 3 * y) * cos(5 * z) > 0.3"};
  for (int dims = 1; dims <= 3; ++dims)
    for (const std::int64_t nx : {Expression::kBlock - 1, 2 * Expression::kBlock + 5}) {
      const std::int64_t n[3] = {nx, dims > 1 ? 13 : 1, dims > 2 ? 7 : 1};
      const double h[3] = {1.0 / static_cast<double>(nx - 1), 1.0 / 12, 1.0 / 6};
      const std::vector<std::string> variables(names.begin(), names.begin() + dims);
      for (std::string text : kShapes) {
        // Constants for the axes the grid lacks.
        for (std::size_t at; dims < 3 && (at = text.find('z')) != std::string::npos;)
          text.replace(at, 1, "0.5");
        for (std::size_t at; dims < 2 && (at = text.find('y')) != std::string::npos;)
          text.replace(at, 1, "0.3");
        const Expression e = Expression::compile(text, variables);
        std::vector<char> inside(static_cast<std::size_t>(n[0] * n[1] * n[2]), 7);
        e.node_test(
            dims, n, [&](int a, std::int64_t c) { return static_cast<double>(c) * h[a]; },
            inside.data());
        std::int64_t held = 0;
        for (std::int64_t i = 0; i < n[0] * n[1] * n[2]; ++i) {
          const std::int64_t c[3] = {i % n[0], i / n[0] % n[1], i / (n[0] * n[1])};
          const double x[3] = {c[0] * h[0], c[1] * h[1], c[2] * h[2]};
          const double v = e.eval(x);
          const char expected = v != 0.0 && !std::isnan(v) ? 1 : 0;
          ASSERT_EQ(inside[static_cast<std::size_t>(i)], expected)
              << text << ", " << dims << "D, node " << i;
          held += expected;
        }
        EXPECT_GT(held, 0) << text << ", " << dims << "D";
        EXPECT_LT(held, n[0] * n[1] * n[2]) << text << ", " << dims << "D";
      }
    }
}

}  // namespace
}  // namespace heatsim::solver
