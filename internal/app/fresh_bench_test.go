package app_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkPushToServed measures, on a real Gitea with the sample docs,
// the time from a push to a page (git push returned) to search, MCP
// get_page and llms-full.txt all serving the new text: through Gitea's
// signed push webhook (no poll), and through the poll alone
// (index_poll_interval 1s, no webhook). Each op is one push; the push
// itself is not timed. ms-p50 and ms-max are the spread of the ops; for
// the webhook, delivery-ms-p50 counts from the delivery's arrival, leaving
// out the wait in Gitea's own webhook queue.
//
//	make bench-freshness
func BenchmarkPushToServed(b *testing.B) {
	for _, via := range []string{"webhook", "poll"} {
		b.Run(via, func(b *testing.B) {
			f := newFreshSite(b, "")
			poll := "0"
			if via == "poll" {
				poll = "1s"
			}
			f.start(poll)
			if code, body := f.call(http.MethodPost, "/v2/domains/"+freshDomain+"/index", f.admin, ""); code != http.StatusOK {
				b.Fatalf("first index: %d %s", code, body)
			}
			var rec *deliveryRecorder
			if via == "webhook" {
				rec = newDeliveryRecorder(b, f.base)
				hook := map[string]any{
					"type": "gitea", "active": true, "events": []string{"push"}, "branch_filter": "main",
					"config": map[string]string{"url": rec.URL + "/v2/hooks/docs", "content_type": "json", "secret": f.secret},
				}
				f.srv.API(b, http.MethodPost, "/repos/"+f.srv.User+"/docs/hooks", mustJSONBytes(b, hook), http.StatusCreated, nil)
			}
			work, git := f.gitWork()
			page := filepath.Join(work, "guides", "first-site.mdx")
			var took, fromDelivery []time.Duration
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				phrase := fmt.Sprintf("Benchmark paragraph %s number %d of this run", via, i)
				text, err := os.ReadFile(page)
				if err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(page, append(text, []byte("\n"+phrase+"\n")...), 0o644); err != nil {
					b.Fatal(err)
				}
				git("commit", "--quiet", "-am", phrase)
				git("push", "--quiet", "origin", "main")
				pushed := time.Now()
				b.StartTimer()
				took = append(took, f.waitServed(phrase, firstSitePage, false, time.Minute))
				if rec != nil {
					b.StopTimer()
					d := rec.holding(b, phrase)
					fromDelivery = append(fromDelivery, pushed.Add(took[len(took)-1]).Sub(d.arrived))
					b.StartTimer()
				}
			}
			b.StopTimer()
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Milliseconds()), "ms-p50")
			b.ReportMetric(float64(took[len(took)-1].Milliseconds()), "ms-max")
			if len(fromDelivery) > 0 {
				slices.Sort(fromDelivery)
				b.ReportMetric(float64(fromDelivery[len(fromDelivery)/2].Milliseconds()), "delivery-ms-p50")
			}
		})
	}
}
