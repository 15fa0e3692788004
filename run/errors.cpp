#include "run/errors.hpp"

#include <spdlog/fmt/fmt.h>

#include <utility>

namespace heatsim::run {

int exit_code(Failure failure) {
  switch (failure) {
    case Failure::invalid:
      return 2;
    case Failure::diverged:
      return 3;
    case Failure::runtime:
      break;
  }
  return 1;
}

RunError::RunError(Failure failure, std::vector<std::string> messages)
    : std::runtime_error([&] {
        std::string text;
        for (const std::string& m : messages) text += (text.empty() ? "" : "\n") + m;
        return text;
      }()),
      failure_(failure),
      messages_(std::move(messages)) {}

InvalidCase::InvalidCase(std::string origin, std::vector<io::CaseError> errors)
    : RunError(Failure::invalid,
               [&] {
                 const std::size_t count = io::count_problems(errors);
                 std::string report =
                     fmt::format("{}: {} problem{}:", origin, count, count == 1 ? "" : "s");
                 for (const auto& e : errors) report += "\n  " + e.to_string();
                 return report;
               }()),
      origin_(std::move(origin)),
      errors_(std::move(errors)) {}

}  // namespace heatsim::run
