-- Passage vectors for hybrid search, as in the SQLite store: one per
-- domain, model and content hash of the text embedded, float32
-- little-endian. No extension is needed: each process holds the domain's
-- vectors in memory and compares them there.
CREATE TABLE search_vectors (
    domain text NOT NULL,
    model  text NOT NULL,
    hash   text NOT NULL,
    vector bytea NOT NULL,
    PRIMARY KEY (domain, model, hash)
);
