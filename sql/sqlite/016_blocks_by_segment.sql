-- notesd schema 016: a segment's blocks are found through (segment_id, term, first_ord) only;
-- the index by (user_id, term, segment_id, first_ord) goes (issue 19).
--
-- That index put every block of a new segment in another of its leaf pages, wherever the term
-- sorts: a background fold of 9 notes (about 1,500 distinct terms, a block each) rewrote about
-- half of the index (1,000 of its 2,000 pages at 100,000 notes) and held the write lock 45-90 ms
-- (doc/benchmarks.md). Ordered by segment, a new segment's blocks are appended: 1,500 blocks
-- inserted in 2.1 ms and 170 KB of WAL against 14 ms and 4.3 MB. A term's blocks are then one
-- seek per segment of the user (segment_block_reader.cpp lists the segments in the same
-- statement), about 1 us more per term and segment than one range of the old index.
DROP INDEX IF EXISTS segment_blocks_by_term;
DROP INDEX IF EXISTS segment_blocks_by_segment;
CREATE UNIQUE INDEX segment_blocks_by_segment ON segment_blocks (segment_id, term, first_ord);
