#include "run/log_streams.hpp"

#include <spdlog/sinks/sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>
#include <string>
#include <utility>

namespace heatsim::run {
namespace {

using ConsoleSink = spdlog::sinks::ansicolor_sink<spdlog::details::console_mutex>;

// A line by its level: warnings and worse to stderr, the rest to stdout.
class StandardStreamsSink final : public spdlog::sinks::sink {
 public:
  StandardStreamsSink()
      : out_(std::make_shared<spdlog::sinks::ansicolor_stdout_sink_mt>()),
        err_(std::make_shared<spdlog::sinks::ansicolor_stderr_sink_mt>()) {}

  void log(const spdlog::details::log_msg& msg) override {
    if (msg.level < spdlog::level::warn) {
      out_->log(msg);
      return;
    }
    // The summary and other text printed to stdout without the log go out first.
    std::fflush(stdout);
    err_->log(msg);
  }
  void flush() override {
    out_->flush();
    err_->flush();
  }
  void set_pattern(const std::string& pattern) override {
    out_->set_pattern(pattern);
    err_->set_pattern(pattern);
  }
  void set_formatter(std::unique_ptr<spdlog::formatter> formatter) override {
    err_->set_formatter(formatter->clone());
    out_->set_formatter(std::move(formatter));
  }
  void set_color_mode(spdlog::color_mode mode) {
    out_->set_color_mode(mode);
    err_->set_color_mode(mode);
  }

 private:
  std::shared_ptr<ConsoleSink> out_;
  std::shared_ptr<ConsoleSink> err_;
};

}  // namespace

void log_to_standard_streams() {
  const auto previous = spdlog::default_logger();
  auto logger =
      std::make_shared<spdlog::logger>(previous->name(), std::make_shared<StandardStreamsSink>());
  logger->set_level(previous->level());
  logger->flush_on(previous->flush_level());
  spdlog::set_default_logger(std::move(logger));
}

void plain_log() {
  for (const auto& sink : spdlog::default_logger()->sinks()) {
    if (auto* streams = dynamic_cast<StandardStreamsSink*>(sink.get()))
      streams->set_color_mode(spdlog::color_mode::never);
    if (auto* console = dynamic_cast<ConsoleSink*>(sink.get()))
      console->set_color_mode(spdlog::color_mode::never);
  }
}

}  // namespace heatsim::run
