#include "expression.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <utility>

namespace heatsim::solver {
namespace {

enum Code {
  kNumber,
  kVariable,
  kNegate,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kPow,
  kLess,
  kLessEqual,
  kGreater,
  kGreaterEqual,
  kEqual,
  kNotEqual,
  kAnd,
  kOr,
  kNot,
  kSquare,  // x^2 with a literal 2: x * x
  kCall1,
  kCall2,
  // floor and abs evaluated in place rather than through a pointer (the same bits): a
  // checkerboard's `where` spent a fifth of its evaluations' time in the calls to floor. min
  // and max stay calls: inlined in a block, the compiler's min and max give other signed zeros
  // than the C library's fmin and fmax.
  kFloor,
  kAbs,
  // eval_block's fused instructions (fuse_operands): `operation` (a two-operand code) with
  // the variable `index` and the number `value` as its operands, pushed (kVariableNumber); the
  // top and the number (kTopNumber) or the variable (kTopVariable), in place.
  kVariableNumber,
  kTopNumber,
  kTopVariable,
  // eval_block's kept values (share_subtrees): the top copied to register `index`, kept on
  // the stack (kStore); register `index` pushed (kLoad).
  kStore,
  kLoad
};

bool two_operands(int code) {
  switch (code) {
    case kAdd:
    case kSub:
    case kMul:
    case kDiv:
    case kPow:
    case kLess:
    case kLessEqual:
    case kGreater:
    case kGreaterEqual:
    case kEqual:
    case kNotEqual:
    case kAnd:
    case kOr:
    case kCall2:
      return true;
    default:
      return false;
  }
}

// How many values an instruction of a compiled program takes from the stack.
int operands(int code) {
  if (code == kNumber || code == kVariable) return 0;
  return two_operands(code) ? 2 : 1;
}

// `program` with each part that it computes twice or more (the same instructions on the same
// operands: a subtree of the expression, not a single variable or number) computed the first
// time, kept in a register (kStore) and taken from there after (kLoad): the values of the
// functions and operations are the same each time, so the results are the same bits. Only the
// registers some load takes are kept; `registers` is set to their number.
std::vector<Expression::Op> share_subtrees(const std::vector<Expression::Op>& program,
                                           int& registers) {
  const std::size_t n = program.size();
  // Per instruction: where its subtree starts and which subtree (equal ones, one number).
  std::vector<std::size_t> start(n);
  std::vector<int> id(n);
  std::map<std::tuple<int, int, std::uint64_t, std::uintptr_t, std::uintptr_t, int, int>, int>
      known;
  std::vector<int> count;
  std::vector<std::pair<std::size_t, int>> stack;  // (start, id) of the values on the stack
  for (std::size_t k = 0; k < n; ++k) {
    const Expression::Op& op = program[k];
    int child[2] = {-1, -1};
    start[k] = k;
    for (int c = operands(op.code); c-- > 0;) {
      child[c] = stack.back().second;
      start[k] = stack.back().first;
      stack.pop_back();
    }
    std::uint64_t bits = 0;
    std::memcpy(&bits, &op.value, sizeof bits);
    const auto key =
        std::make_tuple(op.code, op.index, bits, reinterpret_cast<std::uintptr_t>(op.f1),
                        reinterpret_cast<std::uintptr_t>(op.f2), child[0], child[1]);
    const auto found = known.emplace(key, static_cast<int>(known.size())).first;
    id[k] = found->second;
    if (static_cast<std::size_t>(id[k]) >= count.size()) count.push_back(0);
    ++count[static_cast<std::size_t>(id[k])];
    stack.emplace_back(start[k], id[k]);
  }
  // The subtrees that start at each instruction, the largest last.
  std::vector<std::vector<std::size_t>> ends(n);
  for (std::size_t k = 0; k < n; ++k) ends[start[k]].push_back(k);
  const auto repeated = [&](std::size_t k) {
    return operands(program[k].code) > 0 && count[static_cast<std::size_t>(id[k])] >= 2;
  };
  // Twice: first keeping every repeated subtree, then only those some load took.
  std::vector<char> taken(count.size(), 0), keep(count.size(), 1);
  std::vector<Expression::Op> out;
  for (int pass = 0; pass < 2; ++pass) {
    std::map<int, int> register_of;  // subtree -> register
    out.clear();
    for (std::size_t p = 0; p < n;) {
      bool loaded = false;
      for (auto e = ends[p].rbegin(); e != ends[p].rend() && !loaded; ++e) {
        const auto r = register_of.find(id[*e]);
        if (!repeated(*e) || r == register_of.end()) continue;
        Expression::Op load;
        load.code = kLoad;
        load.index = r->second;
        out.push_back(load);
        taken[static_cast<std::size_t>(id[*e])] = 1;
        p = *e + 1;
        loaded = true;
      }
      if (loaded) continue;
      out.push_back(program[p]);
      if (repeated(p) && keep[static_cast<std::size_t>(id[p])] &&
          register_of.find(id[p]) == register_of.end()) {
        const int r = static_cast<int>(register_of.size());
        register_of.emplace(id[p], r);
        Expression::Op store;
        store.code = kStore;
        store.index = r;
        out.push_back(store);
      }
      ++p;
    }
    registers = static_cast<int>(register_of.size());
    keep = taken;
  }
  return out;
}

// The block program of `program` (Expression::block_program_): "variable, number, operation"
// as one kVariableNumber, "number, operation" as kTopNumber, "variable, operation" as
// kTopVariable.
std::vector<Expression::Op> fuse_operands(const std::vector<Expression::Op>& program) {
  std::vector<Expression::Op> out;
  for (std::size_t k = 0; k < program.size(); ++k) {
    const Expression::Op& op = program[k];
    const auto fused = [&](int code, std::size_t operation) {
      Expression::Op f = op;
      f.code = code;
      f.operation = program[operation].code;
      f.f2 = program[operation].f2;
      return f;
    };
    if (op.code == kVariable && k + 2 < program.size() && program[k + 1].code == kNumber &&
        two_operands(program[k + 2].code)) {
      Expression::Op f = fused(kVariableNumber, k + 2);
      f.value = program[k + 1].value;
      out.push_back(f);
      k += 2;
    } else if ((op.code == kNumber || op.code == kVariable) && k + 1 < program.size() &&
               two_operands(program[k + 1].code)) {
      out.push_back(fused(op.code == kNumber ? kTopNumber : kTopVariable, k + 1));
      k += 1;
    } else {
      out.push_back(op);
    }
  }
  return out;
}

// out[j] = lhs(j) `code` rhs(j) for j < count, each operation as eval() computes it.
template <typename Lhs, typename Rhs>
void apply_two(int code, double (*f2)(double, double), double* out, Lhs lhs, Rhs rhs, int count) {
  switch (code) {
    case kAdd:
      for (int j = 0; j < count; ++j) out[j] = lhs(j) + rhs(j);
      break;
    case kSub:
      for (int j = 0; j < count; ++j) out[j] = lhs(j) - rhs(j);
      break;
    case kMul:
      for (int j = 0; j < count; ++j) out[j] = lhs(j) * rhs(j);
      break;
    case kDiv:
      for (int j = 0; j < count; ++j) out[j] = lhs(j) / rhs(j);
      break;
    case kPow:
      for (int j = 0; j < count; ++j) out[j] = std::pow(lhs(j), rhs(j));
      break;
    case kLess:
      for (int j = 0; j < count; ++j) out[j] = lhs(j) < rhs(j) ? 1.0 : 0.0;
      break;
    case kLessEqual:
      for (int j = 0; j < count; ++j) out[j] = lhs(j) <= rhs(j) ? 1.0 : 0.0;
      break;
    case kGreater:
      for (int j = 0; j < count; ++j) out[j] = lhs(j) > rhs(j) ? 1.0 : 0.0;
      break;
    case kGreaterEqual:
      for (int j = 0; j < count; ++j) out[j] = lhs(j) >= rhs(j) ? 1.0 : 0.0;
      break;
    case kEqual:
      for (int j = 0; j < count; ++j) out[j] = lhs(j) == rhs(j) ? 1.0 : 0.0;
      break;
    case kNotEqual:
      for (int j = 0; j < count; ++j) out[j] = lhs(j) != rhs(j) ? 1.0 : 0.0;
      break;
    case kAnd:
      for (int j = 0; j < count; ++j) out[j] = (lhs(j) != 0.0 && rhs(j) != 0.0) ? 1.0 : 0.0;
      break;
    case kOr:
      for (int j = 0; j < count; ++j) out[j] = (lhs(j) != 0.0 || rhs(j) != 0.0) ? 1.0 : 0.0;
      break;
    case kCall2:
      for (int j = 0; j < count; ++j) out[j] = f2(lhs(j), rhs(j));
      break;
    default:
      break;
  }
}

struct Function1 {
  const char* name;
  double (*f)(double);
};
struct Function2 {
  const char* name;
  double (*f)(double, double);
};

// Wrappers: the C library's names are overloaded in C++, so take them through one signature.
const Function1 kFunctions1[] = {
    {"sin", [](double a) { return std::sin(a); }},
    {"cos", [](double a) { return std::cos(a); }},
    {"tan", [](double a) { return std::tan(a); }},
    {"asin", [](double a) { return std::asin(a); }},
    {"acos", [](double a) { return std::acos(a); }},
    {"atan", [](double a) { return std::atan(a); }},
    {"sinh", [](double a) { return std::sinh(a); }},
    {"cosh", [](double a) { return std::cosh(a); }},
    {"tanh", [](double a) { return std::tanh(a); }},
    {"exp", [](double a) { return std::exp(a); }},
    {"log", [](double a) { return std::log(a); }},
    {"log10", [](double a) { return std::log10(a); }},
    {"sqrt", [](double a) { return std::sqrt(a); }},
    {"abs", [](double a) { return std::fabs(a); }},
    {"floor", [](double a) { return std::floor(a); }},
    {"ceil", [](double a) { return std::ceil(a); }},
};
const Function2 kFunctions2[] = {
    {"min", [](double a, double b) { return std::fmin(a, b); }},
    {"max", [](double a, double b) { return std::fmax(a, b); }},
    {"pow", [](double a, double b) { return std::pow(a, b); }},
    {"atan2", [](double a, double b) { return std::atan2(a, b); }},
    {"hypot", [](double a, double b) { return std::hypot(a, b); }},
};

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// `not` where a name or function belongs (Python's spelling of C's `!`).
const char* const kNotWord = "unexpected 'not': write ! for not (the operators are C's: &&, ||, !)";

// Recursive descent over the grammar in expression.hpp, emitting postfix code.
class Compiler {
 public:
  Compiler(const std::string& text, const std::vector<std::string>& variables)
      : text_(text), variables_(variables) {}

