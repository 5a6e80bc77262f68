// {"kind": "shared_prefix"}: inference-perf's shared-prefix load. Round-robin re-sending of a
// once-shuffled prompt list, content sharing by group, token scaling, arrivals (inference-perf's
// constant load or an open-ended process), seeds and refusals of bad input.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "wl_test_util.hpp"
#include "workloads/generate/shared_prefix_source.hpp"
#include "workloads/workload_spec.hpp"

using namespace kvcap;
using nlohmann::json;

namespace {

json base_spec() {
  return {{"kind", "shared_prefix"}, {"num_groups", 3},       {"prompts_per_group", 4}, {"system_prompt_tokens", 100},
          {"question_tokens", 20},   {"output_tokens", 50},   {"rate_per_s", 10},       {"duration_s", 1e6},
          {"max_requests", 36}};
}

std::vector<Request> run(const json& w, uint64_t seed = 1, int64_t max_model_len = 0) {
  WorkloadContext ctx;
  ctx.file = "scenario.json";
  ctx.seed = seed;
  ctx.max_model_len = max_model_len;
  return wltest::drain(*parse_workload(w, ctx)());
}

bool same_content(const Request& a, const Request& b) {
  if (a.content.size() != b.content.size() || a.prompt_tokens != b.prompt_tokens) return false;
  for (size_t k = 0; k < a.content.size(); ++k)
    if (a.content[k].id != b.content[k].id || a.content[k].tokens != b.content[k].tokens) return false;
  return true;
}

SharedPrefixSpec direct_spec(uint64_t seed) {
  SharedPrefixSpec s;
  s.num_groups = 3;
  s.prompts_per_group = 4;
  s.system_prompt_tokens = 100;
  s.question_tokens = 20;
  s.output_tokens = 50;
  s.arrival.rate_per_s = 10;
  s.duration_s = 1e6;
  s.max_requests = 24;
  s.seed = seed;
  return s;
}

/// (group, prompt) of each request, read back through the content ids.
std::vector<std::pair<int64_t, int64_t>> prompts_sent(uint64_t seed) {
  const SharedPrefixSpec s = direct_spec(seed);
  std::map<uint64_t, std::pair<int64_t, int64_t>> by_id;
  for (int64_t g = 0; g < s.num_groups; ++g)
    for (int64_t p = 0; p < s.prompts_per_group; ++p) by_id[SharedPrefixSource::question_id(seed, g, p)] = {g, p};
  SharedPrefixSource src(s);
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const Request& r : wltest::drain(src)) {
    REQUIRE(r.content.size() == 2);
    auto it = by_id.find(r.content[1].id);
    REQUIRE(it != by_id.end());
    CHECK(r.content[0].id == SharedPrefixSource::system_prompt_id(seed, it->second.first));
    out.push_back(it->second);
  }
  return out;
}

}  // namespace

TEST_CASE("shared_prefix: the first N requests send every prompt once, then the cycle repeats") {
  const auto sent = prompts_sent(7);
  REQUIRE(sent.size() == 24);
  const std::set<std::pair<int64_t, int64_t>> first(sent.begin(), sent.begin() + 12);
  CHECK(first.size() == 12);  // 3 groups x 4 prompts, each exactly once
  for (size_t i = 0; i < 12; ++i) CHECK(sent[i] == sent[i + 12]);

  const auto r = run(base_spec());
  REQUIRE(r.size() == 36);
  for (size_t i = 0; i < 24; ++i) {
    CAPTURE(i);
    CHECK(same_content(r[i], r[i + 12]));
  }
  CHECK(r[0].id == "sp-0");
  CHECK(r[35].id == "sp-35");
  CHECK(r[0].output_tokens == 50);
  CHECK(r[0].output_segment_id == 0);  // answers are not re-sent: private
  CHECK(r[0].session_id == -1);
}

