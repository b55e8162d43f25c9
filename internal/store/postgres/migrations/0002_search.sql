-- The search index: one row per chunk of an indexed page, with a tsvector
-- over the chunk's analyzed text (see search.IndexFields), weighted per
-- field: A the page title, B the headings, C the keywords, D the body.
-- Ranking is ts_rank over those weights; the text shown comes from the row.
CREATE TABLE search_chunks (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    domain     text COLLATE "C" NOT NULL,
    chunk_id   text COLLATE "C" NOT NULL,
    page_path  text COLLATE "C" NOT NULL,
    seq        integer NOT NULL,
    rank_boost double precision NOT NULL DEFAULT 1, -- search.RankBoost(boost)
    version    text NOT NULL DEFAULT '',
    language   text NOT NULL DEFAULT '',
    groups     text[] NOT NULL DEFAULT '{}',
    page_hash  text NOT NULL,
    boost      double precision NOT NULL DEFAULT 0, -- search.Chunk.Boost, as given
    anchor     text NOT NULL DEFAULT '',
    overlap    integer NOT NULL DEFAULT 0,
    url        text NOT NULL DEFAULT '',
    page_title text NOT NULL DEFAULT '',
    heading    text NOT NULL DEFAULT '',
    breadcrumb text[] NOT NULL DEFAULT '{}',
    keywords   text NOT NULL DEFAULT '',
    text       text NOT NULL DEFAULT '',
    tsv        tsvector NOT NULL,
    UNIQUE (domain, chunk_id)
);
CREATE INDEX search_chunks_page ON search_chunks(domain, page_path, seq);
CREATE INDEX search_chunks_tsv ON search_chunks USING gin (tsv);