  void run(std::vector<Expression::Op>& program, int& stack_depth) {
    skip_blanks();
    if (pos_ == text_.size()) throw ExpressionError("the expression is empty", 0);
    logical_or(0);
    skip_blanks();
    if (pos_ != text_.size()) {
      // A word where an operator belongs: Python's or SQL's logical words get C's operators.
      std::size_t end = pos_;
      while (end < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_'))
        ++end;
      const std::string word = text_.substr(pos_, end - pos_);
      for (const auto& [spelled, op] :
           {std::pair<const char*, const char*>{"and", "&&"}, {"or", "||"}, {"not", "!"}})
        if (word == spelled)
          fail("unexpected " + quoted(word) + ": write " + op + " for " + spelled +
               " (the operators are C's: &&, ||, !)");
      fail("unexpected " + quoted(std::string(1, text_[pos_])) + " (an operator or the end)");
    }
    program = std::move(program_);
    stack_depth = max_depth_;
  }

 private:
  [[noreturn]] void fail(const std::string& message) const {
    throw ExpressionError(message + " at column " + std::to_string(pos_ + 1),
                          static_cast<int>(pos_) + 1);
  }

  void skip_blanks() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  // The next operator token if it is `op` (consumed), else false.
  bool accept(const char* op) {
    skip_blanks();
    const std::size_t len = std::strlen(op);
    if (text_.compare(pos_, len, op) != 0) return false;
    pos_ += len;
    return true;
  }

  void emit(Expression::Op op, int stack_change) {
    program_.push_back(op);
    depth_ += stack_change;
    max_depth_ = std::max(max_depth_, depth_);
  }
  void emit_code(int code, int stack_change) {
    Expression::Op op;
    op.code = code;
    emit(op, stack_change);
  }

  // C's logical operators: operands are true when nonzero, the result is 1 or 0, and `&&`
  // binds tighter than `||`. Both sides are always evaluated (nothing has side effects).
  void logical_or(int nesting) {
    if (nesting > Expression::kMaxDepth)
      fail("nested deeper than " + std::to_string(Expression::kMaxDepth) + " levels");
    logical_and(nesting);
    while (accept("||")) {
      logical_and(nesting);
      emit_code(kOr, -1);
    }
  }

  void logical_and(int nesting) {
    comparison(nesting);
    while (accept("&&")) {
      comparison(nesting);
      emit_code(kAnd, -1);
    }
  }

  void comparison(int nesting) {
    sum(nesting);
    struct Cmp {
      const char* op;
      int code;
    };
    // Two-character operators first, so that "<=" is not read as "<".
    static const Cmp kCmp[] = {{"<=", kLessEqual}, {">=", kGreaterEqual}, {"==", kEqual},
                               {"!=", kNotEqual},  {"<", kLess},          {">", kGreater}};
    for (const Cmp& c : kCmp)
      if (accept(c.op)) {
        sum(nesting);
        emit_code(c.code, -1);
        skip_blanks();
        if (pos_ < text_.size() && std::strchr("<>=!", text_[pos_]))
          fail("comparisons do not chain; use parentheses");
        return;
      }
  }

  void sum(int nesting) {
    product(nesting);
    for (;;) {
      if (accept("+")) {
        product(nesting);
        emit_code(kAdd, -1);
      } else if (accept("-")) {
        product(nesting);
        emit_code(kSub, -1);
      } else {
        return;
      }
    }
  }

  void product(int nesting) {
    unary(nesting);
    for (;;) {
      if (accept("*")) {
        unary(nesting);
        emit_code(kMul, -1);
      } else if (accept("/")) {
        unary(nesting);
        emit_code(kDiv, -1);
      } else {
        return;
      }
    }
  }

  void unary(int nesting) {
    if (nesting > Expression::kMaxDepth)
      fail("nested deeper than " + std::to_string(Expression::kMaxDepth) + " levels");
    if (accept("-")) {
      unary(nesting + 1);
      emit_code(kNegate, 0);
    } else if (accept("!")) {
      unary(nesting + 1);
      emit_code(kNot, 0);
    } else if (accept("+")) {
      unary(nesting + 1);
    } else {
      power(nesting);
    }
  }

  void power(int nesting) {
    primary(nesting);
    if (accept("^")) {
      const std::size_t exponent_at = program_.size();
      unary(nesting + 1);
      // A literal 2 as the whole exponent (a distance's square, `(x - a)^2`): the product x * x,
      // rounded once. std::pow's square differs from it in the last place for about one
      // argument in 1600 and takes some twenty times as long; a ball written as a `where`
      // formula at 129^3 spent 1.3 s of a 3.7 s run in it.
      const Expression::Op& last = program_.back();
      if (program_.size() == exponent_at + 1 && last.code == kNumber && last.value == 2.0) {
        program_.pop_back();
        --depth_;
        emit_code(kSquare, 0);
      } else {
        emit_code(kPow, -1);
      }
    }
  }

  void primary(int nesting) {
    skip_blanks();
    if (pos_ == text_.size()) fail("unexpected end: a number, name or '(' is missing");
    const char ch = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(ch)) || ch == '.') return number();
    if (std::isalpha(static_cast<unsigned char>(ch)) || ch == '_') return name(nesting);
    if (ch == '(') {
      ++pos_;
      logical_or(nesting + 1);
      if (!accept(")")) fail("')' expected");
      return;
    }
    fail("unexpected " + quoted(std::string(1, ch)) + " (a number, name or '(')");
  }

