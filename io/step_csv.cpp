#include "step_csv.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "field_file.hpp"

namespace heatsim::io {

namespace fs = std::filesystem;

namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

// The step of a complete row with `columns` fields ("12,0.5,1.25,..."), or -1 when the line
// is not one (a row cut short by a crash, or text that is not ours).
std::int64_t row_step(const std::string& line, std::size_t columns) {
  std::size_t commas = 0;
  for (char ch : line) commas += ch == ',';
  if (commas + 1 != columns) return -1;
  const std::string first = line.substr(0, line.find(','));
  if (first.empty() || first.size() > 18 ||
      first.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  // Every field must be a whole number: a cut inside the last value still has all commas.
  std::size_t start = 0;
  while (start <= line.size()) {
    std::size_t end = line.find(',', start);
    if (end == std::string::npos) end = line.size();
    const std::string field = line.substr(start, end - start);
    char* stop = nullptr;
    errno = 0;
    std::strtod(field.c_str(), &stop);
    if (field.empty() || *stop != '\0') return -1;
    start = end + 1;
  }
  return std::stoll(first);
}

// The rows of `text` that a run restarted at `restart_step` keeps, after its header (whose line
// break is at `pos`): complete lines of `columns` fields, their steps rising, up to the first
// that is not one or lies past restart_step; the non-empty lines after that are dropped.
struct KeptRows {
  std::string rows;
  std::int64_t last_step = -1, kept = 0, dropped = 0;
};
KeptRows keep_rows(const std::string& text, std::size_t pos, std::size_t columns,
                   std::int64_t restart_step) {
  KeptRows out;
  bool keeping = true;
  while (pos != std::string::npos && pos + 1 < text.size()) {
    const std::size_t end = text.find('\n', pos + 1);
    const std::string line =
        text.substr(pos + 1, end == std::string::npos ? std::string::npos : end - pos - 1);
    // The text after the last line break is a row cut short.
    const std::int64_t step = end == std::string::npos ? -1 : row_step(line, columns);
    if (keeping && (step < 0 || step <= out.last_step || step > restart_step)) keeping = false;
    if (keeping) {
      out.rows += line + "\n";
      out.last_step = step;
      ++out.kept;
    } else if (!line.empty()) {
      ++out.dropped;
    }
    pos = end;
  }
  return out;
}

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error("cannot write " + path + ": " + what);
}

void check_header(const std::string& path, const std::string& old_header, const std::string& header,
                  const std::string& what) {
  if (old_header != header)
    throw std::runtime_error(path + ": its header '" + old_header + "' is not this run's '" +
                             header + "' (the case's " + what +
                             " changed); move the file away to restart");
}

}  // namespace

std::string step_csv_header(const std::vector<std::string>& columns, bool steady) {
  std::string h = steady ? "state" : "step,time";
  for (const std::string& n : columns) h += "," + csv_field(n);
  return h;
}

void check_step_csv_header(const std::string& path, const std::vector<std::string>& columns,
                           bool steady, const std::string& what) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return;
  std::ifstream in(path, std::ios::binary);
  std::string old_header;
  std::getline(in, old_header);
  check_header(path, old_header, step_csv_header(columns, steady), what);
}

std::int64_t keep_step_csv_rows(const std::string& path, std::int64_t restart_step) {
  std::error_code ec;
  if (restart_step < 0 || !fs::is_regular_file(path, ec)) return 0;
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t pos = text.find('\n');
  if (pos == std::string::npos || text.compare(0, 6, "state,") == 0) return 0;  // steady: one row
  std::string kept = text.substr(0, pos + 1);
  // The columns of the first row: the header's names may hold quoted commas, the rows do not.
  const std::size_t first_end = text.find('\n', pos + 1);
  if (first_end == std::string::npos) return 0;
  std::size_t columns = 1;
  for (std::size_t i = pos + 1; i < first_end; ++i) columns += text[i] == ',';
  const KeptRows rows = keep_rows(text, pos, columns, restart_step);
  if (rows.dropped > 0) write_text_file_atomically(path, kept + rows.rows);
  return rows.dropped;
}

StepCsv::StepCsv(std::string path, const std::vector<std::string>& columns,
                 std::int64_t restart_step, bool steady, const std::string& what)
    : path_(std::move(path)), columns_(columns.size() + (steady ? 1 : 2)), steady_(steady) {
  const std::string header = step_csv_header(columns, steady);
  std::string kept = header + "\n";
  std::error_code ec;
  if (restart_step >= 0 && fs::exists(path_, ec)) {
    std::ifstream in(path_, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::size_t pos = text.find('\n');
    check_header(path_, text.substr(0, pos), header, what);
    const KeptRows rows = keep_rows(text, pos, columns_, restart_step);
    kept += rows.rows;
    last_step_ = rows.last_step;
    kept_rows_ = rows.kept;
  }
  // The kept part replaces the file as a whole (temporary + rename), so a crash now leaves
  // either the old file or the new one; then rows are appended.
  write_text_file_atomically(path_, kept);
  file_ = std::fopen(path_.c_str(), "ab");
  if (!file_) fail(path_, std::strerror(errno));
}

StepCsv::~StepCsv() {
  if (!file_) return;
  std::fflush(file_);
  ::fsync(fileno(file_));
  std::fclose(file_);
}

void StepCsv::write(std::int64_t step, double time, const std::vector<double>& values) {
  if (step <= last_step_) return;
  const std::size_t leading = steady_ ? 1 : 2;
  if (values.size() + leading != columns_)
    throw std::invalid_argument(path_ + ": " + std::to_string(values.size()) + " values for " +
                                std::to_string(columns_ - leading) + " columns");
  char buf[40];
  std::string row = "steady";
  if (!steady_) {
    std::snprintf(buf, sizeof buf, ",%.17g", time);
    row = std::to_string(step) + buf;
  }
  for (double v : values) {
    std::snprintf(buf, sizeof buf, ",%.17g", v);
    row += buf;
  }
  row += "\n";
  if (std::fwrite(row.data(), 1, row.size(), file_) != row.size())
    fail(path_, std::strerror(errno));
  last_step_ = step;
}

void StepCsv::flush() {
  if (std::fflush(file_) != 0) fail(path_, std::strerror(errno));
  if (::fsync(fileno(file_)) != 0 && errno != EINVAL) fail(path_, std::strerror(errno));
}

}  // namespace heatsim::io
