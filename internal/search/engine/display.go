package engine

// Display is what every surface shows of the chunk (search results, MCP
// passages, the assistant's passages and quotes), and how many bytes at its
// start repeat the chunk before it: its Markdown, or its plain text for a
// chunk indexed before chunks kept their Markdown, until the domain is
// indexed again. Ranking reads Text, never this.
func (c Chunk) Display() (text string, overlap int) {
	if c.Markdown == "" {
		return c.Text, c.Overlap
	}
	return c.Markdown, c.MarkdownOverlap
}
