-- The search index: one row per chunk of an indexed page, and a full-text
-- table over the chunks' analyzed text (see search.IndexFields). The
-- full-text table is contentless: the text shown comes from search_chunks.

-- The columns ranking reads come first: SQLite reads a row from its start,
-- and the long text columns spill onto overflow pages.
CREATE TABLE search_chunks (
    id         INTEGER PRIMARY KEY,
    domain     TEXT NOT NULL,
    page_path  TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    rank_boost REAL NOT NULL DEFAULT 1,  -- search.RankBoost(boost), what ranking multiplies by
    version    TEXT NOT NULL DEFAULT '',
    language   TEXT NOT NULL DEFAULT '',
    groups     TEXT NOT NULL DEFAULT '[]',
    chunk_id   TEXT NOT NULL,
    page_hash  TEXT NOT NULL,
    boost      REAL NOT NULL DEFAULT 0,  -- search.Chunk.Boost, as given
    anchor     TEXT NOT NULL DEFAULT '',
    overlap    INTEGER NOT NULL DEFAULT 0,
    url        TEXT NOT NULL DEFAULT '',
    page_title TEXT NOT NULL DEFAULT '',
    heading    TEXT NOT NULL DEFAULT '',
    breadcrumb TEXT NOT NULL DEFAULT '[]',
    keywords   TEXT NOT NULL DEFAULT '',
    text       TEXT NOT NULL DEFAULT '',
    UNIQUE (domain, chunk_id)
);
CREATE INDEX search_chunks_page ON search_chunks(domain, page_path, seq);

-- porter: English stemming; unicode61 with remove_diacritics 2 folds case and
-- accents in every script. Columns in ranking order: bm25() weights them.
CREATE VIRTUAL TABLE search_fts USING fts5(
    title, headings, keywords, body,
    content = '',
    contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2'
);

-- The number of rows of search_fts, kept by each ReplacePages: score
-- normalization needs it on every search, and counting is linear.
CREATE TABLE search_stats (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    chunks INTEGER NOT NULL
);
INSERT INTO search_stats (id, chunks) VALUES (1, 0);
