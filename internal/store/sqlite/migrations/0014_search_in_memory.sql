-- Searches run on an index each process builds in memory from
-- search_chunks (search.Memory), so the full-text table, its row count and
-- each chunk's rank_boost (derived from boost when the index is built) are
-- no longer read: they only made every index write slower. Dropping the
-- contentless table frees its pages for the rest of the file.
DROP TABLE search_fts;
DROP TABLE search_stats;
ALTER TABLE search_chunks DROP COLUMN rank_boost;
