#include "sim/util/run_program.hpp"

#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>

#include "sim/util/error.hpp"
#include "sim/util/text.hpp"

extern char** environ;

namespace kvcap {

ProgramExit run_program(const std::string& program, const std::vector<std::string>& args) {
  std::vector<char*> argv;
  argv.reserve(args.size() + 2);
  argv.push_back(const_cast<char*>(program.c_str()));  // posix_spawn's signature; it does not write
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // The program shares standard output: what kvcap printed before it must come first.
  std::cout.flush();
  pid_t pid = 0;
  // kvcap's own --max-memory cap (a soft RLIMIT_AS) is not the child's: the CUDA harness maps
  // far more address space than it uses. Lifted for the spawn, put back after.
  rlimit as{};
  const bool capped = ::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != as.rlim_max;
  const rlim_t cap = as.rlim_cur;
  if (capped) {
    as.rlim_cur = as.rlim_max;
    (void)::setrlimit(RLIMIT_AS, &as);
  }
  const int err = ::posix_spawn(&pid, program.c_str(), nullptr, nullptr, argv.data(), environ);
  if (capped) {
    as.rlim_cur = cap;
    (void)::setrlimit(RLIMIT_AS, &as);
  }
  if (err != 0) throw InputError(escape_text(program), std::string("cannot run it (") + std::strerror(err) + ")");
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw InternalError(std::string("waitpid failed: ") + std::strerror(errno));
  }
  ProgramExit e;
  if (WIFEXITED(status)) {
    e.exited = true;
    e.code = WEXITSTATUS(status);
  } else {
    e.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  }
  return e;
}

std::string signal_name(int signal) {
  struct Name {
    int signal;
    const char* name;
  };
  static constexpr Name kNames[] = {{SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"},
                                    {SIGILL, "SIGILL"},   {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"},
                                    {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGKILL, "SIGKILL"},
                                    {SIGSEGV, "SIGSEGV"}, {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"},
                                    {SIGTERM, "SIGTERM"}, {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"}};
  for (const auto& n : kNames)
    if (n.signal == signal) return n.name;
  return "signal " + std::to_string(signal);
}

}  // namespace kvcap