  void number() {
    const char* begin = text_.data() + pos_;
    const char* end = text_.data() + text_.size();
    double v = 0.0;
    const auto r = std::from_chars(begin, end, v, std::chars_format::general);
    if (r.ec == std::errc::result_out_of_range) fail("number out of range");
    if (r.ec != std::errc() || r.ptr == begin) fail("malformed number");
    const std::size_t end_pos = pos_ + static_cast<std::size_t>(r.ptr - begin);
    if (end_pos < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[end_pos])) ||
                                   text_[end_pos] == '_' || text_[end_pos] == '.'))
      fail("malformed number");
    pos_ = end_pos;
    Expression::Op op;
    op.code = kNumber;
    op.value = v;
    emit(op, 1);
  }

  void name(int nesting) {
    const std::size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    const std::string id = text_.substr(start, pos_ - start);
    skip_blanks();
    const bool call = pos_ < text_.size() && text_[pos_] == '(';
    if (call) return function(id, start, nesting);
    for (std::size_t i = 0; i < variables_.size(); ++i)
      if (variables_[i] == id) {
        Expression::Op op;
        op.code = kVariable;
        op.index = static_cast<int>(i);
        emit(op, 1);
        return;
      }
    if (id == "pi" || id == "e") {
      Expression::Op op;
      op.code = kNumber;
      op.value = id == "pi" ? M_PI : M_E;
      emit(op, 1);
      return;
    }
    pos_ = start;
    if (id == "not") fail(kNotWord);
    std::string known;
    for (const std::string& v : variables_) known += v + ", ";
    fail("unknown name " + quoted(id) + " (variables: " + known + "constants: pi, e)");
  }

  void function(const std::string& id, std::size_t start, int nesting) {
    int arity = 0;
    Expression::Op op;
    for (const Function1& f : kFunctions1)
      if (id == f.name) {
        arity = 1;
        op.code = kCall1;
        op.f1 = f.f;
      }
    for (const Function2& f : kFunctions2)
      if (id == f.name) {
        arity = 2;
        op.code = kCall2;
        op.f2 = f.f;
      }
    if (id == "floor") op.code = kFloor;
    if (id == "abs") op.code = kAbs;
    if (arity == 0) {
      pos_ = start;
      if (id == "not") fail(kNotWord);
      fail("unknown function " + quoted(id));
    }
    ++pos_;  // '('
    int args = 0;
    skip_blanks();
    if (pos_ < text_.size() && text_[pos_] == ')') {
      ++pos_;
    } else {
      for (;;) {
        logical_or(nesting + 1);
        ++args;
        if (accept(",")) continue;
        if (accept(")")) break;
        fail("',' or ')' expected");
      }
    }
    if (args != arity) {
      pos_ = start;
      fail(quoted(id) + " takes " + std::to_string(arity) + " argument" + (arity > 1 ? "s" : "") +
           ", got " + std::to_string(args));
    }
    emit(op, 1 - arity);
  }

  const std::string& text_;
  const std::vector<std::string>& variables_;
  std::size_t pos_ = 0;
  std::vector<Expression::Op> program_;
  int depth_ = 0;
  int max_depth_ = 0;
};

}  // namespace

