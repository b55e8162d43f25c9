package assistant

import "github.com/prometheus/client_golang/prometheus"

// groundingMetrics count, by domain, how well model answers are backed by
// the passages they cite.
type groundingMetrics struct {
	// dropped counts citation numbers that named a passage the model was
	// not given, removed from the answer.
	dropped *prometheus.CounterVec
	// sentences counts judged sentences and code blocks by result:
	// supported, unsupported (sent, marked) or left_out (strict mode).
	sentences *prometheus.CounterVec
}

func newGroundingMetrics(reg prometheus.Registerer) groundingMetrics {
	m := groundingMetrics{
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "docsmith_assistant_citations_dropped_total",
			Help: "Citation markers of model answers that named a passage the model was not given, removed from the answer.",
		}, []string{"domain"}),
		sentences: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "docsmith_assistant_grounded_sentences_total",
			Help: "Sentences and code blocks of model answers checked against the passages they cite, by result: supported, unsupported (sent and marked) or left_out (strict grounding).",
		}, []string{"domain", "result"}),
	}
	if reg != nil {
		reg.MustRegister(m.dropped, m.sentences)
	}
	return m
}

// record counts one answer's grounding.
func (m groundingMetrics) record(domain string, dropped int, st groundingStats) {
	if dropped > 0 {
		m.dropped.WithLabelValues(domain).Add(float64(dropped))
	}
	if st.claims == 0 {
		return
	}
	m.sentences.WithLabelValues(domain, "supported").Add(float64(st.supported))
	m.sentences.WithLabelValues(domain, "unsupported").Add(float64(st.claims - st.supported - st.left))
	m.sentences.WithLabelValues(domain, "left_out").Add(float64(st.left))
}
