-- Passage vectors for hybrid search, when an embeddings provider is set:
-- one per domain, model and content hash of the text embedded (title,
-- headings, passage text), so a passage that does not change keeps its
-- vector across updates. The vector is float32 little-endian; no extension
-- is needed, the process holds the domain's vectors in memory and compares
-- them there.
CREATE TABLE search_vectors (
    domain TEXT NOT NULL,
    model  TEXT NOT NULL,
    hash   TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (domain, model, hash)
) WITHOUT ROWID;
