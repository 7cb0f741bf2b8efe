#include "store/term_block_cache.hpp"

namespace notesd::detail {
namespace {

// What a copy costs beyond its blocks' data: the map node, its key, the list node, the vector.
constexpr std::size_t kEntryOverhead = 160;
constexpr std::size_t kBlockOverhead = sizeof(CachedBlock);

}  // namespace

std::shared_ptr<const CachedTermBlocks> TermBlockCache::find(long long segment_id,
                                                             const std::string& term) {
    auto it = map_.find(Key(segment_id, term));
    if (it == map_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second.lru);
    return it->second.blocks;
}

std::shared_ptr<const CachedTermBlocks> TermBlockCache::put(long long segment_id,
                                                            const std::string& term,
                                                            CachedTermBlocks blocks) {
    std::size_t size = kEntryOverhead + term.size();
    for (const CachedBlock& b : blocks) size += kBlockOverhead + b.data.size();
    auto kept = std::make_shared<const CachedTermBlocks>(std::move(blocks));
    Key key(segment_id, term);
    if (auto it = map_.find(key); it != map_.end()) erase(it);
    if (size > max_bytes_) return kept;
    while (bytes_ + size > max_bytes_ && !lru_.empty()) erase(map_.find(lru_.back()));
    lru_.push_front(key);
    map_.emplace(std::move(key), Entry{kept, size, lru_.begin()});
    bytes_ += size;
    return kept;
}

void TermBlockCache::forget_segment(long long segment_id) {
    auto it = map_.lower_bound(Key(segment_id, std::string()));
    while (it != map_.end() && it->first.first == segment_id) erase(it++);
}

void TermBlockCache::erase(std::map<Key, Entry>::iterator it) {
    bytes_ -= it->second.bytes;
    lru_.erase(it->second.lru);
    map_.erase(it);
}

}  // namespace notesd::detail
