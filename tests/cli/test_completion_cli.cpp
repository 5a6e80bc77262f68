// kvcap completion bash|zsh and kvcap man (issue #17 part 6): generated from the CLI definition,
// checked against a second reading of it (each command's --help text) and by running the bash
// completion the way bash does.
#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "tests/support/run_command.hpp"

using cli_test::run_command;
using cli_test::temp_path;

namespace {

const char* const kAllCommands[] = {"memory", "models", "gpus", "run", "trace", "calibrate", "search", "sweep", "merge",
                                 "check", "fidelity", "completion", "man"};

/// The long flags a command's --help lists (CLI11's "  -q,--quantization TEXT" lines).
std::set<std::string> help_long_flags(const std::string& command) {
  const std::string help = cli_test::run_kvcap(command + " --help").output;
  std::set<std::string> out;
  const std::regex line(R"(^  (?:-[A-Za-z],)?(--[a-z0-9-]+(?:,--[a-z0-9-]+)*))");
  std::istringstream in(help);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (!std::regex_search(l, m, line)) continue;
    std::stringstream names(m[1].str());
    for (std::string n; std::getline(names, n, ',');) out.insert(n);
  }
  return out;
}

std::string save_generated(const std::string& text, const std::string& name) {
  const std::string p = temp_path("completion", name);
  std::ofstream(p) << text;
  return p;
}

/// What bash's completion offers for the words typed so far (the last one is being completed).
std::string bash_complete(const std::string& script, const std::string& words) {
  const std::string cmd = "bash -c 'source " + script + "; COMP_WORDS=(" + words +
                          "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); [[ \"" + words +
                          "\" == *\" \" ]] && { COMP_WORDS+=(\"\"); COMP_CWORD=$((COMP_CWORD + 1)); }; _kvcap; "
                          "printf \"%s\\n\" \"${COMPREPLY[@]}\"'";
  return run_command(cmd).output;
}

}  // namespace

TEST_CASE("bash completion: valid bash, every flag of every command, values from the catalogs") {
  const auto r = cli_test::run_kvcap("completion bash");
  REQUIRE(r.code == 0);
  const std::string script = save_generated(r.output, "kvcap.bash");
  CHECK(run_command("bash -n " + script + " 2>&1").code == 0);
  for (const char* c : kAllCommands) {
    CAPTURE(c);
    const std::set<std::string> flags = help_long_flags(c);
    CHECK(!flags.empty());
    const std::string offered = bash_complete(script, std::string("kvcap ") + c + " --");
    for (const auto& f : flags) {
      CAPTURE(f);
      CHECK(offered.find(f + "\n") != std::string::npos);
    }
  }
  CHECK(bash_complete(script, "kvcap se").find("search\n") != std::string::npos);
  CHECK(bash_complete(script, "kvcap run --kv-ca").find("--kv-cache-dtype\n") != std::string::npos);
  const std::string gpus = bash_complete(script, "kvcap run --gpu h1");
  CHECK(gpus.find("h100-sxm\n") != std::string::npos);
  CHECK(gpus.find("h100-pcie\n") != std::string::npos);
  CHECK(bash_complete(script, "kvcap search --kv-cache-dtype fp").find("fp8_e4m3\n") != std::string::npos);
  CHECK(bash_complete(script, "kvcap run --model llama-3.1-").find("llama-3.1-70b\n") != std::string::npos);
  std::remove(script.c_str());
}

TEST_CASE("zsh completion: one _arguments block per command with every flag") {
  const auto r = cli_test::run_kvcap("completion zsh");
  REQUIRE(r.code == 0);
  CHECK(r.output.starts_with("#compdef kvcap\n"));
  if (run_command("command -v zsh >/dev/null").code == 0) {
    const std::string script = save_generated(r.output, "_kvcap");
    CHECK(run_command("zsh -n " + script + " 2>&1").code == 0);
    std::remove(script.c_str());
  } else {
    MESSAGE("zsh is not installed: the script's syntax is not checked (its structure is)");
  }
  for (const char* c : {"run", "search", "memory", "check"}) {
    CAPTURE(c);
    const size_t at = r.output.find(std::string("\n    ") + c + ")\n");
    REQUIRE(at != std::string::npos);
    const std::string block = r.output.substr(at, r.output.find(";;", at) - at);
    for (const auto& f : help_long_flags(c)) {
      CAPTURE(f);
      CHECK(block.find("'" + f + "[") != std::string::npos);
    }
  }
  CHECK(cli_test::run_kvcap("completion fish").code == 2);
}

TEST_CASE("man page: every command and flag, and groff reads it without a warning") {
  const auto r = cli_test::run_kvcap("man");
  REQUIRE(r.code == 0);
  CHECK(r.output.find(".TH KVCAP 1") != std::string::npos);
  for (const char* c : kAllCommands) {
    CAPTURE(c);
    CHECK(r.output.find(std::string(".SS \"kvcap ") + c) != std::string::npos);
    for (const auto& f : help_long_flags(c)) {
      std::string escaped;
      for (char ch : f) escaped += ch == '-' ? std::string("\\-") : std::string(1, ch);
      CAPTURE(f);
      const bool listed = r.output.find(".B " + escaped) != std::string::npos ||
                          r.output.find(", " + escaped) != std::string::npos;
      CHECK(listed);
    }
  }
  if (run_command("command -v groff >/dev/null").code == 0) {
    const std::string page = save_generated(r.output, "kvcap.1");
    const auto g = run_command("groff -man -Tutf8 -ww -z " + page + " 2>&1");
    CHECK(g.code == 0);
    CHECK(g.output == "");
    std::remove(page.c_str());
  } else {
    MESSAGE("groff is not installed: the page's roff is not checked");
  }
}
