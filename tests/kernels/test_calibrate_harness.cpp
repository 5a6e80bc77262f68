// `kvcap calibrate --gpu G --out F` runs the kvcap-gpu-calibrate harness found beside the kvcap
// binary. These tests put a copy of kvcap (a hard link) in a folder next to a fake harness, a
// shell script that records its arguments and ends as told, so the harness's exit statuses and
// the arguments it receives are checked without a GPU. --gpu and --out must reach it as they
// were typed: no shell ever sees them.
#include <doctest/doctest.h>

#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/calibrate/profile.hpp"
#include "kernels/calibrate/raw_measurements.hpp"
#include "sim/util/error.hpp"
#include "sim/util/run_program.hpp"
#include "tests/kernels/raw_fixture.hpp"
#include "tests/support/run_command.hpp"

namespace fs = std::filesystem;

namespace {

/// A folder holding kvcap and a fake kvcap-gpu-calibrate; removed at the end of the test.
struct FakeHarness {
  fs::path dir;
  fs::path kvcap;

  FakeHarness() {
    // Beside the real binary: a hard link needs the same file system (a copy otherwise).
    dir = fs::path(KVCAP_BIN).parent_path() / ("fake-harness-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    kvcap = dir / "kvcap";
    std::error_code ec;
    fs::create_hard_link(KVCAP_BIN, kvcap, ec);
    if (ec) fs::copy_file(KVCAP_BIN, kvcap);
    const fs::path script = dir / "kvcap-gpu-calibrate";
    std::ofstream(script) << "#!/bin/sh\n"
                             "dir=$(dirname \"$0\")\n"
                             ": > \"$dir/argv.txt\"\n"
                             "for a in \"$@\"; do printf '%s\\n' \"$a\" >> \"$dir/argv.txt\"; done\n"
                             "case \"$(cat \"$dir/mode\")\" in\n"
                             "  ok) cp \"$dir/raw.json\" \"$4\"; exit 0 ;;\n"
                             "  checks) exit 1 ;;\n"
                             "  nogpu) exit 3 ;;\n"
                             "  other) exit 7 ;;\n"
                             "  signal) kill -KILL $$ ;;\n"
                             "esac\n"
                             "exit 9\n";
    fs::permissions(script, fs::perms::owner_all);
  }
  ~FakeHarness() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  FakeHarness(const FakeHarness&) = delete;
  FakeHarness& operator=(const FakeHarness&) = delete;

  void set_mode(const std::string& mode) const { std::ofstream(dir / "mode") << mode; }

  /// The arguments the fake harness received, one per line.
  std::vector<std::string> received() const {
    std::ifstream in(dir / "argv.txt");
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }

  /// `kvcap calibrate --gpu GPU --out OUT` through this folder's kvcap.
  cli_test::CommandResult calibrate(const std::string& gpu, const std::string& out) const {
    return cli_test::run_command(shell_word(kvcap.string()) + " calibrate --gpu " + shell_word(gpu) + " --out " +
                                 shell_word(out) + " 2>&1");
  }

  /// One word for the test's own shell command line (the test's shell, not kvcap's).
  static std::string shell_word(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  }
};

}  // namespace

TEST_CASE("calibrate: --gpu and --out holding shell syntax reach the harness as one argument each, run nothing") {
  FakeHarness h;
  h.set_mode("nogpu");
  const std::string pwned_gpu = (h.dir / "pwned-by-gpu").string();
  const std::string pwned_out = (h.dir / "pwned-by-out").string();
  const std::string gpu = "x'; touch " + pwned_gpu + "; '";
  const std::string out = (h.dir / ("o'$(touch " + pwned_out + ")'`touch " + pwned_out + "`.json")).string();
  const cli_test::CommandResult r = h.calibrate(gpu, out);
  CHECK_FALSE(fs::exists(pwned_gpu));
  CHECK_FALSE(fs::exists(pwned_out));
  CHECK(r.code == 2);
  CHECK(r.output.find("no usable CUDA GPU here") != std::string::npos);
  CHECK(r.output.find("tools/gpu-check") != std::string::npos);
  CHECK(h.received() == std::vector<std::string>{"--gpu-id", gpu, "--out", out + ".raw.json"});
}

TEST_CASE("calibrate: the harness's exit status maps as before; a signal is named") {
  FakeHarness h;
  const std::string out = (h.dir / "profile.json").string();

  h.set_mode("checks");  // 1: kernel checks failed -> exit 1, no profile
  cli_test::CommandResult r = h.calibrate("h200", out);
  CHECK(r.code == 1);
  CHECK(r.output.find("kernel checks failed on this GPU") != std::string::npos);
  CHECK_FALSE(fs::exists(out));

  h.set_mode("other");  // any other status is an error naming it
  r = h.calibrate("h200", out);
  CHECK(r.code == 2);
  CHECK(r.output.find("kvcap-gpu-calibrate exited with 7") != std::string::npos);

  h.set_mode("signal");  // killed: an error naming the signal, not "no GPU"
  r = h.calibrate("h200", out);
  CHECK(r.code == 2);
  CHECK(r.output.find("kvcap-gpu-calibrate was killed by SIGKILL") != std::string::npos);
  CHECK(r.output.find("no usable CUDA GPU") == std::string::npos);

  h.set_mode("ok");  // 0: the raw run it wrote is fitted into the profile
  kvcap::write_raw_file(kvcap::test::synthetic_raw(), (h.dir / "raw.json").string());
  r = h.calibrate("h200", out);
  REQUIRE_MESSAGE(r.code == 0, r.output);
  CHECK(kvcap::read_profile_file(out).measured);
  CHECK(fs::exists(out + ".raw.json"));
}

TEST_CASE("run_program: exit codes, signals and arguments without a shell") {
  using kvcap::run_program;
  kvcap::ProgramExit e = run_program("/bin/sh", {"-c", "exit 5"});
  CHECK(e.exited);
  CHECK(e.code == 5);
  e = run_program("/bin/sh", {"-c", "kill -TERM $$"});
  CHECK_FALSE(e.exited);
  CHECK(e.signal == SIGTERM);
  CHECK(kvcap::signal_name(SIGTERM) == "SIGTERM");
  CHECK(kvcap::signal_name(SIGSEGV) == "SIGSEGV");
  CHECK(kvcap::signal_name(63) == "signal 63");
  // "$1" is the argument as given: quotes and ';' in it are text.
  e = run_program("/bin/sh", {"-c", "test \"$1\" = \"a'; exit 4; '\"", "sh", "a'; exit 4; '"});
  CHECK(e.exited);
  CHECK(e.code == 0);
  bool refused = false;
  try {
    run_program("/nonexistent/kvcap-gpu-calibrate", {});
  } catch (const kvcap::InputError& err) {
    refused = std::string(err.what()).find("cannot run it") != std::string::npos;
  }
  CHECK(refused);
}
