package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/docsmith/docsmith/internal/analytics"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/tenant"
)

// filterView is the range and filters of an assistant page, as the form
// shows them.
type filterView struct {
	From, To, Status, Feedback, Source string
}

func readFilter(r *http.Request) (filterView, analytics.Range, error) {
	q := r.URL.Query()
	f := filterView{From: q.Get("from"), To: q.Get("to"), Status: q.Get("status"), Feedback: q.Get("feedback"), Source: q.Get("source")}
	rng, err := analytics.ParseRange(f.From, f.To)
	return f, rng, err
}

// feedback returns the ratings the filters keep: of the feedback filter's
// rating, on answers of the status filter's, from the source filter's.
// The feedback filter "none" (conversations nobody rated) keeps none.
func (h *Handler) feedback(ctx context.Context, d tenant.Domain, f filterView, rng analytics.Range) ([]analytics.FeedbackItem, error) {
	if f.Feedback == analytics.FeedbackNone {
		return nil, nil
	}
	return h.Analytics.Feedback(ctx, d.ID, analytics.FeedbackFilter{Range: rng, Rating: f.Feedback, Status: f.Status, Source: f.Source})
}

// exportURL is the CSV export of kind (conversations or feedback) with
// the range and filters of f: built whole here, as a template that puts a
// query string after "?" escapes its "=" and "&" a second time.
func exportURL(d tenant.Domain, kind string, f filterView) string {
	q := url.Values{"kind": {kind}}
	for k, v := range map[string]string{"from": f.From, "to": f.To, "status": f.Status, "feedback": f.Feedback, "source": f.Source} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return "/ui/domains/" + url.PathEscape(d.ID) + "/export.csv?" + q.Encode()
}

// seqCell is an answer's turn number in a CSV row; page feedback has none.
func seqCell(it analytics.FeedbackItem) string {
	if it.ThreadID == "" {
		return ""
	}
	return strconv.Itoa(it.Seq)
}

type conversationsView struct {
	Domain        tenant.Domain
	Filter        filterView
	Conversations []analytics.Conversation
	Next          string
	// ExportConversations and ExportFeedback are the CSV exports of the
	// page's range and filters.
	ExportConversations, ExportFeedback string
}

func (h *Handler) conversationsPage(w http.ResponseWriter, r *http.Request, v *viewer) error {
	d, err := h.domain(r.Context(), v, r.PathValue("domain"))
	if err != nil {
		return err
	}
	f, rng, err := readFilter(r)
	if err != nil {
		return err
	}
	after, err := analytics.DecodeCursor(r.URL.Query().Get("after"))
	if err != nil {
		return err
	}
	page, err := h.Analytics.Conversations(r.Context(), d.ID, analytics.ConversationFilter{Range: rng, Status: f.Status, Feedback: f.Feedback, Limit: 50, After: after})
	if err != nil {
		return err
	}
	view := conversationsView{Domain: d, Filter: f, Conversations: page.Conversations}
	if page.Next != nil {
		view.Next = nextQuery(r.URL.Query(), *page.Next)
	}
	view.ExportConversations, view.ExportFeedback = exportURL(d, "conversations", f), exportURL(d, "feedback", f)
	return h.render(w, r, v, http.StatusOK, "conversations", "Conversations · "+d.ID, "conversations:"+d.ID, view)
}

// maxFeedbackRows is how many ratings the feedback page shows; the CSV
// export has them all.
const maxFeedbackRows = 200

type feedbackView struct {
	Domain tenant.Domain
	Filter filterView
	Items  []analytics.FeedbackItem
	More   bool
	Export string
}

// feedbackPage lists the ratings of a range, readers' of answers and
// agents' of pages (over MCP), newest first.
func (h *Handler) feedbackPage(w http.ResponseWriter, r *http.Request, v *viewer) error {
	ctx := r.Context()
	d, err := h.domain(ctx, v, r.PathValue("domain"))
	if err != nil {
		return err
	}
	f, rng, err := readFilter(r)
	if err != nil {
		return err
	}
	items, err := h.feedback(ctx, d, f, rng)
	if err != nil {
		return err
	}
	view := feedbackView{Domain: d, Filter: f, Items: items, Export: exportURL(d, "feedback", f)}
	if len(items) > maxFeedbackRows {
		view.Items, view.More = items[:maxFeedbackRows], true
	}
	return h.render(w, r, v, http.StatusOK, "feedback", "Feedback · "+d.ID, "feedback:"+d.ID, view)
}

type transcriptView struct {
	Domain     tenant.Domain
	Transcript analytics.Transcript
}

func (h *Handler) transcriptPage(w http.ResponseWriter, r *http.Request, v *viewer) error {
	d, err := h.domain(r.Context(), v, r.PathValue("domain"))
	if err != nil {
		return err
	}
	tr, err := h.Analytics.Transcript(r.Context(), d.ID, r.PathValue("threadId"))
	if err != nil {
		return err
	}
	return h.render(w, r, v, http.StatusOK, "transcript", "Conversation · "+d.ID, "conversations:"+d.ID, transcriptView{Domain: d, Transcript: tr})
}

type insightsView struct {
	Domain   tenant.Domain
	Filter   filterView
	Insights analytics.Insights
	MaxDay   int
	Gaps     []analytics.Gap
}

