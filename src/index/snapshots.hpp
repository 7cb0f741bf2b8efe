// Search snapshots: the ranked ids of one search, kept for a while so its later pages come
// from the same ranking (contract section 5).
#pragma once
#include <optional>
#include <string>

#include "base/model.hpp"

namespace notesd {

class SearchSnapshots {
public:
    virtual ~SearchSnapshots() = default;
    virtual void save_snapshot(const SnapshotRecord& s) = 0;
    /// The user's unexpired snapshot with this id, or nullopt (unknown, expired and foreign alike).
    virtual std::optional<SnapshotRecord> find_snapshot(long long user_id, const std::string& id,
                                                        long long now_us) = 0;
    /// Deletes at most `max_rows` expired snapshots; returns how many.
    virtual int purge_snapshots(long long now_us, int max_rows) = 0;
};

}  // namespace notesd
