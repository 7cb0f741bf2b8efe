-- notesd schema 007 for SQLite: compact search snapshot rows.
--
-- A search writes one snapshot row into FILE-snapshots (schema 005). The store now writes them
-- to snap.search_snapshots (created by every connection, see dialect.cpp): appended in creation
-- order, the ids as 16-byte blobs (a row of 100 ids is 1.6 KB instead of 3.7 KB), found through
-- an index on the id's first 8 bytes as an integer (a quarter of the text id's index), and
-- purged oldest first without an index on the expiry time: each commit writes two B-tree pages
-- instead of three. The rows of the old table are dropped: snapshots open during the upgrade
-- are lost, clients get the documented 404 and search again.

DROP TABLE IF EXISTS snap.snapshots;
