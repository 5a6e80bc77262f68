// The output writer (sim/util/atomic_file, output_folder, output_temp) in-process: a target is
// the old content or the new, never partial; an uncommitted write leaves nothing behind; a full
// file system or a file-size limit is an InputError naming the file; an --out folder is replaced
// whole and only when it holds nothing but a kvcap output set.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "sim/util/atomic_file.hpp"
#include "sim/util/error.hpp"
#include "sim/util/output_folder.hpp"
#include "tests/reliability/reliability_util.hpp"
#include "tests/support/temp_dir.hpp"

using reliability_test::entries;
using reliability_test::slurp;
namespace fs = std::filesystem;

namespace {

/// The message of the InputError `f` throws ("" when it throws none).
template <class F>
std::string input_error(F f) {
  try {
    f();
  } catch (const kvcap::InputError& e) {
    return e.what();
  }
  return "";
}

/// A process id that no longer exists: a child that has exited and been reaped.
pid_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

}  // namespace

TEST_CASE("AtomicFile: the target appears complete at commit, with no temporary file left beside it") {
  test_support::TempDir dir("atomic-commit");
  const fs::path target = dir.path / "results.json";
  kvcap::write_file_atomically(target.string(), "old\n");
  {
    kvcap::AtomicFile f(target.string());
    f.stream() << "new content\n";
    f.stream().flush();
    CHECK(slurp(target) == "old\n");  // written so far to the temporary sibling only
    CHECK(entries(dir.path).size() == 2);
    f.commit();
  }
  CHECK(slurp(target) == "new content\n");
  CHECK(entries(dir.path) == std::set<std::string>{"results.json"});
}

TEST_CASE("AtomicFile: not committed (an error midway) leaves the previous file and removes the temporary one") {
  test_support::TempDir dir("atomic-abandon");
  const fs::path target = dir.path / "trace.jsonl";
  kvcap::write_file_atomically(target.string(), "previous\n");
  {
    kvcap::AtomicFile f(target.string());
    f.stream() << std::string(200000, 'x');  // more than the buffer: bytes reached the disk
  }
  CHECK(slurp(target) == "previous\n");
  CHECK(entries(dir.path) == std::set<std::string>{"trace.jsonl"});
  // And a new file that is never committed never appears.
  { kvcap::AtomicFile f((dir.path / "new.csv").string()); }
  CHECK(entries(dir.path) == std::set<std::string>{"trace.jsonl"});
}

