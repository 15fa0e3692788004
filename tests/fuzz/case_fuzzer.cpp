// libFuzzer target for the case loader: any bytes must give either a case or a list of
// non-empty errors, never a crash, hang or sanitizer report. A case that loads must also pass
// check_case on its own (the loader and the checks agree). Built by scripts/fuzz-case.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "io/case_loader.hpp"

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "case_fuzzer: %s: %s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const heatsim::io::LoadResult r = heatsim::io::load_case_text(text, "<fuzz>");
  if (r.ok()) {
    if (r.value->source_text != text) fail("source_text", "differs from the input");
    const auto again = heatsim::io::check_case(*r.value);
    if (!again.empty()) fail("check_case disagrees with the loader", again[0].to_string());
    return 0;
  }
  if (r.errors.empty()) fail("refused without errors", "");
  if (r.value) fail("value set although errors were reported", r.errors[0].to_string());
  if (r.errors.size() > heatsim::io::kMaxReportedErrors + 1)
    fail("too many errors listed", std::to_string(r.errors.size()));
  for (const auto& e : r.errors) {
    if (e.message.empty()) fail("empty message", e.path);
    if (e.line < 0) fail("negative line", e.to_string());
  }
  return 0;
}
