// Where the log goes: its warnings and errors to standard error, the rest (set-up, progress,
// debug lines) to standard output, as compilers and most command-line tools part them, so that
// `heatsim run case.yaml > run.log` still shows what went wrong and a program reading stdout
// gets no error lines in its input.
#pragma once

namespace heatsim::run {

// Makes spdlog's default logger write warnings, errors and critical lines to stderr and the
// rest to stdout, each in colour only where its own stream is a colour terminal. Before a line
// goes to stderr, what stdout holds is flushed, so that both streams into one file (`2>&1`)
// keep the order the lines were logged in. The logger's level is kept; its pattern is the
// default one until spdlog::set_pattern sets another.
void log_to_standard_streams();

// No colour codes on either stream, terminal or not (under mpirun the launcher gives the
// ranks a terminal of its own whatever it writes into).
void plain_log();

}  // namespace heatsim::run