TEST_CASE("AtomicFile: a link is followed (the file it names is replaced); a device is written directly") {
  test_support::TempDir dir("atomic-link");
  const fs::path real = dir.path / "real.json";
  const fs::path link = dir.path / "link.json";
  kvcap::write_file_atomically(real.string(), "1");
  fs::create_symlink(real, link);
  kvcap::write_file_atomically(link.string(), "2");
  CHECK(fs::is_symlink(fs::symlink_status(link)));
  CHECK(slurp(real) == "2");
  // /dev/null stays the device: a rename over it would have replaced the node with a file.
  kvcap::write_file_atomically("/dev/null", "discarded");
  struct stat st {};
  REQUIRE(::stat("/dev/null", &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
}

TEST_CASE("AtomicFile: a folder, a missing folder and /dev/full are InputErrors naming the file and the reason") {
  test_support::TempDir dir("atomic-errors");
  CHECK(input_error([&] { kvcap::AtomicFile f(dir.path.string()); }).find("is a folder") != std::string::npos);
  const std::string missing = (dir.path / "no-such-folder" / "x.json").string();
  const std::string m = input_error([&] { kvcap::write_file_atomically(missing, "x"); });
  CHECK(m.find(missing) == 0);
  CHECK(m.find("No such file or directory") != std::string::npos);
  const std::string full = input_error([] { kvcap::write_file_atomically("/dev/full", std::string(100000, 'x')); });
  CHECK(full.find("/dev/full: cannot write: No space left on device") == 0);
}

TEST_CASE("AtomicFile: a file-size limit (as a full disk) fails the write naming the file, and leaves no trace") {
  test_support::TempDir dir("atomic-fsize");
  const fs::path target = dir.path / "big.csv";
  kvcap::write_file_atomically(target.string(), "small and complete\n");
  // In a child: the limit applies to the whole process. kvcap's main ignores SIGXFSZ, so the
  // write fails with EFBIG instead of the signal ending the process.
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim {4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &lim);
    const std::string m = input_error([&] { kvcap::write_file_atomically(target.string(), std::string(100000, 'y')); });
    ::_exit(m.find(target.string() + ": cannot write") == 0 && m.find("File too large") != std::string::npos ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(slurp(target) == "small and complete\n");
  CHECK(entries(dir.path) == std::set<std::string>{"big.csv"});
}

TEST_CASE("temporary siblings left by a killed writer are removed by the next write; a live writer's are kept") {
  test_support::TempDir dir("atomic-stale");
  const std::string stale = ".out.json.kvcap-tmp." + std::to_string(dead_pid()) + ".0";
  const std::string live = ".out.json.kvcap-tmp." + std::to_string(::getppid()) + ".0";
  dir.write(stale, "half");
  dir.write(live, "being written");
  fs::create_directories(dir.path / ".out.kvcap-tmp.1.0");  // pid 1 (init) exists: not stale
  kvcap::write_file_atomically((dir.path / "out.json").string(), "{}");
  CHECK(entries(dir.path) == std::set<std::string>{"out.json", live, ".out.kvcap-tmp.1.0"});
}

TEST_CASE("OutputFolder: a new folder appears complete at commit, with the marker listing its entries") {
  test_support::TempDir dir("folder-new");
  const fs::path out = dir.path / "a" / "b" / "out";  // parents are created
  {
    kvcap::OutputFolder f(out.string(), {"results.json", "000_seed-1"});
    f.write("results.json", "{}\n");
    f.write("000_seed-1/results.json", "{\"seed\": 1}\n");
    CHECK_FALSE(fs::exists(out));
    f.commit();
  }
  CHECK(entries(out) == std::set<std::string>{"results.json", "000_seed-1", kvcap::kOutputSetMarker});
  CHECK(slurp(out / "000_seed-1" / "results.json") == "{\"seed\": 1}\n");
  CHECK(slurp(out / kvcap::kOutputSetMarker).find("\n000_seed-1\nresults.json\n") != std::string::npos);
  CHECK(entries(out.parent_path()) == std::set<std::string>{"out"});  // no temporary sibling left
}

TEST_CASE("OutputFolder: a rerun replaces the previous set whole (no file of it survives); uncommitted changes nothing") {
  test_support::TempDir dir("folder-replace");
  const std::string out = (dir.path / "out").string();
  {
    kvcap::OutputFolder f(out, {"a.csv", "b.csv"});
    f.write("a.csv", "1");
    f.write("b.csv", "1");
    f.commit();
  }
  {
    kvcap::OutputFolder f(out, {"a.csv"});
    f.write("a.csv", "2");
    f.commit();
  }
  CHECK(entries(out) == std::set<std::string>{"a.csv", kvcap::kOutputSetMarker});
  CHECK(slurp(fs::path(out) / "a.csv") == "2");
  {
    kvcap::OutputFolder f(out, {"a.csv"});
    f.write("a.csv", "3");  // never committed: an error later in the command
  }
  CHECK(slurp(fs::path(out) / "a.csv") == "2");
  CHECK(entries(dir.path) == std::set<std::string>{"out"});
}

TEST_CASE("OutputFolder: a folder holding something kvcap did not write is refused before any work, untouched") {
  test_support::TempDir dir("folder-foreign");
  dir.write("mine/notes.txt", "keep me");
  const std::string out = (dir.path / "mine").string();
  const std::string m = input_error([&] { kvcap::OutputFolder f(out, {"results.json"}); });
  CHECK(m.find(out + ": holds 'notes.txt', which is not a kvcap output") == 0);
  CHECK(input_error([&] { kvcap::OutputFolder f(out + "/", {"results.json"}); }).find(out + ": holds") == 0);
  CHECK(slurp(dir.path / "mine" / "notes.txt") == "keep me");
  CHECK(entries(dir.path) == std::set<std::string>{"mine"});
  // So is a file where the folder should be.
  dir.write("file", "x");
  CHECK(input_error([&] { kvcap::OutputFolder f((dir.path / "file").string(), {"a"}); }).find("is not a folder") !=
        std::string::npos);
  // An empty folder, or one holding the previous set's entries only, is replaced.
  fs::create_directories(dir.path / "empty");
  {
    kvcap::OutputFolder f((dir.path / "empty").string(), {"a"});
    f.write("a", "1");
    f.commit();
  }
  CHECK(slurp(dir.path / "empty" / "a") == "1");
}

TEST_CASE("path_inside: where an --events file lies in the --out folder") {
  test_support::TempDir dir("folder-inside");
  const std::string out = (dir.path / "out").string();
  CHECK(kvcap::path_inside(out + "/events.jsonl", out) == "events.jsonl");
  CHECK(kvcap::path_inside(out + "/logs/../ev.jsonl", out + "/") == "ev.jsonl");
  CHECK(kvcap::path_inside(out + "/logs/ev.jsonl", out) == "logs/ev.jsonl");
  CHECK(kvcap::path_inside((dir.path / "ev.jsonl").string(), out).empty());
  CHECK(kvcap::path_inside(out, out).empty());
  CHECK(kvcap::path_inside(out + "2/ev.jsonl", out).empty());
}