func (h *Handler) insightsPage(w http.ResponseWriter, r *http.Request, v *viewer) error {
	d, err := h.domain(r.Context(), v, r.PathValue("domain"))
	if err != nil {
		return err
	}
	f, rng, err := readFilter(r)
	if err != nil {
		return err
	}
	in, err := h.Analytics.Insights(r.Context(), d.ID, rng)
	if err != nil {
		return err
	}
	gaps, err := h.Analytics.Gaps(r.Context(), d.ID, rng)
	if err != nil {
		return err
	}
	if len(gaps) > 5 {
		gaps = gaps[:5]
	}
	view := insightsView{Domain: d, Filter: f, Insights: in, Gaps: gaps}
	for _, day := range in.PerDay {
		view.MaxDay = max(view.MaxDay, day.Questions)
	}
	return h.render(w, r, v, http.StatusOK, "insights", "Insights · "+d.ID, "insights:"+d.ID, view)
}

// gapJobView is a job started from a gap, with its state now.
type gapJobView struct {
	analytics.GapJob
	Status string
	PRLink string
	Found  bool
}

type gapView struct {
	analytics.Gap
	JobLinks []gapJobView
	NewJob   string // the URL of the drafted new-job form
}

type gapsView struct {
	Domain tenant.Domain
	Filter filterView
	Gaps   []gapView
}

func (h *Handler) gapsPage(w http.ResponseWriter, r *http.Request, v *viewer) error {
	ctx := r.Context()
	d, err := h.domain(ctx, v, r.PathValue("domain"))
	if err != nil {
		return err
	}
	f, rng, err := readFilter(r)
	if err != nil {
		return err
	}
	gaps, err := h.Analytics.Gaps(ctx, d.ID, rng)
	if err != nil {
		return err
	}
	view := gapsView{Domain: d, Filter: f}
	for _, g := range gaps {
		gv := gapView{Gap: g, NewJob: newJobFromGap(d, g.Key, f)}
		for _, l := range g.Jobs {
			jv := gapJobView{GapJob: l}
			job, err := h.Jobs.Get(ctx, l.ProjectID, l.JobID)
			switch {
			case err == nil:
				jv.Status, jv.PRLink, jv.Found = string(job.Status), job.PRLink, true
			case !apperr.Is(err, apperr.NotFound):
				return err
			}
			gv.JobLinks = append(gv.JobLinks, jv)
		}
		view.Gaps = append(view.Gaps, gv)
	}
	return h.render(w, r, v, http.StatusOK, "gaps", "Content gaps · "+d.ID, "gaps:"+d.ID, view)
}

// newJobFromGap is the URL of the new-job form drafted from the gap key
// of d, found over the page's range: the form finds the gap again over the
// same range, where it has the same key.
func newJobFromGap(d tenant.Domain, key string, f filterView) string {
	q := url.Values{"domain": {d.ID}, "gap": {key}}
	if f.From != "" {
		q.Set("from", f.From)
	}
	if f.To != "" {
		q.Set("to", f.To)
	}
	return "/ui/projects/" + url.PathEscape(d.ProjectID) + "/jobs?" + q.Encode() + "#new-job"
}

// exportCSV writes the conversations (kind=conversations, one row per turn)
// or the feedback (kind=feedback) of a range as CSV.
func (h *Handler) exportCSV(w http.ResponseWriter, r *http.Request, v *viewer) error {
	ctx := r.Context()
	d, err := h.domain(ctx, v, r.PathValue("domain"))
	if err != nil {
		return err
	}
	f, rng, err := readFilter(r)
	if err != nil {
		return err
	}
	kind := r.URL.Query().Get("kind")
	var rows [][]string
	switch kind {
	case "feedback":
		items, err := h.feedback(ctx, d, f, rng)
		if err != nil {
			return err
		}
		rows = append(rows, []string{"source", "thread_id", "seq", "asked_at", "rated_at", "rating", "status", "question", "answer", "comment", "pages"})
		for _, it := range items {
			rows = append(rows, []string{it.Source, it.ThreadID, seqCell(it), csvTime(it.AskedAt), csvTime(it.RatedAt), it.Rating, it.Status, it.Question, it.Answer, it.Comment, strings.Join(it.Pages, " ")})
		}
	case "conversations", "":
		kind = "conversations"
		turns, err := h.Analytics.ConversationTurns(ctx, d.ID, analytics.ConversationFilter{Range: rng, Status: f.Status, Feedback: f.Feedback})
		if err != nil {
			return err
		}
		rows = append(rows, []string{"thread_id", "seq", "asked_at", "status", "rating", "question", "answer", "comment", "pages"})
		for _, t := range turns {
			var pages []string
			for _, s := range t.Sources {
				pages = append(pages, s.Path)
			}
			rows = append(rows, []string{t.ThreadID, strconv.Itoa(t.Seq), csvTime(t.CreatedAt), t.Status, t.Rating, t.Question, t.Answer, t.Comment, strings.Join(pages, " ")})
		}
	default:
		return apperr.New(apperr.Invalid, "kind %q must be conversations or feedback", kind)
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+d.ID+"-"+kind+`.csv"`)
	if err := analytics.WriteCSV(w, rows); err != nil {
		// The status is sent: the client went away mid-file.
		h.Log.InfoContext(ctx, "csv export cut short", "domain", d.ID, "err", err)
	}
	return nil
}

func csvTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