Expression Expression::compile(const std::string& text, const std::vector<std::string>& variables) {
  if (text.size() > kMaxLength)
    throw ExpressionError("longer than " + std::to_string(kMaxLength) + " characters", 0);
  Expression e;
  Compiler(text, variables).run(e.program_, e.stack_depth_);
  e.block_program_ = fuse_operands(share_subtrees(e.program_, e.registers_));
  return e;
}

bool Expression::reads(int index) const {
  return std::any_of(program_.begin(), program_.end(),
                     [&](const Op& op) { return op.code == kVariable && op.index == index; });
}

double Expression::eval(const double* values) const {
  constexpr int kLocal = 64;
  double local[kLocal];
  local[0] =
      0.0;  // a compiled program leaves one value here; this only quiets -Wmaybe-uninitialized
  std::vector<double> heap;
  double* stack = local;
  if (stack_depth_ > kLocal) {
    heap.resize(static_cast<std::size_t>(stack_depth_));
    stack = heap.data();
  }
  int top = -1;  // index of the top value
  for (const Op& op : program_) {
    switch (op.code) {
      case kNumber:
        stack[++top] = op.value;
        break;
      case kVariable:
        stack[++top] = values[op.index];
        break;
      case kNegate:
        stack[top] = -stack[top];
        break;
      case kNot:
        stack[top] = stack[top] == 0.0 ? 1.0 : 0.0;
        break;
      case kSquare:
        stack[top] = stack[top] * stack[top];
        break;
      case kCall1:
        stack[top] = op.f1(stack[top]);
        break;
      case kFloor:
        stack[top] = std::floor(stack[top]);
        break;
      case kAbs:
        stack[top] = std::fabs(stack[top]);
        break;
      default: {
        const double b = stack[top--];
        double& a = stack[top];
        switch (op.code) {
          case kAdd:
            a = a + b;
            break;
          case kSub:
            a = a - b;
            break;
          case kMul:
            a = a * b;
            break;
          case kDiv:
            a = a / b;
            break;
          case kPow:
            a = std::pow(a, b);
            break;
          case kLess:
            a = a < b ? 1.0 : 0.0;
            break;
          case kLessEqual:
            a = a <= b ? 1.0 : 0.0;
            break;
          case kGreater:
            a = a > b ? 1.0 : 0.0;
            break;
          case kGreaterEqual:
            a = a >= b ? 1.0 : 0.0;
            break;
          case kEqual:
            a = a == b ? 1.0 : 0.0;
            break;
          case kNotEqual:
            a = a != b ? 1.0 : 0.0;
            break;
          case kAnd:
            a = (a != 0.0 && b != 0.0) ? 1.0 : 0.0;
            break;
          case kOr:
            a = (a != 0.0 || b != 0.0) ? 1.0 : 0.0;
            break;
          case kCall2:
            a = op.f2(a, b);
            break;
        }
      }
    }
  }
  return stack[0];
}

