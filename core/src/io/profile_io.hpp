// The scenario's `profile` section (docs/scenario.md, "Profile") <-> ProfileSpec. Parsing never
// throws: bad input comes back as an Error naming the JSON path, like the rest of the scenario.
#pragma once

#include <nlohmann/json.hpp>

#include "hapmoe/error.hpp"
#include "hapmoe/profile.hpp"
#include "hapmoe/specs.hpp"

namespace hapmoe {

// Bounds of the section (hostile input): GPU types, points per GPU type.
inline constexpr size_t kMaxProfileGpus = 64;
inline constexpr size_t kMaxProfileLayerPoints = 1024;
inline constexpr size_t kMaxProfileCollectivePoints = 4096;
// Bounds of one point (the importers check their rows against the same): a layer's forward or
// backward time from 10^-6 ms (1 ns, below any kernel launch) to 10^7 ms (~3 h); a message from
// 1 byte to 2^50 (1 PiB); a bus bandwidth from 10^-3 GB/s (1 MB/s; nccl-tests prints two
// decimals, so 0.01 is its smallest non-zero busbw) to 10^5 GB/s (~100x NVLink 5). A denormal
// bandwidth made every collective time infinite.
inline constexpr double kMinProfileMs = 1e-6, kMaxProfileMs = 1e7;
inline constexpr double kMinProfileBytes = 1, kMaxProfileBytes = 1125899906842624.0;
inline constexpr double kMinProfileBusbwGbps = 1e-3, kMaxProfileBusbwGbps = 1e5;

// Reads `profile` found at `path`; every key must name a GPU id used by the cluster. Two points
// of one GPU with the same key (a layer's kind, tp, cp, ep, etp, micro_batch_size and
// seq_length; a collective's op, ranks, placement and bytes) must carry the same values: a
// profile holds one measurement per point.
Expected<ProfileSpec> parse_profile(const nlohmann::json& v, const std::string& path, const ClusterSpec& cluster);
// One GPU's points at `path` (the checks of parse_profile but the GPU id's).
Expected<GpuProfile> parse_gpu_profile(const nlohmann::json& v, const std::string& path);

nlohmann::json profile_to_json(const ProfileSpec& p);
nlohmann::json gpu_profile_to_json(const GpuProfile& g);

}  // namespace hapmoe
