// Schedules and face values of the wrong kind: a table with times before 0, a sine form one of
// whose keys has no effect (a warning naming that key and its line), and numeric face keys
// given a map, a list or a string (an error naming the key, the line, what was found and the
// forms the key takes).
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "io/case_loader.hpp"

namespace heatsim::io {
namespace {

// A valid 2D case with materials; tests replace one piece of it.
const std::string kBase =
    "grid: {dims: 2, n: [11, 6], length: [1.0, 0.5]}\n"                 // 1
    "materials:\n"                                                      // 2
    "  steel: {conductivity: 50, density: 7800, specific_heat: 500}\n"  // 3
    "regions:\n"                                                        // 4
    "  - {material: steel}\n"                                           // 5
    "sources:\n"                                                        // 6
    "  - {power_density: 10, schedule: [[0, 0], [1, 1]]}\n"             // 7
    "boundary:\n"                                                       // 8
    "  all: {type: insulated}\n"                                        // 9
    "  x-: {type: dirichlet, value: 300}\n"                             // 10
    "  x+: {type: convective, h: 25.0, ambient: 300.0}\n"               // 11
    "initial: {type: constant, value: 300}\n"                           // 12
    "time: {steps: 10}\n";                                              // 13

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

const CaseError* find(const std::vector<CaseError>& list, const std::string& path) {
  for (const CaseError& e : list)
    if (e.path == path) return &e;
  return nullptr;
}

void expect_error(const std::string& text_of_case, const std::string& path, int line,
                  const std::vector<std::string>& texts) {
  const LoadResult r = load_case_text(text_of_case);
  EXPECT_FALSE(r.ok());
  const CaseError* e = find(r.errors, path);
  ASSERT_NE(e, nullptr) << "no error at " << path << " in:\n" << format_errors(r.errors);
  EXPECT_EQ(e->line, line) << e->to_string();
  for (const std::string& text : texts)
    EXPECT_NE(e->message.find(text), std::string::npos) << text << "\n" << e->to_string();
}

void expect_warning(const std::string& text_of_case, const std::string& path, int line,
                    const std::string& text) {
  const LoadResult r = load_case_text(text_of_case);
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  const CaseError* w = find(r.warnings, path);
  ASSERT_NE(w, nullptr) << "no warning at " << path << " in:\n" << format_errors(r.warnings);
  EXPECT_EQ(w->line, line) << w->to_string();
  EXPECT_NE(w->message.find(text), std::string::npos) << w->to_string();
}

// The case loads and nothing is warned about the keys under `prefix`.
void expect_no_warning_under(const std::string& text_of_case, const std::string& prefix) {
  const LoadResult r = load_case_text(text_of_case);
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  for (const CaseError& w : r.warnings) EXPECT_NE(w.path.rfind(prefix, 0), 0u) << w.to_string();
}

TEST(ScheduleMessages, BaseLoadsWithoutWarnings) {
  const LoadResult r = load_case_text(kBase);
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  EXPECT_TRUE(r.warnings.empty()) << format_errors(r.warnings);
}

// The run starts at t = 0; a pair before it sets the value there by interpolation.
TEST(ScheduleMessages, ATableMayStartBeforeTimeZero) {
  const std::string text =
      replace(kBase, "ambient: 300.0", "ambient: [[-1, 290], [1, 310], [3, 330]]");
  const LoadResult r = load_case_text(text);
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  EXPECT_TRUE(r.warnings.empty()) << format_errors(r.warnings);
  const kernels::Schedule s = r.value->boundary[1].schedule();
  EXPECT_DOUBLE_EQ(s.at(0.0), 300.0);  // halfway from 290 at -1 to 310 at 1
  EXPECT_DOUBLE_EQ(s.at(2.0), 320.0);
  EXPECT_DOUBLE_EQ(s.at(10.0), 330.0);  // constant beyond the last pair
  // A source's scheduled power over [0, 1] is the integral of 0.5 + 0.5 t: a mean of 0.75.
  const LoadResult q = load_case_text(replace(kBase, "[[0, 0], [1, 1]]", "[[-1, 0], [1, 1]]"));
  ASSERT_TRUE(q.ok()) << format_errors(q.errors);
  EXPECT_DOUBLE_EQ(q.value->sources[0].schedule.mean(0.0, 1.0), 0.75);
}

TEST(ScheduleMessages, ATableWhollyBeforeTheStartIsAConstantAndWarned) {
  expect_warning(replace(kBase, "[[0, 0], [1, 1]]", "[[-5, 0], [-1, 2]]"),
                 "sources[0].schedule[1][0]", 7,
                 "every time of the table lies at or before t = 0 (the run starts at t = 0), so "
                 "the value is 2 throughout");
  expect_warning(replace(kBase, "ambient: 300.0", "ambient: [[-5, 280], [0, 290]]"),
                 "boundary.x+.ambient[1][0]", 11, "the value is 290 throughout");
  // One pair is a constant on purpose.
  expect_no_warning_under(replace(kBase, "[[0, 0], [1, 1]]", "[[-5, 2]]"), "sources");
}

// A given dt longer than the run (time.end in milliseconds, dt in seconds, say) is cut to one
// step of the run's length: warned at time.dt.
TEST(ScheduleMessages, ADtLongerThanTheWholeRunIsWarned) {
  expect_warning(replace(kBase, "time: {steps: 10}", "time: {dt: 0.01, end: 0.001}"), "time.dt",
                 13,
                 "0.01 is longer than the whole run (time.end 0.001), so the run is one step of "
                 "0.001; time.dt and time.end are both seconds of simulated time");
  expect_no_warning_under(replace(kBase, "time: {steps: 10}", "time: {dt: 0.001, end: 0.01}"),
                          "time");
  expect_no_warning_under(replace(kBase, "time: {steps: 10}", "time: {dt: 0.01, end: 0.01}"),
                          "time");
}

// A source whose schedule is 0 from t = 0 to the run's end (times in milliseconds for
// seconds, say) adds no heat: warned, with the time it would first switch on. Only where the
// end is known before the run (time.end, or steps of a given dt).
TEST(ScheduleMessages, ASourceOffForTheWholeRunIsWarned) {
  const std::string late =
      replace(kBase, "[[0, 0], [1, 1]]", "[[0, 0], [5, 0], [5.1, 1], [8, 1], [8.1, 0]]");
  expect_warning(
      replace(late, "time: {steps: 10}", "time: {method: backward-euler, dt: 0.5, end: 3}"),
      "sources[0].schedule", 7,
      "is 0 from t = 0 to the run's end at t = 3 (it rises from 0 after t = 5, to 1 at t = "
      "5.1), so the source adds no heat");
  // A ramp that starts at the run's end: it heats from there, not from its first nonzero pair.
  expect_warning(replace(replace(kBase, "[[0, 0], [1, 1]]", "[[0, 0], [50, 0], [100, 1]]"),
                         "time: {steps: 10}", "time: {method: bdf2, dt: 0.5, end: 50}"),
                 "sources[0].schedule", 7,
                 "is 0 from t = 0 to the run's end at t = 50 (it rises from 0 after t = 50, to 1 "
                 "at t = 100)");
  expect_warning(replace(late, "time: {steps: 10}", "time: {method: bdf2, dt: 0.5, steps: 8}"),
                 "sources[0].schedule", 7, "to the run's end at t = 4 ");
  expect_warning(replace(replace(kBase, "[[0, 0], [1, 1]]", "0"), "time: {steps: 10}",
                         "time: {method: bdf2, dt: 0.5, steps: 8}"),
                 "sources[0].schedule", 7, "is 0 from t = 0");
  // On at the end, inside the run, or an end not known before the run (dt: auto): no warning.
  expect_no_warning_under(
      replace(late, "time: {steps: 10}", "time: {method: bdf2, dt: 0.5, end: 5.05}"), "sources");
  expect_no_warning_under(
      replace(late, "time: {steps: 10}", "time: {method: bdf2, dt: 0.5, end: 20}"), "sources");
  expect_no_warning_under(late, "sources");
  // A table that is 0 before t = 0 only.
  expect_no_warning_under(replace(replace(kBase, "[[0, 0], [1, 1]]", "[[-1, 0], [0.2, 1]]"),
                                  "time: {steps: 10}", "time: {method: bdf2, dt: 0.5, end: 3}"),
                          "sources");
}

TEST(ScheduleMessages, TableTimesMustIncreaseStrictly) {
  expect_error(replace(kBase, "ambient: 300.0", "ambient: [[0, 290], [5, 300], [5, 310]]"),
               "boundary.x+.ambient[2][0]", 11,
               {"not sorted by time: t = 5 follows t = 5 (times must increase)"});
  expect_error(replace(kBase, "[[0, 0], [1, 1]]", "[[-1, 0], [-2, 1]]"),
               "sources[0].schedule[1][0]", 7, {"t = -2 follows t = -1"});
}

TEST(ScheduleMessages, FrequencyWithoutAmplitudeIsWarned) {
  const std::string why = "has no effect: the amplitude is 0 (or not given)";
  expect_warning(replace(kBase, "ambient: 300.0", "ambient: {value: 300, frequency: 2}"),
                 "boundary.x+.ambient.frequency", 11, why);
  expect_warning(
      replace(kBase, "ambient: 300.0", "ambient: {value: 300, amplitude: 0, frequency: 2}"),
      "boundary.x+.ambient.frequency", 11,
      why +
          ", so value + amplitude * sin(2 pi frequency "
          "t) stays 300");
  expect_warning(replace(kBase, "schedule: [[0, 0], [1, 1]]", "schedule: {frequency: 3}"),
                 "sources[0].schedule.frequency", 7, "stays 1");  // a source's value is 1
  expect_warning(replace(kBase, "value: 300}", "value: 300, frequency: 0.5}"),
                 "boundary.x-.frequency", 10, why);
}

// A misspelt amplitude or frequency is an unknown key (with the key it was likely meant as);
// the warning that the other key has no effect would follow from the misspelling, and is not
// given beside it.
TEST(ScheduleMessages, AMisspeltSineKeyIsAnErrorWithoutTheOtherKeysWarning) {
  for (const auto& [from, to, unknown] : std::vector<std::array<std::string, 3>>{
           {"schedule: [[0, 0], [1, 1]]", "schedule: {value: 1, amplitud: 0.5, frequency: 1}",
            "sources[0].schedule.amplitud"},
           {"ambient: 300.0", "ambient: {value: 300, amplitude: 5, frequncy: 2}",
            "boundary.x+.ambient.frequncy"},
           {"value: 300}", "value: 300, amplitde: 5, frequency: 0.5}", "boundary.x-.amplitde"}}) {
    const LoadResult r = load_case_text(replace(kBase, from, to));
    EXPECT_FALSE(r.ok());
    const CaseError* e = find(r.errors, unknown);
    ASSERT_NE(e, nullptr) << format_errors(r.errors);
    EXPECT_NE(e->message.find("did you mean"), std::string::npos) << e->to_string();
    for (const CaseError& w : r.warnings)
      EXPECT_EQ(w.message.find("has no effect"), std::string::npos) << w.to_string();
  }
  // A warning elsewhere in the case is still given beside the error.
  const LoadResult r = load_case_text(replace(
      replace(kBase, "schedule: [[0, 0], [1, 1]]", "schedule: {amplitud: 0.5, frequency: 1}"),
      "ambient: 300.0", "ambient: {value: 300, frequency: 2}"));
  EXPECT_NE(find(r.warnings, "boundary.x+.ambient.frequency"), nullptr)
      << format_errors(r.warnings);
}

TEST(ScheduleMessages, AmplitudeWithoutFrequencyIsWarned) {
  const std::string why = "has no effect: the frequency is 0 (or not given)";
  expect_warning(replace(kBase, "ambient: 300.0", "ambient: {value: 300, amplitude: 5}"),
                 "boundary.x+.ambient.amplitude", 11, why);
  expect_warning(replace(kBase, "schedule: [[0, 0], [1, 1]]",
                         "schedule: {value: 1, amplitude: 0.5, frequency: 0}"),
                 "sources[0].schedule.amplitude", 7, why);
  expect_warning(replace(kBase, "value: 300}", "value: 300, amplitude: 5}"),
                 "boundary.x-.amplitude", 10,
                 why +
                     ", so value + amplitude * sin(2 pi frequency "
                     "t) stays 300");
  // Through `all`: reported at the line of `all`.
  const std::string all =
      replace(replace(kBase, "  x-: {type: dirichlet, value: 300}\n", ""), "all: {type: insulated}",
              "all: {type: dirichlet, value: 300, amplitude: 5}");
  const LoadResult r = load_case_text(all);
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  bool seen = false;
  for (const CaseError& w : r.warnings)
    if (w.message.find(why) != std::string::npos) {
      seen = true;
      EXPECT_EQ(w.line, 9) << w.to_string();
    }
  EXPECT_TRUE(seen) << format_errors(r.warnings);
}

TEST(ScheduleMessages, ASineThatVariesIsNotWarned) {
  expect_no_warning_under(
      replace(kBase, "ambient: 300.0", "ambient: {value: 300, amplitude: 5, frequency: 2}"),
      "boundary");
  expect_no_warning_under(replace(kBase, "value: 300}", "value: 300, amplitude: 5, frequency: 1}"),
                          "boundary");
}

// A steady solve warns of a schedule that varies; one that cannot vary (no frequency) is
// warned as such, not as varying.
TEST(ScheduleMessages, ASteadySolveDoesNotCallAConstantSineVarying) {
  const std::string steady = replace(replace(kBase, "time: {steps: 10}", "time: {method: steady}"),
                                     "schedule: [[0, 0], [1, 1]]", "schedule: 1");
  const LoadResult r = load_case_text(replace(steady, "value: 300}", "value: 300, amplitude: 5}"));
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  ASSERT_EQ(r.warnings.size(), 1u) << format_errors(r.warnings);
  EXPECT_EQ(r.warnings[0].path, "boundary.x-.amplitude");
  EXPECT_NE(r.warnings[0].message.find("has no effect"), std::string::npos);
  expect_warning(replace(steady, "value: 300}", "value: 300, amplitude: 5, frequency: 1}"),
                 "boundary.x-.amplitude", 10, "a steady solve takes it at t = 0 (300) only");
}

// A table wholly at or before t = 0 is the constant of its last pair: a steady solve warns of it
// once, as such, not again as a schedule that varies in time.
TEST(ScheduleMessages, ASteadySolveWarnsOnceOfATableWhollyBeforeTheStart) {
  const std::string steady = replace(kBase, "time: {steps: 10}", "time: {method: steady}");
  for (const auto& [from, to, path] : std::vector<std::array<std::string, 3>>{
           {"schedule: [[0, 0], [1, 1]]", "schedule: [[-5, 0], [-1, 2]]", "sources[0].schedule"},
           {"ambient: 300.0", "ambient: [[-5, 280], [0, 290]]", "boundary.x+.ambient"},
           {"{type: dirichlet, value: 300}", "{type: dirichlet, value: [[-2, 280], [-1, 290]]}",
            "boundary.x-.value"}}) {
    SCOPED_TRACE(path);
    std::string text = replace(steady, from, to);
    if (path != "sources[0].schedule") text = replace(text, "[[0, 0], [1, 1]]", "1");
    const LoadResult r = load_case_text(text);
    ASSERT_TRUE(r.ok()) << format_errors(r.errors);
    ASSERT_EQ(r.warnings.size(), 1u) << format_errors(r.warnings);
    EXPECT_EQ(r.warnings[0].path, path + "[1][0]");
    EXPECT_NE(r.warnings[0].message.find("every time of the table lies at or before t = 0"),
              std::string::npos)
        << r.warnings[0].to_string();
  }
}

TEST(ScheduleMessages, ADirichletValueGivenAsAMapSaysWhatItTakes) {
  expect_error(replace(kBase, "value: 300}", "value: {T: 300}}"), "boundary.x-.value", 10,
               {"expected a number (the temperature held) or a [[t, g], ...] table",
                "got a map {T: 300}", "{type: dirichlet, value: 300, amplitude: 10, frequency"});
  expect_error(replace(kBase, "value: 300}", "value: {value: 300, amplitude: 1, frequency: 2}}"),
               "boundary.x-.value", 10,
               {"got a map {value: 300, amplitude: 1, frequency: 2}", "on the face"});
  // Cut for length at a separator, never inside a number ("frequency: 0.5" read as 0).
  expect_error(replace(kBase, "value: 300}", "value: {value: 300, amplitude: 10, frequency: 0.5}}"),
               "boundary.x-.value", 10, {"got a map {value: 300, amplitude: 10, frequency: ..."});
  expect_error(replace(kBase, "value: 300}", "value: \"300\"}"), "boundary.x-.value", 10,
               {"expected a number (the temperature held) or a [[t, g], ...] table, got the "
                "string '300'"});
  expect_error(replace(kBase, "value: 300}", "value: 300, amplitude: [1]}"),
               "boundary.x-.amplitude", 10, {"expected a number", "got a list [1]"});
}

TEST(ScheduleMessages, NumericFaceKeysSayWhatWasFoundAndWhatTheyTake) {
  expect_error(replace(kBase, "h: 25.0", "h: {value: 25}"), "boundary.x+.h", 11,
               {"expected a number (the heat transfer coefficient, W/(m^2 K), >= 0), got a map "
                "{value: 25}"});
  expect_error(replace(kBase, "h: 25.0", "h: [25, 30]"), "boundary.x+.h", 11,
               {"got a list [25, 30]"});
  expect_error(replace(kBase, "h: 25.0", "h: high"), "boundary.x+.h", 11, {"got 'high'"});
  expect_error(replace(kBase, "all: {type: insulated}", "all: {type: neumann, flux: [1, 2]}"),
               "boundary.all.flux", 9,
               {"expected a number (the outward normal derivative du/dn; 0: insulated), got a "
                "list [1, 2]"});
  expect_error(replace(kBase, "all: {type: insulated}", "all: {type: neumann, heat_flux: \"5\"}"),
               "boundary.all.heat_flux", 9,
               {"expected a number (W/m^2 flowing into the body), got the string '5'"});
  expect_error(replace(kBase, "h: 25.0,", "h: 25.0, emissivity: {eps: 0.8},"),
               "boundary.x+.emissivity", 11,
               {"expected a number in [0, 1] (the surface's emissivity), got a map {eps: 0.8}"});
  expect_error(replace(kBase, "ambient: 300.0", "ambient: \"300\""), "boundary.x+.ambient", 11,
               {"expected a number, a [[time, value], ...] table or {value, amplitude, "
                "frequency}, got the string '300'"});
  expect_error(replace(kBase, "ambient: 300.0", "ambient: {T: 300}"), "boundary.x+.ambient.T", 11,
               {"unknown key 'T'", "known keys: value, amplitude or frequency"});
  // Each is one error: nothing follows from the value that could not be read.
  const LoadResult r = load_case_text(replace(kBase, "h: 25.0,", "h: 25.0, emissivity: \"x\","));
  EXPECT_EQ(r.errors.size(), 1u) << format_errors(r.errors);
}

TEST(ScheduleMessages, AnEmptyOrFlatScheduleSaysWhatATableIs) {
  expect_error(replace(kBase, "ambient: 300.0", "ambient: "), "boundary.x+.ambient", 11,
               {"expected a number, a [[time, value], ...] table or {value, amplitude, "
                "frequency}, got nothing"});
  const std::string flat = replace(kBase, "ambient: 300.0", "ambient: [300, 310]");
  expect_error(flat, "boundary.x+.ambient", 11,
               {"expected a table of [time, value] pairs, got a list [300, 310]", "[[0, 300]"});
  EXPECT_EQ(load_case_text(flat).errors.size(), 1u);
  expect_error(replace(kBase, "[[0, 0], [1, 1]]", "[[0, 1], [1]]"), "sources[0].schedule[1]", 7,
               {"expected a [time, value] pair, got a list of 1 value"});
}

TEST(ScheduleMessages, ASourcesPowerSaysWhatItTakes) {
  expect_error(replace(kBase, "power_density: 10", "power: {value: 3}"), "sources[0].power", 7,
               {"expected a number (the power in W; in 2D W/m, in 1D W/m^2), got a map "
                "{value: 3}"});
  expect_error(replace(kBase, "power_density: 10", "power_density: [10]"),
               "sources[0].power_density", 7, {"expected a number (W/m^3), got a list [10]"});
}

// A frequency so large that 2 pi f t overflows would make the sine NaN in the run.
TEST(ScheduleMessages, AFrequencyWhoseSineOverflowsIsRefused) {
  expect_error(replace(kBase, "schedule: [[0, 0], [1, 1]]",
                       "schedule: {value: 1, amplitude: 1, frequency: 1e308}"),
               "sources[0].schedule.frequency", 7,
               {"1e+308 Hz is too large: 2 pi frequency t overflows"});
  expect_error(replace(kBase, "value: 300}", "value: 300, amplitude: 1, frequency: -1e308}"),
               "boundary.x-.frequency", 10, {"too large"});
  // With an end time the whole run counts: 1e305 Hz overflows by t = 1000.
  expect_error(replace(replace(kBase, "time: {steps: 10}", "time: {dt: 1, end: 1000}"),
                       "ambient: 300.0", "ambient: {value: 300, amplitude: 1, frequency: 1e305}"),
               "boundary.x+.ambient.frequency", 11, {"overflows before t = 1000"});
  const LoadResult r = load_case_text(
      replace(kBase, "ambient: 300.0", "ambient: {value: 300, amplitude: 1, frequency: 1e300}"));
  EXPECT_TRUE(r.ok()) << format_errors(r.errors);
}

// A Dirichlet face without a value holds 0 K; the kelvin warning says the 0 is the default.
TEST(ScheduleMessages, ADirichletFaceWithoutValueIsNamedAsTheDefault) {
  expect_warning(replace(kBase, "{type: dirichlet, value: 300}", "{type: dirichlet}"),
                 "boundary.x-.value", 10,
                 "a temperature of 0 K (value not given: a Dirichlet face holds 0 by default) "
                 "beside 300 K");
  // Written as 0, it is the case's own 0.
  const LoadResult r = load_case_text(replace(kBase, "value: 300}", "value: 0}"));
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  ASSERT_EQ(r.warnings.size(), 1u) << format_errors(r.warnings);
  EXPECT_NE(r.warnings[0].message.find("a temperature of 0 K beside 300 K"), std::string::npos)
      << r.warnings[0].to_string();
}

// initial: {type: constant} without a value is 0 K (the documented default); the kelvin
// warning names initial.value at the line of initial and says that the 0 is the default.
TEST(ScheduleMessages, AConstantInitialWithoutValueIsNamedAsTheDefault) {
  expect_warning(replace(kBase, "{type: constant, value: 300}", "{type: constant}"),
                 "initial.value", 12,
                 "a temperature of 0 K (initial.value not given: a constant initial condition "
                 "is 0 by default) beside 300 K");
  // Written as 0, it is the case's own 0.
  const LoadResult r =
      load_case_text(replace(kBase, "{type: constant, value: 300}", "{type: constant, value: 0}"));
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  const CaseError* w = find(r.warnings, "initial.value");
  ASSERT_NE(w, nullptr) << format_errors(r.warnings);
  EXPECT_NE(w->message.find("a temperature of 0 K beside 300 K"), std::string::npos)
      << w->to_string();
}

// An ambient's sine form without value varies about 0 K (the documented default): the kelvin
// warning, and a radiating face's error, name ambient.value at the line of the ambient.
TEST(ScheduleMessages, ASineAmbientWithoutValueNamesTheMissingValue) {
  const std::string sine = "ambient: {amplitude: 5, frequency: 0.01}";
  expect_warning(replace(kBase, "ambient: 300.0", sine), "boundary.x+.ambient.value", 11,
                 "a temperature of -5 K (value not given: a sine ambient varies about 0 by "
                 "default; give value, its mean) beside 300 K");
  expect_error(replace(kBase, "h: 25.0, ambient: 300.0", "h: 25.0, emissivity: 0.8, " + sine),
               "boundary.x+.ambient.value", 11,
               {"below absolute zero) (value not given: a sine ambient varies about 0 by "
                "default"});
  // With its value the sine is the case's own; 0 written is not called a default.
  const LoadResult r = load_case_text(
      replace(kBase, "ambient: 300.0", "ambient: {value: 0, amplitude: 5, frequency: 0.01}"));
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  const CaseError* w = find(r.warnings, "boundary.x+.ambient");
  ASSERT_NE(w, nullptr) << format_errors(r.warnings);
  EXPECT_EQ(w->message.find("not given"), std::string::npos) << w->to_string();
  EXPECT_TRUE(load_case_text(replace(kBase, "ambient: 300.0",
                                     "ambient: {value: 290, amplitude: 5, frequency: 0.01}"))
                  .warnings.empty());
}

// A Dirichlet face's sine is written on the face (value, amplitude, frequency): its value is
// the case's own, so the kelvin warning names boundary.<face>.value and calls nothing a default,
// whether the face is the colder temperature or the warmer one.
TEST(ScheduleMessages, ADirichletSineIsNamedAtItsValue) {
  const std::string sine = "{type: dirichlet, value: 25, amplitude: 2, frequency: 0.1}";
  expect_warning(replace(kBase, "{type: dirichlet, value: 300}", sine), "boundary.x-.value", 10,
                 "a temperature of 23 K beside 300 K");
  const LoadResult cold = load_case_text(replace(kBase, "{type: dirichlet, value: 300}", sine));
  for (const CaseError& w : cold.warnings) {
    EXPECT_EQ(w.message.find("not given"), std::string::npos) << w.to_string();
    EXPECT_EQ(w.path.find("value.value"), std::string::npos) << w.to_string();
  }
  // The warm side: an ambient in degrees Celsius beside the face's 300 +- 2 K.
  const std::string warm =
      replace(replace(kBase, "{type: dirichlet, value: 300}",
                      "{type: dirichlet, value: 300, amplitude: 2, frequency: 0.1}"),
              "ambient: 300.0", "ambient: 27");
  expect_warning(warm, "boundary.x+.ambient", 11,
                 "a temperature of 27 K beside 302 K (boundary.x-.value)");
  // Without its value the face holds the sine about 0: that 0 is the default, at .value.
  expect_warning(replace(kBase, "{type: dirichlet, value: 300}",
                         "{type: dirichlet, amplitude: 2, frequency: 0.1}"),
                 "boundary.x-.value", 10,
                 "a temperature of -2 K (value not given: a Dirichlet face holds 0 by default)");
}

// What was found is quoted as written, cut at about 40 characters.
TEST(ScheduleMessages, ALongValueIsCutInTheMessage) {
  const std::string big = "{a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8, i: 9, j: 10, k: 11}";
  const LoadResult r = load_case_text(replace(kBase, "h: 25.0", "h: " + big));
  const CaseError* e = find(r.errors, "boundary.x+.h");
  ASSERT_NE(e, nullptr) << format_errors(r.errors);
  EXPECT_NE(e->message.find("got a map {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: ..."),
            std::string::npos)
      << e->to_string();
  EXPECT_EQ(e->message.find("k: 11"), std::string::npos) << e->to_string();
}

TEST(ScheduleMessages, TimeAndProbeMessages) {
  // A step count has the same ceiling as an end time's.
  expect_error(replace(kBase, "time: {steps: 10}", "time: {steps: 9223372036854775807}"),
               "time.steps", 13, {"must be at most 1e15 (got 9223372036854775807)"});
  // A probe just outside is printed with the digits that tell it from the bound.
  expect_error(kBase + "probes: {points: {p: [0.5, 0.5000001]}}\n", "probes.points.p[1]", 14,
               {"y = 0.5000001 but the domain is [0, 0.5]"});
  expect_error(kBase + "probes: {points: {p: [1.2, 0.25]}}\n", "probes.points.p[0]", 14,
               {"x = 1.2 but the domain is [0, 1]"});
  expect_error(replace(kBase, "time: {steps: 10}", "time: {method: steady, tolerance: 0}"),
               "time.tolerance", 13, {"must lie strictly between 0 and 1, in (0, 1)"});
  // A radiating face's ambient that dips below 0 K says it is the schedule's lowest value.
  expect_error(replace(kBase, "{type: convective, h: 25.0, ambient: 300.0}",
                       "{type: radiative, emissivity: 0.5, ambient: {value: 10, amplitude: 20, "
                       "frequency: 1}}"),
               "boundary.x+.ambient", 11, {"got -10 K at its lowest, below absolute zero"});
}

}  // namespace
}  // namespace heatsim::io
