// The index entry of a pending note (store/pending_notes.hpp) as blobs: the note's distinct
// terms with their counts and positions, and the bare names of the terms a fold takes out of
// term_df. Both sorted bytewise; the same bytes on every backend.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "index/segment.hpp"

namespace notesd {

/// Terms sorted bytewise, each once.
std::string encode_pending_terms(const std::vector<SegmentTerm>& terms);
/// False when the data is malformed (out is then unspecified).
bool decode_pending_terms(std::string_view data, std::vector<SegmentTerm>& out);

/// Term names sorted bytewise, each once.
std::string encode_term_names(const std::vector<std::string>& names);
bool decode_term_names(std::string_view data, std::vector<std::string>& out);

}  // namespace notesd
