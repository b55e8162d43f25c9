package trafficcheck

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/google/uuid"

	"github.com/docsmith/docsmith/internal/analytics"
	"github.com/docsmith/docsmith/internal/answercheck"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/checkrun"
)

// Bounds of a harvest and of what a domain holds.
const (
	// HarvestWindow is how far back a harvest reads the domain's turns,
	// and HarvestTurns how many of the newest it reads at most.
	HarvestWindow = 30 * 24 * time.Hour
	HarvestTurns  = 5000
	// PerHarvest is how many checks of each origin one harvest finds at
	// most: the newest asked.
	PerHarvest = 20
	// KeepHarvested is how many checks of each origin a domain keeps that
	// the team neither pinned nor edited: the newest asked.
	KeepHarvested = 50
	// MaxActive bounds the checks a run asks; MaxListed the checks the
	// dashboard lists, dropped ones last.
	MaxActive = 200
	MaxListed = 500
	// maxCite is how many of an upvoted answer's pages its check names.
	maxCite = 5
)

// Bounds of what a team writes into a check.
const (
	MaxQuestionRunes = 500
	MaxCite          = 10
	MaxContains      = 10
	maxItemRunes     = 200
)

// Config sets up a Service.
type Config struct {
	Store Store
	Turns TurnReader
	Gaps  GapGrouper
	Now   func() time.Time
	Log   *slog.Logger
	// HarvestEvery is the least time between two harvests of a domain by
	// this process; 0 harvests on every listing and every run.
	HarvestEvery time.Duration
}

// Service harvests, lists and changes a domain's traffic checks.
type Service struct {
	cfg Config

	mu        sync.Mutex
	harvested map[string]time.Time // domain -> last harvest by this process
}

var _ checkrun.TrafficChecks = (*Service)(nil)

// New returns a Service.
func New(cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return time.Now().UTC() }
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Service{cfg: cfg, harvested: map[string]time.Time{}}
}

// Harvest finds the domain's newest upvoted questions and open gaps'
// questions (see Found) and keeps those it does not hold yet, then lets
// go of the oldest that nobody pinned or edited beyond KeepHarvested of
// each origin. Harvesting the same traffic twice changes nothing.
func (s *Service) Harvest(ctx context.Context, domain string) (int, error) {
	now := s.cfg.Now()
	turns, err := s.cfg.Turns.DomainTurns(ctx, domain, now.Add(-HarvestWindow), time.Time{}, HarvestTurns)
	if err != nil {
		return 0, fmt.Errorf("read the recent questions of %s: %w", domain, err)
	}
	found := Found(domain, turns, s.cfg.Gaps.GapsOf(turns), now)
	added, err := s.cfg.Store.HarvestTrafficChecks(ctx, domain, found, KeepHarvested)
	if err != nil {
		return 0, fmt.Errorf("keep the checks found in the traffic of %s: %w", domain, err)
	}
	if added > 0 {
		s.cfg.Log.InfoContext(ctx, "checks harvested from traffic", "domain", domain, "added", added)
	}
	return added, nil
}

// harvestDue harvests unless this process did less than HarvestEvery ago.
func (s *Service) harvestDue(ctx context.Context, domain string) error {
	now := s.cfg.Now()
	s.mu.Lock()
	last, ok := s.harvested[domain]
	due := !ok || s.cfg.HarvestEvery <= 0 || now.Sub(last) >= s.cfg.HarvestEvery
	if due {
		s.harvested[domain] = now
	}
	s.mu.Unlock()
	if !due {
		return nil
	}
	if _, err := s.Harvest(ctx, domain); err != nil {
		s.mu.Lock()
		delete(s.harvested, domain)
		s.mu.Unlock()
		return err
	}
	return nil
}

// List returns the domain's traffic checks as the dashboard shows them
// (see Store.TrafficChecks), harvesting first when due.
func (s *Service) List(ctx context.Context, domain string) ([]Check, error) {
	if err := s.harvestDue(ctx, domain); err != nil {
		return nil, err
	}
	cs, err := s.cfg.Store.TrafficChecks(ctx, domain, MaxListed)
	if err != nil {
		return nil, fmt.Errorf("list the traffic checks of %s: %w", domain, err)
	}
	return cs, nil
}

