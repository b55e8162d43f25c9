-- Each chunk keeps its Markdown beside the plain text ranking reads: what
-- search results, pages, MCP and llms-full.txt show. Chunks indexed before
-- have none ('') and are shown as their text until the domain is indexed
-- again. The shared snapshots were written without it: they go.
ALTER TABLE search_chunks ADD COLUMN markdown text NOT NULL DEFAULT '';
ALTER TABLE search_chunks ADD COLUMN markdown_overlap integer NOT NULL DEFAULT 0;
DELETE FROM search_snapshots;
