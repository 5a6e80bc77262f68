#include "sim/util/shard_file.hpp"

#include <sys/stat.h>

#include <map>

#include "sim/util/build_info.hpp"
#include "sim/util/error.hpp"
#include "sim/util/input_file.hpp"
#include "sim/util/json_parse.hpp"
#include "sim/util/text.hpp"
#include "sim/util/work_journal.hpp"

namespace kvcap {

using ojson = nlohmann::ordered_json;

namespace {

std::string shard_file_path(const std::string& input, const std::string& kind, const InputNames& names) {
  struct stat st {};
  if (::stat(input.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    std::string dir = input;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    const std::string file = dir + "/" + kShardFile;
    struct stat f {};
    if (::stat(file.c_str(), &f) != 0)
      throw InputError(escape_text(input), std::string("holds no ") + kShardFile + ": expected the " + names("out") +
                                               " folder of a finished `kvcap " + kind + " " + names("shard") +
                                               " I/N` (a shard that was stopped writes none: rerun it with " +
                                               names("resume") + ")");
    return file;
  }
  return input;
}

std::vector<std::string> file_lines(const std::string& file, const std::string& shown, const std::string& kind,
                                    const InputNames& names) {
  const std::string text = read_regular_file(file, "", "shard file");
  if (text.empty() || text.back() != '\n')
    throw InputError(shown, "is empty or cut short (no final newline); expected the shard.jsonl kvcap " + kind + " " +
                                names("shard") + " writes");
  std::vector<std::string> lines;
  for (size_t start = 0, nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
    lines.push_back(text.substr(start, nl - start));
  return lines;
}

const ojson& member(const ojson& obj, const char* key, const std::string& where) {
  const auto it = obj.find(key);
  if (it == obj.end()) throw InputError(where, std::string("expected \"") + key + "\" in a shard file's first line");
  return *it;
}

int64_t whole_number(const ojson& v, const char* key, const std::string& where) {
  if (!v.is_number_unsigned() || v.get<uint64_t>() > (uint64_t{1} << 40))
    throw InputError(where, std::string("\"") + key + "\" must be a whole number >= 0");
  return v.get<int64_t>();
}

}  // namespace

std::string shard_file_kind(const std::string& input, const std::vector<std::string>& kinds, const InputNames& names) {
  const std::string file = shard_file_path(input, kinds.front(), names);
  const std::string shown = escape_text(file);
  const std::vector<std::string> lines = file_lines(file, shown, kinds.front(), names);
  (void)parse_json_line(lines[0], shown + ":1");
  const ojson header = ojson::parse(lines[0]);
  std::string expected;
  for (const auto& k : kinds) {
    if (header.is_object() && header.contains("kvcap_" + k + "_shard")) return k;
    expected += (expected.empty() ? "" : " or ") + ("kvcap " + k + " " + names("shard"));
  }
  throw InputError(shown + ":1", "not a kvcap shard (expected the shard.jsonl " + expected + " writes)");
}

ShardFile read_shard_file(const std::string& input, const std::string& kind, const InputNames& names) {
  const std::string file = shard_file_path(input, kind, names);
  ShardFile s;
  s.shown = escape_text(file);
  const std::vector<std::string> lines = file_lines(file, s.shown, kind, names);
  const std::string where1 = s.shown + ":1";
  (void)parse_json_line(lines[0], where1);
  s.header = ojson::parse(lines[0]);
  const std::string key = "kvcap_" + kind + "_shard";
  if (!s.header.is_object() || !s.header.contains(key) || s.header[key] != 1)
    throw InputError(where1, "not a kvcap " + kind + " shard (expected the shard.jsonl kvcap " + kind + " " +
                                 names("shard") + " writes)");
  s.identity = member(s.header, "identity", where1);
  if (!s.identity.is_object()) throw InputError(where1, "\"identity\" must be an object");
  const ojson& shard = member(s.header, "shard", where1);
  if (!shard.is_object()) throw InputError(where1, "\"shard\" must be an object {\"index\", \"count\"}");
  s.spec.count = whole_number(member(shard, "count", where1), "count", where1);
  s.spec.index = whole_number(member(shard, "index", where1), "index", where1);
  if (s.spec.count < 1 || s.spec.index >= s.spec.count)
    throw InputError(where1, "\"shard\" must have 0 <= index < count");
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string where = s.shown + ":" + std::to_string(i + 1);
    (void)parse_json_line(lines[i], where);
    s.records.push_back({ojson::parse(lines[i]), where});
  }
  return s;
}

void check_shard_set(const std::vector<ShardFile>& shards, const std::string& kind, const InputNames& names) {
  if (shards.empty()) throw InputError("kvcap merge", "expected the shard folders to merge");
  const ShardFile& first = shards.front();
  require_this_build(first.identity, first.shown, "merge with the kvcap that ran the shards");
  std::map<int64_t, const ShardFile*> by_index;
  for (const ShardFile& s : shards) {
    if (&s != &first) {
      const std::string differs = identity_difference(first.identity, s.identity, names);
      if (!differs.empty())
        throw InputError(s.shown, "is a shard of another " + kind + " than " + first.shown + ": " + differs + " differs");
      if (s.spec.count != first.spec.count)
        throw InputError(s.shown, "is shard " + shard_label(s.spec) + ", of another split than " + first.shown +
                                      " (shard " + shard_label(first.spec) + ")");
    }
    const auto [it, fresh] = by_index.emplace(s.spec.index, &s);
    if (!fresh)
      throw InputError(s.shown, "is shard " + shard_label(s.spec) + " again (" + it->second->shown +
                                    " is too): give each shard once");
  }
  for (int64_t i = 0; i < first.spec.count; ++i)
    if (!by_index.count(i)) {
      std::string given;
      for (const auto& [k, s] : by_index) given += (given.empty() ? "" : ", ") + shard_label(s->spec) + " " + s->shown;
      throw InputError("kvcap merge", "shard " + std::to_string(i) + "/" + std::to_string(first.spec.count) +
                                          " is missing (given: " + given + ")");
    }
}

}  // namespace kvcap
