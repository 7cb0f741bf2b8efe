// A worker's copies of the term blocks its searches read, by (segment, term). A segment's
// blocks never change and its id is never reused (segments.hpp), so a copy is never stale: it
// is dropped only to stay within the byte budget (least recently used first) or when the
// segment is merged away. What it saves is a statement per term and search: on the servers a
// round trip and the blocks' bytes through the client library each time (doc/benchmarks.md,
// "Term blocks kept by the workers").
#pragma once
#include <cstddef>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace notesd::detail {

/// One block of a segment's postings of a term: the ordinals it covers and its encoded data.
struct CachedBlock {
    long long first = 0, last = 0;
    std::string data;
};
/// A segment's blocks of one term by first ordinal; empty when the segment lacks the term.
using CachedTermBlocks = std::vector<CachedBlock>;

class TermBlockCache {
public:
    explicit TermBlockCache(std::size_t max_bytes) : max_bytes_(max_bytes) {}
    /// The copy of the segment's blocks of `term`; null when none is kept.
    std::shared_ptr<const CachedTermBlocks> find(long long segment_id, const std::string& term);
    /// Keeps `blocks` as the segment's blocks of `term` (unless larger than the whole budget)
    /// and returns them; older copies leave to make room.
    std::shared_ptr<const CachedTermBlocks> put(long long segment_id, const std::string& term,
                                                CachedTermBlocks blocks);
    /// Drops every copy of the segment's blocks (it was merged away).
    void forget_segment(long long segment_id);
    std::size_t bytes() const { return bytes_; }
    std::size_t entries() const { return map_.size(); }

private:
    using Key = std::pair<long long, std::string>;
    struct Entry {
        std::shared_ptr<const CachedTermBlocks> blocks;
        std::size_t bytes = 0;
        std::list<Key>::iterator lru;  ///< its place in lru_, most recent at the front
    };
    void erase(std::map<Key, Entry>::iterator it);

    std::size_t max_bytes_, bytes_ = 0;
    std::map<Key, Entry> map_;
    std::list<Key> lru_;
};

}  // namespace notesd::detail
