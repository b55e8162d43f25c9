-- A reader's rating of an answer, kept on the answer's turn, as in the
-- SQLite store: up or down, an optional comment, and when it was given
-- (NULL until rated). A second rating of the same answer replaces the first.
-- The indexes find an answer by its message id, and a period's rated answers.
ALTER TABLE thread_turns ADD COLUMN rating text NOT NULL DEFAULT '';
ALTER TABLE thread_turns ADD COLUMN rating_comment text NOT NULL DEFAULT '';
ALTER TABLE thread_turns ADD COLUMN rated_at timestamptz;
CREATE INDEX thread_turns_rated ON thread_turns(rated_at) WHERE rated_at IS NOT NULL;
CREATE INDEX thread_turns_message ON thread_turns(thread_id, message_id);

-- Each domain's page catalog (search.SiteCatalog): the indexed pages in
-- navigation order with titles, links and descriptions, rewritten whole by
-- each index build, for llms.txt.
CREATE TABLE site_catalogs (
    domain     text COLLATE "C" PRIMARY KEY,
    catalog    jsonb NOT NULL,
    updated_at timestamptz NOT NULL
);
