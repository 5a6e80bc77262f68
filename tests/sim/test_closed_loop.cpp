// Closed-loop workloads: the simulation reports every ended request (finished, rejected, lost)
// to RequestSource::on_completion and asks a stalled source again, so users that wait for their
// answer keep sending.
#include <doctest/doctest.h>

#include <map>
#include <queue>

#include "tests/support/sim_harness.hpp"

using namespace kvcap;
using namespace kvcap::test;

namespace {

/// `users` users each send the prompts of their list one after the other, the next one at the
/// moment the previous one ends (zero think time). Ids are "u<user>-<k>".
class UsersSource final : public RequestSource {
 public:
  explicit UsersSource(std::vector<std::vector<int64_t>> prompts) : prompts_(std::move(prompts)) {
    next_k_.assign(prompts_.size(), 0);
    for (size_t u = 0; u < prompts_.size(); ++u) ready_.push({0.0, static_cast<int>(u)});
  }
  bool next(Request& out) override {
    if (ready_.empty()) return false;
    const auto [t, u] = ready_.top();
    ready_.pop();
    const int k = next_k_[static_cast<size_t>(u)]++;
    out = req("u" + std::to_string(u) + "-" + std::to_string(k), t, prompts_[static_cast<size_t>(u)][static_cast<size_t>(k)], 2);
    ++in_flight_;
    return true;
  }
  void on_completion(const Request& r, double time_s) override {
    ++completions;
    --in_flight_;
    const int u = std::stoi(r.id.substr(1, r.id.find('-') - 1));
    if (next_k_[static_cast<size_t>(u)] < static_cast<int>(prompts_[static_cast<size_t>(u)].size()))
      ready_.push({time_s, u});
  }
  bool waiting_for_completions() const override { return ready_.empty() && in_flight_ > 0; }
  int completions = 0;

 private:
  using Ready = std::pair<double, int>;
  std::vector<std::vector<int64_t>> prompts_;
  std::vector<int> next_k_;
  std::priority_queue<Ready, std::vector<Ready>, std::greater<>> ready_;
  int in_flight_ = 0;
};

/// The users' requests on one vLLM V1 replica of 11 blocks, 10 ms steps, no step recorder.
struct Run {
  UsersSource* source = nullptr;
  std::unique_ptr<Harness> h;
  std::map<std::string, RequestRecord> by_id;

  Run(std::vector<std::vector<int64_t>> prompts, bool skipping) {
    SimulationOptions opt;
    opt.event_skipping = skipping;
    HarnessSetup setup;
    auto src = std::make_unique<UsersSource>(std::move(prompts));
    source = src.get();
    setup.source = std::move(src);
    setup.record = false;
    h = std::make_unique<Harness>(std::vector<Request>{}, sched_cfg(256, 8, 128),
                                  std::vector<EngineSettings>{engine("vllm-v1")}, 11, opt, "round_robin", 0.01,
                                  KvCacheSpec{}, std::move(setup));
    h->run();
    for (const auto& r : h->metrics.records()) by_id[std::string(r.id)] = r;
  }
};

}  // namespace

TEST_CASE("closed loop: each user's next request arrives when the previous one finishes") {
  // 2 users x 3 requests of 16 prompt tokens, 2 outputs: a request takes 2 steps of 10 ms
  // (prefill + 1 decode). Pairs run together: finishes at .02, .04, .06. Without completions
  // fed back the source would stall after the first pair.
  for (bool skipping : {true, false}) {
    CAPTURE(skipping);
    Run run({{16, 16, 16}, {16, 16, 16}}, skipping);
    REQUIRE(run.by_id.size() == 6);
    CHECK(run.source->completions == 6);
    CHECK(run.by_id["u0-1"].arrival_s == doctest::Approx(0.02));
    CHECK(run.by_id["u1-2"].arrival_s == doctest::Approx(0.04));
    CHECK(run.by_id["u0-2"].finish_s == doctest::Approx(0.06));
    CHECK(run.by_id["u1-2"].finish_s == doctest::Approx(0.06));
    for (const auto& [id, r] : run.by_id) CHECK(r.outcome == RequestOutcome::finished);
  }
}

TEST_CASE("closed loop: a rejected request also releases its user") {
  // u0's second prompt (200 tokens) is over max_model_len 128: rejected on arrival at .02, and
  // the rejection is a completion, so u0-2 arrives at .02 too and finishes with u1-1 at .04.
  for (bool skipping : {true, false}) {
    CAPTURE(skipping);
    Run run({{16, 200, 16}, {16, 16}}, skipping);
    REQUIRE(run.by_id.size() == 5);
    CHECK(run.by_id["u0-1"].outcome == RequestOutcome::rejected);
    CHECK(run.by_id["u0-2"].arrival_s == doctest::Approx(0.02));
    CHECK(run.by_id["u0-2"].finish_s == doctest::Approx(0.04));
    CHECK(run.by_id["u1-1"].finish_s == doctest::Approx(0.04));
    CHECK(run.source->completions == 5);
  }
}
