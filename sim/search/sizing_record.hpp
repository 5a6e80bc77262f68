#pragma once
// A sizing row (and its probes), a headroom search's figures as JSON records and back: what a
// distributed `kvcap search --min-replicas` journals, sends from an MPI worker and writes to a
// shard file (sim/search/sizing_run.hpp). Read back they give the same outputs byte for byte:
// every field is recorded, doubles exactly (non-finite ones as the strings "inf", "-inf", "nan"),
// a probe's figures as its results.json (sim/results/run_results.hpp: read_run_results).
#include <string>

#include <nlohmann/json.hpp>

#include "sim/search/capacity_search.hpp"
#include "sim/search/procurement.hpp"

namespace kvcap {

nlohmann::ordered_json probe_record(const Probe& p);
Probe read_probe_record(const nlohmann::ordered_json& j, const std::string& where);

nlohmann::ordered_json sizing_row_record(const SizingRow& r);
/// `with_probes`: a sized row (its best_probe one of its probes when found); else an
/// alternative's row, whose probes were dropped (procurement.hpp: cheapest).
SizingRow read_sizing_row_record(const nlohmann::ordered_json& j, const std::string& where, bool with_probes);

nlohmann::ordered_json headroom_record(const CandidateHeadroom& h);
CandidateHeadroom read_headroom_record(const nlohmann::ordered_json& j, const std::string& where);

}  // namespace kvcap