// ActiveChecks returns the checks a run of the domain asks: none dropped,
// pinned first, at most MaxActive, each with a name of its own. It
// harvests first when due.
func (s *Service) ActiveChecks(ctx context.Context, domain string) ([]answercheck.Check, error) {
	if err := s.harvestDue(ctx, domain); err != nil {
		return nil, err
	}
	cs, err := s.cfg.Store.TrafficChecks(ctx, domain, MaxActive)
	if err != nil {
		return nil, fmt.Errorf("list the traffic checks of %s: %w", domain, err)
	}
	out := make([]answercheck.Check, 0, len(cs))
	used := map[string]bool{}
	for _, c := range cs {
		if c.Dropped {
			continue
		}
		ac := c.AnswerCheck()
		ac.Name = uniqueName(ac.Name, used)
		out = append(out, ac)
	}
	return out, nil
}

// uniqueName returns name, or name with the first free "-2", "-3"… suffix.
func uniqueName(name string, used map[string]bool) string {
	n := name
	for i := 2; used[n]; i++ {
		n = name + "-" + strconv.Itoa(i)
	}
	used[n] = true
	return n
}

// Get returns one check of the domain.
func (s *Service) Get(ctx context.Context, domain, id string) (Check, error) {
	return s.cfg.Store.GetTrafficCheck(ctx, domain, id)
}

// Pin pins or unpins a check.
func (s *Service) Pin(ctx context.Context, domain, id string, pinned bool) (Check, error) {
	return s.change(ctx, domain, id, func(c *Check) error {
		c.Pinned = pinned
		return nil
	})
}

// Drop drops a check, or takes it back.
func (s *Service) Drop(ctx context.Context, domain, id string, dropped bool) (Check, error) {
	return s.change(ctx, domain, id, func(c *Check) error {
		c.Dropped = dropped
		return nil
	})
}

// Edit is what a team may write into a check.
type Edit struct {
	Question   string
	Cite       []string
	Contains   []string
	NotCovered bool
}

// CheckEdit normalizes e (trimmed, empty items left out, pages as checks
// compare them) and refuses what a check cannot hold, saying what to fix.
func CheckEdit(e Edit) (Edit, error) {
	out := Edit{Question: strings.Join(strings.Fields(e.Question), " "), NotCovered: e.NotCovered}
	switch n := len([]rune(out.Question)); {
	case n == 0:
		return Edit{}, apperr.New(apperr.Invalid, "the question is empty: write the question the answer is checked on")
	case n > MaxQuestionRunes:
		return Edit{}, apperr.New(apperr.Invalid, "the question is %d characters long; shorten it to at most %d", n, MaxQuestionRunes)
	}
	var err error
	if out.Cite, err = cleanItems("cite", e.Cite, MaxCite, answercheck.PagePath); err != nil {
		return Edit{}, err
	}
	if out.Contains, err = cleanItems("contains", e.Contains, MaxContains, strings.TrimSpace); err != nil {
		return Edit{}, err
	}
	if out.NotCovered && (len(out.Cite) > 0 || len(out.Contains) > 0) {
		return Edit{}, apperr.New(apperr.Invalid, "a check that expects “not covered” cites no page and holds no words: clear cite and contains, or untick not covered")
	}
	return out, nil
}

func cleanItems(field string, items []string, maxItems int, clean func(string) string) ([]string, error) {
	var out []string
	for _, it := range items {
		it = clean(it)
		if it == "" || slices.Contains(out, it) {
			continue
		}
		if n := len([]rune(it)); n > maxItemRunes {
			return nil, apperr.New(apperr.Invalid, "%s: %q is %d characters long; shorten it to at most %d", field, clip(it), n, maxItemRunes)
		}
		if strings.ContainsFunc(it, unicode.IsControl) {
			return nil, apperr.New(apperr.Invalid, "%s: %q holds a control character; remove it", field, clip(it))
		}
		out = append(out, it)
	}
	if len(out) > maxItems {
		return nil, apperr.New(apperr.Invalid, "%s has %d entries; keep at most %d", field, len(out), maxItems)
	}
	return out, nil
}

// Edit writes e into a check and marks it edited: a harvest no longer lets
// it go. A gap's check still expects an answer unless it now expects "not
// covered".
func (s *Service) Edit(ctx context.Context, domain, id string, e Edit) (Check, error) {
	e, err := CheckEdit(e)
	if err != nil {
		return Check{}, err
	}
	return s.change(ctx, domain, id, func(c *Check) error {
		if c.Question != e.Question {
			c.Name = checkName(c.Origin, e.Question)
		}
		c.Question, c.Cite, c.Contains, c.NotCovered = e.Question, e.Cite, e.Contains, e.NotCovered
		c.Answered = c.Origin == answercheck.OriginGap && !e.NotCovered
		c.Edited = true
		return nil
	})
}

