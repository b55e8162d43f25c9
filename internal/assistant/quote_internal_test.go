package assistant

import (
	"strings"
	"testing"
)

func TestPassageQuote(t *testing.T) {
	t.Parallel()
	long := "The relay " + strings.Repeat("keeps every request it forwards ", 10) + "in memory."
	for _, tc := range []struct {
		name, text, question, want string
	}{
		{"the sentence with most question words", testPassageText, "How do I change the relay port?",
			"Set RELAY_PORT to change it, or pass --port 9090 to relay start."},
		{"another question, another sentence", testPassageText, "how long are timeouts",
			"Timeouts are 1.5 seconds."},
		{"no word in common: the first sentence", testPassageText, "kubernetes",
			"The relay listens on port 8080 by default."},
		{"Markdown made plain", "See **the [relay guide](/relay)** and _its_ `start` command [3].", "relay guide",
			"See the relay guide and its start command."},
		{"list items are blocks", "- Install the relay\n- Start the relay with relay start", "how to start",
			"Start the relay with relay start"},
		{"code and tables passed over", "```sh\nrelay start\n```\n\n| Flag | Use |\n| --- | --- |\n| --port | the port |\n\nStart it with the start command.",
			"start port", "Start it with the start command."},
		{"only a table: a cell", "| Flag | Use |\n| --- | --- |\n| --port | the port to listen on |", "listen port",
			"the port to listen on"},
		{"cut at a word", long, "memory", long[:strings.LastIndex(long[:maxQuote], " ")]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := passageQuote(tc.text, quoteWords(tc.question))
			if got != tc.want {
				t.Errorf("quote = %q\nwant %q", got, tc.want)
			}
			if len(got) > maxQuote {
				t.Errorf("quote is %d bytes long", len(got))
			}
		})
	}
}
