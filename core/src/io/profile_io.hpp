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

// Reads `profile` found at `path`; every key must name a GPU id used by the cluster.
Expected<ProfileSpec> parse_profile(const nlohmann::json& v, const std::string& path, const ClusterSpec& cluster);

nlohmann::json profile_to_json(const ProfileSpec& p);
nlohmann::json gpu_profile_to_json(const GpuProfile& g);

}  // namespace hapmoe
