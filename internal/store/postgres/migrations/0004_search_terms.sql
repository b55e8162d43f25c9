-- Term statistics of the search index, kept by ReplacePages in the
-- transaction that changes the chunks, so that a query reads each term's
-- document frequency with one index lookup instead of counting matches:
-- search_terms holds how many chunks of a domain contain each lexeme,
-- search_domain_stats each domain's chunk count and total length in
-- tokens, and search_chunks.tokens each chunk's length (bm25 normalizes a
-- term's frequency by the chunk's length against the average).
ALTER TABLE search_chunks ADD COLUMN tokens integer NOT NULL DEFAULT 0;

CREATE TABLE search_terms (
    domain text COLLATE "C" NOT NULL,
    lexeme text COLLATE "C" NOT NULL,
    chunks integer NOT NULL,
    PRIMARY KEY (domain, lexeme)
);

CREATE TABLE search_domain_stats (
    domain text COLLATE "C" PRIMARY KEY,
    chunks bigint NOT NULL,
    tokens bigint NOT NULL
);

-- Chunks indexed before this migration take their length from their
-- tsvector's positions, which leave out stop words, until their page is
-- next rewritten.
UPDATE search_chunks SET tokens = (SELECT COALESCE(sum(cardinality(u.positions)), 0) FROM unnest(tsv) AS u);

INSERT INTO search_terms (domain, lexeme, chunks)
SELECT c.domain, l.lexeme, count(*) FROM search_chunks c, unnest(tsvector_to_array(c.tsv)) AS l(lexeme)
GROUP BY c.domain, l.lexeme;

INSERT INTO search_domain_stats (domain, chunks, tokens)
SELECT domain, count(*), sum(tokens) FROM search_chunks GROUP BY domain;
