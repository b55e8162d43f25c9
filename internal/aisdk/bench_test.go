package aisdk

import (
	"net/http"
	"strings"
	"testing"
)

// discardWriter is a ResponseWriter that keeps nothing and can flush, so a
// benchmark measures the encoders alone.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(int)             {}
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) Flush()                      {}

// BenchmarkAnswer encodes one answer as the extractive assistant writes it:
// the start, three sources, the quoted text in four pieces, the finish.
func BenchmarkAnswer(b *testing.B) {
	srcs := []Source{
		{ID: "src_1", URL: "https://docs.example.com/guides/cli#run-a-collection", Title: "CLI › Run a collection"},
		{ID: "src_2", URL: "https://docs.example.com/self-host/install", Title: "Self-hosting › Install"},
		{ID: "src_3", URL: "https://docs.example.com/guides/environments", Title: "Environments"},
	}
	quote := "**CLI › Run a collection** [1]\n\n> " + strings.Repeat("Run `hopp test` with the collection's JSON file and an \"environment\" file.\n> ", 10) + "\n"
	pieces := []string{"These passages of the documentation match your question best:\n\n", quote, quote, quote}
	for _, p := range protocols() {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s := p.new(&discardWriter{h: http.Header{}})
				if err := do(
					func() error { return s.Start(messageID, threadID) },
					func() error { return s.Sources(srcs) },
					func() error { return s.Text("txt_0", pieces...) },
					func() error { return s.Finish(threadID, true, nil) },
				); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