TEST_CASE("shared_prefix: prompts of one group share the system prompt, other groups do not") {
  const auto r = run(base_spec());
  std::map<uint64_t, std::set<uint64_t>> questions_by_system;
  for (size_t i = 0; i < 12; ++i) {
    REQUIRE(r[i].content.size() == 2);
    CHECK(r[i].content[0].tokens == 100);
    CHECK(r[i].content[1].tokens == 20);
    CHECK(r[i].prompt_tokens == 120);
    questions_by_system[r[i].content[0].id].insert(r[i].content[1].id);
  }
  CHECK(questions_by_system.size() == 3);  // one system prompt per group
  std::set<uint64_t> all_questions;
  for (const auto& entry : questions_by_system) {
    CHECK(entry.second.size() == 4);  // 4 distinct questions under each
    all_questions.insert(entry.second.begin(), entry.second.end());
  }
  CHECK(all_questions.size() == 12);

  // No system prompt: the question is the whole (shared-by-nobody-else) prompt.
  json w = base_spec();
  w["system_prompt_tokens"] = 0;
  const auto q = run(w);
  REQUIRE(q[0].content.size() == 1);
  CHECK(q[0].prompt_tokens == 20);
}

TEST_CASE("shared_prefix: token_scale rounds each part to whole tokens") {
  json w = base_spec();
  // The calibration runs' re-tokenisation ratio: 566 x 1.045 = 591.47 -> 591 and
  // 50 x 1.045 = 52.25 -> 52; prompt 643.
  w["system_prompt_tokens"] = 566;
  w["question_tokens"] = 50;
  w["token_scale"] = 1.045;
  auto r = run(w);
  CHECK(r[0].content[0].tokens == 591);
  CHECK(r[0].content[1].tokens == 52);
  CHECK(r[0].prompt_tokens == 643);
  CHECK(r[0].output_tokens == 50);  // outputs are counted by the server: not scaled
  // Halves round away from zero (0.5 is exact in binary): 7 x 0.5 = 3.5 -> 4; a 1-token question
  // stays 1 token (0.5 -> 1), so the scale never empties a prompt.
  w["system_prompt_tokens"] = 7;
  w["question_tokens"] = 1;
  w["token_scale"] = 0.5;
  r = run(w);
  CHECK(r[0].content[0].tokens == 4);
  CHECK(r[0].content[1].tokens == 1);
  // 2 x 100 = 200 and 2 x 20 = 40.
  w = base_spec();
  w["token_scale"] = 2;
  CHECK(run(w)[0].prompt_tokens == 240);
}

TEST_CASE("shared_prefix: rate_per_s is inference-perf's constant load, an arrival object is open-ended") {
  json w = base_spec();
  w.erase("max_requests");
  w["rate_per_s"] = 5;
  w["duration_s"] = 2000;
  auto r = run(w);
  // Exactly int(5 x 2000) = 10,000 requests; the gaps are exponential draws scaled to sum to the
  // duration, so the last request arrives at 2000 s.
  REQUIRE(r.size() == 10000);
  CHECK(r.back().arrival_s == doctest::Approx(2000).epsilon(1e-12));
  double prev = 0, sum = 0, sum2 = 0;
  bool ordered = true;
  for (const auto& q : r) {
    const double gap = q.arrival_s - prev;
    ordered = ordered && gap >= 0;
    sum += gap;
    sum2 += gap * gap;
    prev = q.arrival_s;
  }
  CHECK(ordered);
  CHECK(r.front().arrival_s > 0);
  // Mean gap 0.2 s by construction; CV of exponential gaps is 1 (the estimate's standard error
  // over 10,000 gaps is about 0.01; 0.05 is 5 sigma).
  const double mean = sum / 10000, cv = std::sqrt(sum2 / 10000 - mean * mean) / mean;
  CHECK(mean == doctest::Approx(0.2).epsilon(1e-9));
  CHECK(std::abs(cv - 1) < 0.05);
  // Python's int() of the same double product: 0.29 x 100 = 28.999999999999996 -> 28.
  w["rate_per_s"] = 0.29;
  w["duration_s"] = 100;
  CHECK(run(w).size() == 28);

  // An open-ended Poisson process: a random count over 2000 s, mean 10,000, sd 100; 400 is 4
  // sigma. Arrivals stay below duration_s.
  w.erase("rate_per_s");
  w["duration_s"] = 2000;
  w["arrival"] = {{"process", "poisson"}, {"rate_per_s", 5}};
  r = run(w);
  CHECK(std::abs(static_cast<double>(r.size()) - 10000) < 400);
  prev = 0;
  ordered = true;
  for (const auto& q : r) {
    ordered = ordered && q.arrival_s >= prev;
    prev = q.arrival_s;
  }
  CHECK(ordered);
  CHECK(prev < 2000);
  // Gamma gaps with CV 2: the count's sd is about cv x sqrt(10,000) = 200; 1,000 is 5 sigma.
  w["arrival"] = {{"process", "gamma"}, {"rate_per_s", 5}, {"cv", 2}};
  CHECK(std::abs(static_cast<double>(run(w).size()) - 10000) < 1000);
  // max_requests stops early.
  w["max_requests"] = 10;
  CHECK(run(w).size() == 10);
}

