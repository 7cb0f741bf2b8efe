// Word positions carried by each postings row (postings.pos), so the ranker decides phrase and
// proximity clauses from the rows that find the candidates, without reading a note's stored
// terms. A position is the 0-based index of the term among its field's stored terms (the
// space-joined FieldIndex::terms), exactly as Ranker::score counts them.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace notesd {

/// Positions kept per postings row (title and body together). A term occurring more often in
/// one note stores none: its phrase and proximity counts are then read from the stored terms.
constexpr std::size_t kMaxStoredPositions = 64;

/// Text form: the title's positions, ';', the body's, each ascending and written as decimal
/// gaps separated by ',' (the first one from 0). E.g. title {2}, body {0, 5, 9}: "2;0,5,4".
/// Empty (unknown) over kMaxStoredPositions.
std::string encode_positions(const std::vector<int>& title, const std::vector<int>& body);

/// Decodes `text` into the two ascending lists; false when it is empty (unknown), malformed,
/// or does not hold exactly title_tf and body_tf positions.
bool decode_positions(std::string_view text, int title_tf, int body_tf, std::vector<int>& title,
                      std::vector<int>& body);

}  // namespace notesd
