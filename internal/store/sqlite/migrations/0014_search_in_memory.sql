-- Searches run on an index each process builds in memory from
-- search_chunks (search.Memory), so the full-text table and its row count
-- are no longer read: they only made every index write slower. Dropping
-- the contentless table frees its pages for the rest of the file.
DROP TABLE search_fts;
DROP TABLE search_stats;
