package semantic_test

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/docsmith/docsmith/internal/semantic"
	"github.com/docsmith/docsmith/internal/semantic/semantictest"
)

func TestMetricsCountRequestsAndFallbacks(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	m := semantic.NewMetrics(reg)
	srv := semantictest.NewEmbeddingsServer(t, semantictest.EmbeddingsOptions{})
	e, err := semantic.NewOpenAIEmbedder(semantic.EmbedderOptions{BaseURL: srv.URL, Model: "m"}, semantic.Deps{Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(context.Background(), []string{"tern"}); err != nil {
		t.Fatal(err)
	}
	srv.SetFault(semantictest.Fault{Failure: semantictest.FailMalformed})
	_, err = e.Embed(context.Background(), []string{"tern"})
	m.Fallback(semantic.ProviderEmbeddings, semantic.Reason(err))

	got := gathered(t, reg)
	want := []string{
		`docsmith_search_provider_fallbacks_total{provider="embeddings",reason="malformed"} 1`,
		`docsmith_search_provider_request_seconds{provider="embeddings"} count 2`,
		`docsmith_search_provider_requests_total{provider="embeddings",result="malformed"} 1`,
		`docsmith_search_provider_requests_total{provider="embeddings",result="ok"} 1`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("metrics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var none *semantic.Metrics
	none.Fallback(semantic.ProviderRerank, semantic.ReasonTimeout) // a nil *Metrics counts nothing, without panicking
}

// gathered is every series of reg as one line: counters with their value,
// histograms with their count.
func gathered(t *testing.T, reg *prometheus.Registry) []string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+`="`+l.GetValue()+`"`)
			}
			line := f.GetName() + "{" + strings.Join(labels, ",") + "}"
			if h := m.GetHistogram(); h != nil {
				line += " count " + strconv.FormatUint(h.GetSampleCount(), 10)
			} else {
				line += " " + strconv.FormatUint(uint64(m.GetCounter().GetValue()), 10)
			}
			lines = append(lines, line)
		}
	}
	sort.Strings(lines)
	return lines
}
