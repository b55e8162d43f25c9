-- Searches run on an index each process builds in memory from
-- search_chunks (search.Memory), so the tsvector of each chunk, its GIN
-- index, each chunk's length and rank_boost (derived from boost when the
-- index is built) and the term statistics kept beside them are no longer
-- read: they only made every index write slower.
DROP INDEX search_chunks_tsv;
ALTER TABLE search_chunks DROP COLUMN tsv, DROP COLUMN tokens, DROP COLUMN rank_boost;
DROP TABLE search_terms;
DROP TABLE search_domain_stats;