void Expression::eval_block(const double* const* variables, int count, double* out,
                            double* scratch) const {
  // The stack of eval(), each slot a block of values: slot k at scratch + k * kBlock.
  int top = -1;
  auto slot = [&](int k) { return scratch + static_cast<std::size_t>(k) * kBlock; };
  // The registers (kStore, kLoad) after the stack's slots.
  const int stack_slots = stack_depth_ > 0 ? stack_depth_ : 1;
  for (const Op& op : block_program_) {
    switch (op.code) {
      case kNumber: {
        double* a = slot(++top);
        for (int j = 0; j < count; ++j) a[j] = op.value;
        break;
      }
      case kVariable: {
        double* a = slot(++top);
        const double* v = variables[op.index];
        for (int j = 0; j < count; ++j) a[j] = v[j];
        break;
      }
      case kNegate: {
        double* a = slot(top);
        for (int j = 0; j < count; ++j) a[j] = -a[j];
        break;
      }
      case kNot: {
        double* a = slot(top);
        for (int j = 0; j < count; ++j) a[j] = a[j] == 0.0 ? 1.0 : 0.0;
        break;
      }
      case kSquare: {
        double* a = slot(top);
        for (int j = 0; j < count; ++j) a[j] = a[j] * a[j];
        break;
      }
      case kCall1: {
        double* a = slot(top);
        for (int j = 0; j < count; ++j) a[j] = op.f1(a[j]);
        break;
      }
      case kFloor: {
        double* a = slot(top);
        for (int j = 0; j < count; ++j) a[j] = std::floor(a[j]);
        break;
      }
      case kAbs: {
        double* a = slot(top);
        for (int j = 0; j < count; ++j) a[j] = std::fabs(a[j]);
        break;
      }
      case kStore: {
        const double* a = slot(top);
        double* r = slot(stack_slots + op.index);
        for (int j = 0; j < count; ++j) r[j] = a[j];
        break;
      }
      case kLoad: {
        double* a = slot(++top);
        const double* r = slot(stack_slots + op.index);
        for (int j = 0; j < count; ++j) a[j] = r[j];
        break;
      }
      case kVariableNumber: {
        const double* v = variables[op.index];
        const double c = op.value;
        apply_two(
            op.operation, op.f2, slot(++top), [v](int j) { return v[j]; }, [c](int) { return c; },
            count);
        break;
      }
      case kTopNumber: {
        double* a = slot(top);
        const double c = op.value;
        apply_two(
            op.operation, op.f2, a, [a](int j) { return a[j]; }, [c](int) { return c; }, count);
        break;
      }
      case kTopVariable: {
        double* a = slot(top);
        const double* v = variables[op.index];
        apply_two(
            op.operation, op.f2, a, [a](int j) { return a[j]; }, [v](int j) { return v[j]; },
            count);
        break;
      }
      default: {
        const double* b = slot(top--);
        double* a = slot(top);
        apply_two(
            op.code, op.f2, a, [a](int j) { return a[j]; }, [b](int j) { return b[j]; }, count);
      }
    }
  }
  const double* result = slot(0);
  for (int j = 0; j < count; ++j) out[j] = result[j];
}

}  // namespace heatsim::solver
