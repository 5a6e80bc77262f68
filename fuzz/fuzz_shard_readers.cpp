// The readers of what kvcap itself wrote for a later kvcap to read (issue #16): the shard files
// `kvcap merge` reads and the journals `--resume` reads, one harness per reader:
//   sweep_shard     `kvcap sweep --shard I/N` shard.jsonl, through merge_sweep_shards and the
//                   table and JSON document merge prints
//   search_shard    `kvcap search --min-replicas --shard I/N` shard.jsonl, through
//                   merge_sizing_shards and every report merge writes from it
//   sweep_journal   a sweep's .kvcap-journal.jsonl, read back as `sweep --resume` does
//   search_journal  a sizing's .kvcap-journal.jsonl, read back as `search --resume` does
// A shard or journal of another kvcap build is refused before its records matter, so the
// harness first stamps the input's identity with this build (when its first line is a JSON
// object holding one): the fuzzer then reaches the readers behind that check.
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz/fuzz_support.hpp"
#include "fuzz/harnesses.hpp"
#include "sim/report/procurement_report.hpp"
#include "sim/report/search_report_html.hpp"
#include "sim/search/search_report.hpp"
#include "sim/search/sizing_run.hpp"
#include "sim/sweep/sweep_journal.hpp"
#include "sim/sweep/sweep_report.hpp"
#include "sim/sweep/sweep_shard.hpp"
#include "sim/util/build_info.hpp"
#include "sim/util/json_parse.hpp"
#include "sim/util/output_folder.hpp"
#include "sim/util/work_journal.hpp"


using namespace kvcap;
using ojson = nlohmann::ordered_json;

namespace {

/// The input with its first line's identity stamped with this build; the first line parsed (null
/// when it is not a JSON object).
std::string this_build(std::string_view input, ojson& header) {
  const size_t nl = input.find('\n');
  const std::string_view first = input.substr(0, nl);
  header = nullptr;
  try {
    (void)parse_json_line(first, "fuzz");  // syntax and depth, as the readers check it
  } catch (const InputError&) {
    return std::string(input);
  }
  ojson h = ojson::parse(first, nullptr, false);
  if (h.is_discarded() || !h.is_object()) return std::string(input);
  if (h.contains("identity") && h["identity"].is_object()) {
    h["identity"]["kvcap_version"] = KVCAP_VERSION;
    h["identity"]["kvcap_build"] = kvcap_build_id();
  }
  header = h;
  return h.dump() + std::string(nl == std::string_view::npos ? std::string_view() : input.substr(nl));
}

/// A folder for the journal, made once per process, removed at exit (a plain array: it outlives
/// the static objects the exit handlers run after). On /dev/shm where there is one: every
/// journal write is fsync'd, which on a disk held the harness to 20-30 executions a second; the
/// reader under test is the same on either file system.
char journal_folder[] = "/dev/shm/kvcap-fuzz-journal-XXXXXX";

const char* journal_dir() {
  static const bool made = [] {
    if (!::mkdtemp(journal_folder)) {
      std::memcpy(journal_folder, "/tmp/kvcap-fuzz-journal-XXXXXX", sizeof "/tmp/kvcap-fuzz-journal-XXXXXX");
      if (!::mkdtemp(journal_folder)) fuzz::report_unexpected("harness", "mkdtemp failed");
    }
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(journal_folder, ec);
    });
    return true;
  }();
  (void)made;
  return journal_folder;
}

std::string write_journal(const std::string& text) {
  const std::string path = std::string(journal_dir()) + "/" + kOutputJournal;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

ojson shard_of(const ojson& header) {
  return header.is_object() && header.contains("shard") ? header["shard"] : ojson(nullptr);
}

}  // namespace

int fuzz::shard_reader_input(std::string_view reader, const uint8_t* data, size_t size) {
  static fuzz::InputFile file;
  ojson header;
  const std::string input = this_build(fuzz::as_text(data, size), header);
  return fuzz::expect_input_errors([&] {
    std::ostringstream sink;
    if (reader == "sweep_shard") {
      const SweepResult r = merge_sweep_shards({file.write(input)}, InputNames());
      print_sweep(sink, r, false);
      print_sweep(sink, r, true);
    } else if (reader == "search_shard") {
      const SizingRunResult r = merge_sizing_shards({file.write(input)}, InputNames());
      sink << sizing_json(r.rows, r.options, r.inputs).dump();
      write_sizing_csv(sink, r.rows);
      print_sizing(sink, r.rows, r.options, r.inputs);
      write_sizing_report_html(sink, r.rows, r.options);
      if (r.analysis) {
        write_procurement_html(sink, r.rows, r.options, r.inputs, *r.analysis);
        sink << procurement_markdown(r.rows, r.options, r.inputs, *r.analysis);
      }
    } else if (reader == "sweep_journal") {
      (void)write_journal(input);
      const ojson identity = header.is_object() ? header.value("identity", ojson()) : ojson();
      std::optional<ShardSpec> shard;
      const ojson s = shard_of(header);
      if (s.is_object() && s.contains("index") && s.contains("count") && s["index"].is_number_unsigned() &&
          s["count"].is_number_unsigned() && s["count"].get<uint64_t>() >= 1 && s["count"].get<uint64_t>() <= 1000 &&
          s["index"].get<uint64_t>() < s["count"].get<uint64_t>())
        shard = ShardSpec{s["index"].get<int64_t>(), s["count"].get<int64_t>()};
      SweepJournal journal(journal_dir(), true, InputNames());
      journal.start(identity, shard, 1000);
      for (const auto& [index, p] : journal.finished()) sink << point_record(p).dump();
    } else if (reader == "search_journal") {
      (void)write_journal(input);
      const ojson identity = header.is_object() ? header.value("identity", ojson()) : ojson();
      size_t candidates = 1;
      bool procurement = false;
      if (identity.is_object()) {
        if (identity.contains("candidates") && identity["candidates"].is_array() && !identity["candidates"].empty())
          candidates = std::min<size_t>(identity["candidates"].size(), 1000);
        if (identity.contains("procurement") && identity["procurement"].is_boolean())
          procurement = identity["procurement"].get<bool>();
      }
      WorkJournal journal(journal_dir(), true, "search", InputNames());
      for (const auto& e : journal.start(identity, shard_of(header)))
        sink << sizing_task_record(read_sizing_task_record(e.record, e.where, candidates, procurement)).dump();
    } else {
      fuzz::report_unexpected("harness", ("unknown shard reader " + std::string(reader)).c_str());
    }
  });
}
