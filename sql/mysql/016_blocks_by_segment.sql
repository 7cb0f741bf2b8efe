-- notesd schema 016: a segment's blocks are found through (segment_id, term, first_ord) only
-- (issue 19); see sql/sqlite/016_blocks_by_segment.sql for why. InnoDB keeps the rows in
-- primary key order, so the key becomes (segment_id, term, first_ord) and a new segment's rows
-- are appended. One statement (MariaDB's DDL commits at once), which can run again.
ALTER TABLE segment_blocks DROP KEY IF EXISTS segment_blocks_by_segment, DROP PRIMARY KEY,
    ADD PRIMARY KEY (segment_id, term, first_ord);
