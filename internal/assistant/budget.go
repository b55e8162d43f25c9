package assistant

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/docsmith/docsmith/internal/tenant"
)

// What an answer past its domain's budget says before the passages it
// quotes.
const (
	budgetText        = "This site's assistant has reached its daily limit; here are the most relevant passages."
	budgetUnknownText = "This site's assistant cannot check its daily limit right now; here are the most relevant passages."
)

// Budget bounds a domain's model spend per UTC day; 0 is no bound.
type Budget struct {
	AnswersPerDay int
	TokensPerDay  int
}

// Spend is what a domain's model answers used.
type Spend struct {
	Answers      int // turns that went to the model
	InputTokens  int
	OutputTokens int
}

// SpendStore sums a domain's model answers from the stored turns, which are
// the durable record of the spend, shared by every replica that uses the
// store.
type SpendStore interface {
	// DomainSpend sums the turns of the domain's threads created at or
	// after since whose model is not one of free (the models that cost
	// nothing) and that reached the model (not "not covered" or "not
	// indexed").
	DomainSpend(ctx context.Context, domain string, since time.Time, free []string) (Spend, error)
}

// freeModels are the model names whose turns cost nothing.
func freeModels() []string { return []string{"", ModelExtractive, modelBuiltin} }

// DaySpend is a domain's spend since the start of the UTC day, against its
// budget.
type DaySpend struct {
	Spend
	Budget Budget
	Since  time.Time
}

// Exhausted says whether the day's spend reached either bound.
func (d DaySpend) Exhausted() bool {
	b := d.Budget
	return (b.AnswersPerDay > 0 && d.Answers >= b.AnswersPerDay) ||
		(b.TokensPerDay > 0 && d.InputTokens+d.OutputTokens >= b.TokensPerDay)
}

// Tokens is the day's input and output tokens together.
func (d DaySpend) Tokens() int { return d.InputTokens + d.OutputTokens }

// budgetOf is the domain's budget: its own settings, or the server's
// defaults where it has none.
func (s *Service) budgetOf(d tenant.Domain) Budget {
	b := s.budget
	if v := d.Settings.AnswersPerDay; v != nil {
		b.AnswersPerDay = *v
	}
	if v := d.Settings.TokensPerDay; v != nil {
		b.TokensPerDay = *v
	}
	return b
}

// DaySpend returns the domain's model spend of the current UTC day and its
// budget. Without a SpendStore the spend reads as zero.
func (s *Service) DaySpend(ctx context.Context, d tenant.Domain) (DaySpend, error) {
	since := s.now().UTC().Truncate(24 * time.Hour)
	out := DaySpend{Budget: s.budgetOf(d), Since: since}
	if s.spend == nil {
		return out, nil
	}
	spend, err := s.spend.DomainSpend(ctx, d.ID, since, freeModels())
	if err != nil {
		return DaySpend{}, fmt.Errorf("read the spend of domain %s: %w", d.ID, err)
	}
	out.Spend = spend
	return out, nil
}

// overBudget says why the domain's model must not answer now: budgetText
// when its day's budget is spent, budgetUnknownText when the spend could
// not be read (a team's bill is not risked on a failed read), "" when the
// model may answer.
func (a *Answer) overBudget(ctx context.Context) string {
	b := a.svc.budgetOf(a.domain)
	if b.AnswersPerDay == 0 && b.TokensPerDay == 0 {
		return ""
	}
	spend, err := a.svc.DaySpend(ctx, a.domain)
	switch {
	case err != nil:
		a.svc.log.ErrorContext(ctx, "read the assistant's daily spend", "domain", a.domain.ID, "err", err)
		return budgetUnknownText
	case spend.Exhausted():
		return budgetText
	}
	return ""
}

// spendMetrics count the model's spend by domain.
type spendMetrics struct {
	tokens    *prometheus.CounterVec
	exhausted *prometheus.CounterVec
}

func newSpendMetrics(reg prometheus.Registerer) spendMetrics {
	m := spendMetrics{
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "docsmith_assistant_model_tokens_total", Help: "Model tokens the assistant's answers used, by domain and kind (input or output).",
		}, []string{"domain", "kind"}),
		exhausted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "docsmith_assistant_budget_exhausted_answers_total", Help: "Answers given from search alone because the domain's daily model budget was spent (or could not be read).",
		}, []string{"domain"}),
	}
	if reg != nil {
		reg.MustRegister(m.tokens, m.exhausted)
	}
	return m
}
