// The journal a sweep resumes from (sim/util/journal_file): complete lines read back, a line a
// kill cut short ignored and cut off before the next line is written (never glued to it), one
// writer at a time, and a JSON line per point that reads back as the same outputs.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sim/sweep/sweep_journal.hpp"
#include "sim/util/json_parse.hpp"
#include "sim/util/error.hpp"
#include "sim/util/journal_file.hpp"
#include "tests/reliability/reliability_util.hpp"
#include "tests/support/temp_dir.hpp"

namespace {

/// The message of the InputError `f` throws ("" when it throws none).
template <class F>
std::string journal_error(F f) {
  try {
    f();
  } catch (const kvcap::InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("JournalFile: lines read back whole; a torn last line is ignored, then cut off before the next append") {
  test_support::TempDir dir("journal-file");
  const std::string path = (dir.path / "j.jsonl").string();
  {
    kvcap::JournalFile j(path);
    CHECK(j.created());
    CHECK(j.lines().empty());
    j.append("{\"a\":1}");
    j.append("{\"b\":2}");
  }
  CHECK(reliability_test::slurp(path) == "{\"a\":1}\n{\"b\":2}\n");
  std::ofstream(path, std::ios::app) << "{\"c\":";  // what a kill mid-write can leave
  {
    kvcap::JournalFile j(path);
    CHECK(!j.created());
    CHECK(j.lines() == std::vector<std::string>{"{\"a\":1}", "{\"b\":2}"});
    CHECK(j.torn_bytes() == 5);
    j.append("{\"d\":4}");
  }
  CHECK(reliability_test::slurp(path) == "{\"a\":1}\n{\"b\":2}\n{\"d\":4}\n");
  {
    kvcap::JournalFile j(path);
    CHECK(j.lines().size() == 3);
    j.clear();
    j.append("x");
  }
  CHECK(reliability_test::slurp(path) == "x\n");
}

TEST_CASE("JournalFile: one writer at a time; appends from many threads are whole lines") {
  test_support::TempDir dir("journal-lock");
  const std::string path = (dir.path / "j.jsonl").string();
  kvcap::JournalFile j(path, "out/.kvcap-journal.jsonl");
  const std::string second = journal_error([&] { kvcap::JournalFile again(path, "out/.kvcap-journal.jsonl"); });
  CHECK(second.find("out/.kvcap-journal.jsonl: another kvcap is writing this journal") == 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&j, t] {
      for (int i = 0; i < 50; ++i) j.append(std::string(100 + t, static_cast<char>('a' + t)));
    });
  for (auto& t : threads) t.join();
  std::istringstream in(reliability_test::slurp(path));
  int lines = 0;
  for (std::string l; std::getline(in, l); ++lines) {
    REQUIRE(!l.empty());
    CHECK(l.size() == 100 + static_cast<size_t>(l[0] - 'a'));
    CHECK(l.find_first_not_of(l[0]) == std::string::npos);
  }
  CHECK(lines == 200);
  j.remove();
  CHECK(!std::filesystem::exists(path));
  // Removed and closed: the next opening starts a new file.
  kvcap::JournalFile fresh(path);
  CHECK(fresh.created());
}

TEST_CASE("point records: a point's record reads back as the same point, byte for byte") {
  kvcap::SweepPoint p;
  p.index = 7;
  p.ok = true;
  // A point's figures: a shipped scenario's run, with numbers whose text a journal must keep.
  p.results = kvcap::run_point(kvcap::read_json_file(std::string(KVCAP_SOURCE_DIR) + "/scenarios/basic.json"),
                               std::string(KVCAP_SOURCE_DIR) + "/scenarios/basic.json");
  p.results.throughput.requests_per_s = 0.1;
  p.results.duration_s = 1e-7;
  p.results.kv.efficiency.reset();  // null
  p.results.kv.capacity_tokens = 123456789012;
  p.results.running.mean = -0.0;
  kvcap::CapacityFigures c;
  c.found = true;
  c.requests_per_s = 1.0 / 3.0;
  c.load_scale = 2.5e-3;
  c.probes = 9;
  p.capacity = c;
  const std::string line = kvcap::point_record(p).dump();
  const kvcap::SweepPoint back = kvcap::read_point_record(nlohmann::ordered_json::parse(line), "j:2");
  CHECK(back.index == 7);
  CHECK(back.ok);
  CHECK(results_json(back.results).dump(2) == results_json(p.results).dump(2));  // key order and every number's text kept
  REQUIRE(back.capacity.has_value());
  CHECK(back.capacity->requests_per_s == c.requests_per_s);
  CHECK(back.capacity->load_scale == c.load_scale);
  CHECK(back.capacity->probes == 9);
  CHECK(kvcap::point_record(back).dump() == line);

  kvcap::SweepPoint failed;
  failed.index = 3;
  failed.error = "scenarios/x.json: /engine: does not fit";
  const kvcap::SweepPoint failed_back =
      kvcap::read_point_record(nlohmann::ordered_json::parse(kvcap::point_record(failed).dump()), "j:3");
  CHECK(!failed_back.ok);
  CHECK(failed_back.error == failed.error);

  CHECK(journal_error([] { (void)kvcap::read_point_record(nlohmann::ordered_json::parse(R"({"index": -1})"), "j:4"); })
            .find("j:4: expected \"index\"") == 0);
  CHECK(journal_error([] { (void)kvcap::read_point_record(nlohmann::ordered_json::parse(R"({"index": 1, "ok": true})"), "j:5"); })
            .find("j:5: expected \"results\"") == 0);
}

TEST_CASE("point records: results that are not a results.json this kvcap writes are refused, naming the field") {
  // Since the figures are typed (RunResults), a record's results must be a whole results.json
  // of this kvcap: a key it does not know would be lost on the way back, so it is refused.
  kvcap::SweepPoint p;
  p.index = 2;
  p.ok = true;
  p.results = kvcap::run_point(kvcap::read_json_file(std::string(KVCAP_SOURCE_DIR) + "/scenarios/basic.json"),
                               std::string(KVCAP_SOURCE_DIR) + "/scenarios/basic.json");
  nlohmann::ordered_json record = kvcap::point_record(p);
  record["results"]["note"] = "added by hand";
  CHECK(journal_error([&] { (void)kvcap::read_point_record(record, "j:2"); }) ==
        "j:2: expected \"results\", the point's results.json (not a results.json as this kvcap writes it: 'note' is no "
        "figure of results.json)");
  record = kvcap::point_record(p);
  record["results"]["requests"].erase("met_slo");
  CHECK(journal_error([&] { (void)kvcap::read_point_record(record, "j:2"); }) ==
        "j:2: expected \"results\", the point's results.json (results.json has no 'requests.met_slo')");
  CHECK(journal_error([] {
          (void)kvcap::read_point_record(nlohmann::ordered_json::parse(R"({"index": 1, "ok": true, "results": {"z": 1}})"), "j:6");
        }) == "j:6: expected \"results\", the point's results.json (results.json has no 'scenario')");
}
