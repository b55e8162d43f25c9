-- A reader's rating of an answer, kept on the answer's turn: up or down,
-- an optional comment, and when it was given (NULL until rated). A second
-- rating of the same answer replaces the first. The indexes find an answer by
-- its message id, and a period's rated answers.
ALTER TABLE thread_turns ADD COLUMN rating TEXT NOT NULL DEFAULT '';
ALTER TABLE thread_turns ADD COLUMN rating_comment TEXT NOT NULL DEFAULT '';
ALTER TABLE thread_turns ADD COLUMN rated_at INTEGER;
CREATE INDEX thread_turns_rated ON thread_turns(rated_at) WHERE rated_at IS NOT NULL;
CREATE INDEX thread_turns_message ON thread_turns(thread_id, message_id);

-- Each domain's page catalog (search.SiteCatalog as JSON): the indexed
-- pages in navigation order with titles, links and descriptions, rewritten
-- whole by each index build, for llms.txt.
CREATE TABLE site_catalogs (
    domain     TEXT PRIMARY KEY,
    catalog    TEXT NOT NULL,
    updated_at INTEGER NOT NULL
);
