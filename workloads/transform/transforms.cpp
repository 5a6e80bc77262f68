#include "workloads/transform/transforms.hpp"

#include <algorithm>

#include "sim/util/error.hpp"

namespace kvcap {

bool WindowSource::next(Request& out) {
  while (!done_ && inner_->next(out)) {
    if (out.arrival_s < start_s_) {
      ++own_.filtered_out;
      continue;
    }
    if (out.arrival_s >= end_s_) break;
    out.arrival_s -= start_s_;
    return true;
  }
  done_ = true;
  return false;
}

bool SampleSource::next(Request& out) {
  while (inner_->next(out)) {
    if (rng_.uniform01() < fraction_) return true;
    ++own_.filtered_out;
  }
  return false;
}

bool ArrivalAssignSource::next(Request& out) {
  if (!inner_->next(out)) return false;
  out.arrival_s = clock_.next_s();
  return true;
}

bool TimeScaleSource::next(Request& out) {
  if (!inner_->next(out)) return false;
  out.arrival_s *= factor_;
  return true;
}

// Sources key completions by request id, not by arrival time, so only the time is converted.
void TimeScaleSource::on_completion(const Request& r, double t) { inner_->on_completion(r, t / factor_); }

bool LengthCapSource::next(Request& out) {
  while (inner_->next(out)) {
    if (policy_ == LengthCapPolicy::keep || max_len_ <= 0 ||
        out.prompt_tokens + out.output_tokens <= max_len_) {
      rejected_in_a_row_ = 0;
      return true;
    }
    // Nothing fits when max_model_len < 2: one prompt and one output token are the minimum.
    if (policy_ == LengthCapPolicy::reject || max_len_ < 2) {
      ++own_.rejected_too_long;
      if (++rejected_in_a_row_ >= kMaxRejectedInARow)
        throw InputError(where_, std::to_string(kMaxRejectedInARow) + " requests in a row have prompt + output above max_model_len " +
                                     std::to_string(max_len_) + " and 'reject' drops each one (the last had " +
                                     std::to_string(out.prompt_tokens) + " + " + std::to_string(out.output_tokens) +
                                     " tokens): lower the lengths, raise max_model_len, or use \"truncate\"");
      // A closed-loop user whose request is refused moves on (think time, then its next one).
      inner_->on_completion(out, out.arrival_s);
      continue;
    }
    out.prompt_tokens = std::min(out.prompt_tokens, max_len_ - 1);
    out.output_tokens = std::min(out.output_tokens, max_len_ - out.prompt_tokens);
    int64_t left = out.prompt_tokens;  // keep the content prefix that still fits
    size_t keep = 0;
    for (; keep < out.content.size() && left > 0; ++keep) {
      out.content[keep].tokens = std::min(out.content[keep].tokens, left);
      left -= out.content[keep].tokens;
    }
    out.content.resize(keep);
    ++own_.truncated;
    return true;
  }
  return false;
}

bool LabelSource::next(Request& out) {
  if (!inner_->next(out)) return false;
  if (!cls_.empty()) out.request_class = cls_;
  if (set_priority_) out.priority = priority_;
  return true;
}

LoopSource::LoopSource(std::function<std::unique_ptr<RequestSource>()> open, double until_s)
    : open_(std::move(open)), cur_(open_()), until_s_(until_s) {}

bool LoopSource::next(Request& out) {
  while (!finished_) {
    if (cur_->next(out)) {
      if (pass_ == 0) {
        if (n_in_pass_ == 0) first_ = out.arrival_s;
        last_ = out.arrival_s;
      }
      ++n_in_pass_;
      if (pass_ > 0) {
        out.arrival_s += period_ * static_cast<double>(pass_);
        out.id += "#" + std::to_string(pass_);
        const uint64_t key = derive_seed(0x6c6f6f70ull, static_cast<uint64_t>(pass_));
        for (auto& seg : out.content) seg.id ^= key;
      }
      if (out.arrival_s >= until_s_) {
        finished_ = true;
        break;
      }
      ++emitted_;
      return true;
    }
    // End of a pass: decide the period from pass 0, then reopen.
    if (pass_ == 0) {
      if (n_in_pass_ == 0) {
        finished_ = true;
        break;
      }
      double span = last_ - first_;
      double mean_gap = n_in_pass_ > 1 ? span / static_cast<double>(n_in_pass_ - 1) : 1.0;
      period_ = last_ + (mean_gap > 0 ? mean_gap : 1.0);
    }
    done_passes_ += cur_->counts();
    done_passes_.emitted = 0;
    ++pass_;
    n_in_pass_ = 0;
    cur_ = open_();
  }
  return false;
}

WorkloadCounts LoopSource::counts() const {
  WorkloadCounts c = done_passes_;
  WorkloadCounts cur = cur_->counts();
  cur.emitted = 0;
  c += cur;
  c.emitted = emitted_;
  return c;
}

MergeSource::MergeSource(std::vector<std::unique_ptr<RequestSource>> sources,
                         std::vector<std::string> prefixes)
    : src_(std::move(sources)), prefix_(std::move(prefixes)), head_(src_.size()), has_head_(src_.size(), 0) {
  KVCAP_CHECK(prefix_.size() == src_.size(), "one prefix per merged source");
}

bool MergeSource::next(Request& out) {
  size_t best = src_.size();
  for (size_t i = 0; i < src_.size(); ++i) {
    if (!has_head_[i]) has_head_[i] = src_[i]->next(head_[i]) ? 1 : 0;
    if (has_head_[i] && (best == src_.size() || head_[i].arrival_s < head_[best].arrival_s)) best = i;
  }
  if (best == src_.size()) return false;
  out = std::move(head_[best]);
  has_head_[best] = 0;
  if (src_.size() > 1) out.id = prefix_[best] + "/" + out.id;
  ++emitted_;
  return true;
}

WorkloadCounts MergeSource::counts() const {
  WorkloadCounts c;
  for (const auto& s : src_) c += s->counts();
  c.emitted = emitted_;
  return c;
}

void MergeSource::on_completion(const Request& r, double t) {
  if (src_.size() == 1) {
    src_[0]->on_completion(r, t);
    return;
  }
  for (size_t i = 0; i < src_.size(); ++i) {
    const std::string& p = prefix_[i];
    if (r.id.size() > p.size() && r.id.compare(0, p.size(), p) == 0 && r.id[p.size()] == '/') {
      Request inner = r;
      inner.id = r.id.substr(p.size() + 1);
      src_[i]->on_completion(inner, t);
    }
  }
}

bool MergeSource::waiting_for_completions() const {
  for (const auto& s : src_)
    if (s->waiting_for_completions()) return true;
  return false;
}

int64_t MergeSource::max_requests_hint() const {
  int64_t total = 0;
  for (const auto& s : src_) {
    const int64_t n = s->max_requests_hint();
    if (n < 0) return -1;
    total += n;
  }
  return total;
}

}  // namespace kvcap
