-- Each chunk keeps its Markdown beside the plain text ranking reads: what
-- search results, pages, MCP and llms-full.txt show. Chunks indexed before
-- have none ('') and are shown as their text until the domain is indexed
-- again.
ALTER TABLE search_chunks ADD COLUMN markdown TEXT NOT NULL DEFAULT '';
ALTER TABLE search_chunks ADD COLUMN markdown_overlap INTEGER NOT NULL DEFAULT 0;
