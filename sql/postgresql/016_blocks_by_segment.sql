-- notesd schema 016: a segment's blocks are found through (segment_id, term, first_ord) only
-- (issue 19); see sql/sqlite/016_blocks_by_segment.sql for why. The primary key becomes that
-- index; the old key by (user_id, term, ...) goes.
ALTER TABLE segment_blocks DROP CONSTRAINT segment_blocks_pkey;
DROP INDEX segment_blocks_by_segment;
ALTER TABLE segment_blocks ADD PRIMARY KEY (segment_id, term, first_ord);
