package openai_test

import (
	"testing"

	"github.com/docsmith/docsmith/internal/llm"
	"github.com/docsmith/docsmith/internal/llm/llmtest"
	"github.com/docsmith/docsmith/internal/llm/openai"
)

// recordedAnswer is what llmtest's server streams for an answer of n deltas
// of four characters, with usage: the answer make bench-compare loads.
func recordedAnswer(tb testing.TB, n int) []byte {
	tb.Helper()
	deltas := make([]string, n)
	for i := range deltas {
		deltas[i] = "Per "
	}
	return llmtest.RecordOpenAI(tb, llmtest.Text(deltas...).WithUsage(1000, n))
}

// BenchmarkChat streams one answer of 200 deltas through the adapter, from
// a recorded stream: the request, the decoding of every chunk, the
// callbacks.
func BenchmarkChat(b *testing.B) {
	benchmarkChat(b, 200)
}

// BenchmarkChatRequest streams an answer of one delta: mostly what a
// request costs, its building and sending by the SDK.
func BenchmarkChatRequest(b *testing.B) {
	benchmarkChat(b, 1)
}

func benchmarkChat(b *testing.B, deltas int) {
	body := recordedAnswer(b, deltas)
	m, err := openai.New(openai.Options{
		Model: "bench", BaseURL: "http://model.test/v1", APIKey: "k",
		HTTPClient: llmtest.ReplayClient(body),
	})
	if err != nil {
		b.Fatal(err)
	}
	req := llm.Request{System: "You answer from the docs.", Messages: []llm.Message{{Role: llm.RoleUser, Content: "How do I run a collection?"}}, MaxTokens: 1500}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		resp, err := m.Chat(b.Context(), req, func(string) { n++ })
		if err != nil {
			b.Fatal(err)
		}
		if n != deltas || resp.Usage.OutputTokens != deltas {
			b.Fatalf("got %d deltas, usage %+v", n, resp.Usage)
		}
	}
}