TEST_CASE("shared_prefix: the seed fixes the stream; another seed shuffles differently") {
  json w = base_spec();
  const auto a = run(w, 11), b = run(w, 11), c = run(w, 12);
  REQUIRE(a.size() == b.size());
  bool same = true;
  for (size_t i = 0; i < a.size(); ++i)
    same = same && a[i].id == b[i].id && a[i].arrival_s == b[i].arrival_s && same_content(a[i], b[i]);
  CHECK(same);
  CHECK(a[0].arrival_s != c[0].arrival_s);
  CHECK(a[0].content[1].id != c[0].content[1].id);
  // The order itself (not just the ids) differs: read it back as (group, prompt) pairs.
  CHECK(prompts_sent(7) == prompts_sent(7));
  CHECK(prompts_sent(7) != prompts_sent(8));
}

TEST_CASE("shared_prefix: length cap applies as for generated workloads") {
  // 120 + 50 = 170 tokens per request > 160: every request refused before arrival.
  CHECK(run(base_spec(), 1, 160).empty());
  CHECK(run(base_spec(), 1, 170).size() == 36);
}

TEST_CASE("shared_prefix: bad input is an InputError naming the field") {
  auto error_for = [](const json& w) { return wltest::error_of([&] { run(w); }); };
  auto without = [](const char* key) {
    json w = base_spec();
    w.erase(key);
    return w;
  };
  auto with = [](const char* key, const json& v) {
    json w = base_spec();
    w[key] = v;
    return w;
  };
  for (const char* key :
       {"num_groups", "prompts_per_group", "system_prompt_tokens", "question_tokens", "output_tokens", "duration_s"}) {
    CAPTURE(key);
    const std::string e = error_for(without(key));
    CHECK(e.find("/workload/" + std::string(key)) != std::string::npos);
    CHECK(e.find("missing") != std::string::npos);
  }
  CHECK(error_for(without("rate_per_s")).find("/workload/rate_per_s") != std::string::npos);
  CHECK(error_for(with("system_prompt_tokens", -1)).find("/workload/system_prompt_tokens") != std::string::npos);
  CHECK(error_for(with("question_tokens", 0)).find("/workload/question_tokens") != std::string::npos);
  CHECK(error_for(with("num_groups", -2)).find("/workload/num_groups") != std::string::npos);
  CHECK(error_for(with("output_tokens", 1.5)).find("/workload/output_tokens") != std::string::npos);
  CHECK(error_for(with("rate_per_s", 0)).find("/workload/rate_per_s") != std::string::npos);
  json too_few = with("rate_per_s", 0.001);  // 0.001/s x 100 s: no request would be sent
  too_few["duration_s"] = 100;
  CHECK(error_for(too_few).find("/workload/rate_per_s") != std::string::npos);
  CHECK(error_for(with("duration_s", -5)).find("/workload/duration_s") != std::string::npos);
  CHECK(error_for(with("token_scale", 3)).find("/workload/token_scale") != std::string::npos);
  CHECK(error_for(with("output_tokens", 1e9)).find("/workload/output_tokens") != std::string::npos);
  // 100,000 x 1,000 prompts would hold 400 MB of order: refused as absurd.
  json big = with("num_groups", 100000);
  big["prompts_per_group"] = 1000;
  CHECK(error_for(big).find("/workload/prompts_per_group") != std::string::npos);
  // inference-perf's own key name is not ours: refused, listing what is accepted.
  const std::string e = error_for(with("num_prompts_per_group", 4));
  CHECK(e.find("/workload/num_prompts_per_group") != std::string::npos);
  CHECK(e.find("unknown key") != std::string::npos);
  json both = base_spec();
  both["arrival"] = {{"process", "poisson"}, {"rate_per_s", 1}};
  CHECK(error_for(both).find("/workload/rate_per_s") != std::string::npos);
  json bad_arrival = without("rate_per_s");
  bad_arrival["arrival"] = {{"process", "poisson"}};  // its rate is missing
  CHECK(error_for(bad_arrival).find("/workload/arrival/rate_per_s") != std::string::npos);
}