func (s *Service) change(ctx context.Context, domain, id string, fn func(*Check) error) (Check, error) {
	c, err := s.cfg.Store.GetTrafficCheck(ctx, domain, id)
	if err != nil {
		return Check{}, err
	}
	if err := fn(&c); err != nil {
		return Check{}, err
	}
	c.UpdatedAt = s.cfg.Now()
	if err := s.cfg.Store.UpdateTrafficCheck(ctx, c); err != nil {
		return Check{}, fmt.Errorf("update traffic check %s of %s: %w", id, domain, err)
	}
	return c, nil
}

// Found returns the checks recent traffic suggests, upvotes first, each
// normalized question once:
//
//   - of the turns readers rated up whose answer cited pages (answered
//     wholly or in part), the PerHarvest newest asked: a good answer cites
//     one of those pages (at most maxCite of them);
//   - of the gaps, those with a question the assistant answered "not
//     covered" or only in part, each by its newest such question, the
//     PerHarvest newest asked: a good answer says the docs cover it.
//
// turns are oldest first, gaps grouped from them.
func Found(domain string, turns []analytics.TurnRecord, gaps []analytics.Gap, now time.Time) []Check {
	var ups []Check
	for i := len(turns) - 1; i >= 0 && len(ups) < PerHarvest; i-- {
		t := turns[i]
		if t.Rating != analytics.RatingUp || (t.Status != assistant.TurnAnswered && t.Status != assistant.TurnPartial) {
			continue
		}
		var cite []string
		for _, src := range t.Sources {
			if p := answercheck.PagePath(src.Path); p != "" && !slices.Contains(cite, p) && len(cite) < maxCite {
				cite = append(cite, p)
			}
		}
		if len(cite) == 0 || HarvestKey(t.Question) == "" {
			continue
		}
		ups = append(ups, newCheck(domain, answercheck.OriginUpvote, t.Question, t.ThreadID, t.Seq, t.CreatedAt, now, func(c *Check) { c.Cite = cite }))
	}
	var gapChecks []Check
	for _, g := range gaps {
		// Questions are newest first.
		for _, q := range g.Questions {
			if !slices.Contains(q.Reasons, analytics.ReasonNotCovered) && !slices.Contains(q.Reasons, analytics.ReasonPartial) {
				continue
			}
			if HarvestKey(q.Question) == "" {
				continue
			}
			gapChecks = append(gapChecks, newCheck(domain, answercheck.OriginGap, q.Question, q.ThreadID, q.Seq, q.AskedAt, now, func(c *Check) {
				c.Answered, c.GapKey = true, g.Key
			}))
			break
		}
	}
	slices.SortStableFunc(gapChecks, func(a, b Check) int { return b.AskedAt.Compare(a.AskedAt) })
	if len(gapChecks) > PerHarvest {
		gapChecks = gapChecks[:PerHarvest]
	}
	out := make([]Check, 0, len(ups)+len(gapChecks))
	seen := map[string]bool{}
	for _, c := range append(ups, gapChecks...) {
		if !seen[c.HarvestKey] {
			seen[c.HarvestKey] = true
			out = append(out, c)
		}
	}
	return out
}

func newCheck(domain, origin, question, threadID string, seq int, asked, now time.Time, set func(*Check)) Check {
	q := strings.Join(strings.Fields(question), " ")
	if r := []rune(q); len(r) > MaxQuestionRunes {
		q = string(r[:MaxQuestionRunes])
	}
	c := Check{
		ID: uuid.Must(uuid.NewV7()).String(), Domain: domain, HarvestKey: HarvestKey(question), Name: checkName(origin, q), Question: q,
		Origin: origin, ThreadID: threadID, Seq: seq, AskedAt: asked, CreatedAt: now, UpdatedAt: now,
	}
	set(&c)
	return c
}

// HarvestKey is a question as harvests compare them: lower-case words of
// letters and digits, single-spaced, at most MaxQuestionRunes long.
func HarvestKey(question string) string {
	words := strings.FieldsFunc(strings.ToLower(question), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	key := strings.Join(words, " ")
	if r := []rune(key); len(r) > MaxQuestionRunes {
		key = string(r[:MaxQuestionRunes])
	}
	return key
}

// checkName names a check in reports: its origin and a slug of its
// question ("reader-how-do-i-restore-a-snapshot", "gap-…").
func checkName(origin, question string) string {
	prefix := "reader"
	if origin == answercheck.OriginGap {
		prefix = "gap"
	}
	slug := strings.ReplaceAll(HarvestKey(question), " ", "-")
	if r := []rune(slug); len(r) > 60 {
		slug = strings.TrimRight(string(r[:60]), "-")
	}
	if slug == "" {
		return prefix
	}
	return prefix + "-" + slug
}

func clip(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:39]) + "…"
	}
	return s
}
