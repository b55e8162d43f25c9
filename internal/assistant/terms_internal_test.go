package assistant

import (
	"testing"

	"github.com/docsmith/docsmith/internal/search/engine"
)

// A question word's mask finds it exactly where the full analysis does,
// though it stems only the tokens that start like a question word: plurals,
// stems that change their last letter, doubled consonants, camel-case
// parts, accents, numbers and CJK.
func TestTermMaskAsFullAnalysis(t *testing.T) {
	t.Parallel()
	questions := []string{
		"How do I configure retries for failed uploads?",
		"Which policies apply to copied files?",
		"Does stopping the runner drop queued jobs?",
		"Set maxRetries in the webhookConfig",
		"café menu and naïve résumé parsing",
		"error 404 on port 8080",
		"配置 文件 在哪里",
	}
	texts := []string{
		"Configuring retries: the uploader retried each failed upload.",
		"Policy files are copied; each policy applies to the copies.",
		"Stopped runners stop running; the queue keeps queued jobs.",
		"`maxRetries` sets how often; WebhookConfig and webhook-config hold it.",
		"The CAFÉ menu; a naive resume parser; Résumés.",
		"A 404 error means the port (8080) is wrong.",
		"配置文件在项目的根目录。",
		"Nothing here matches at all.",
		"re-running the HTTPRetryPolicy: unconfigured, preconfigured, _configs_ and (retries).",
	}
	for _, q := range questions {
		ts := newTermSet(q)
		for _, text := range texts {
			var want uint64
			engine.Words(text, func(_, w string) {
				if k, ok := ts.ids[w]; ok {
					want |= 1 << k
				}
			})
			if got := ts.mask(text); got != want {
				t.Errorf("question %q, text %q: mask %b, want %b", q, text, got, want)
			}
		}
	}
}
