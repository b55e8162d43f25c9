package workflow

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The cron parser is ours rather than a library's on purpose: the format
// accepted is exactly the five standard fields (no seconds, no @every,
// no CRON_TZ= prefix, since the zone is the server's setting), and the
// behaviour across daylight-saving changes is decided here, where it is
// documented and tested, instead of inherited.

// cronSpec holds one bit per allowed value of each field.
type cronSpec struct {
	minute, hour, dom, month, dow uint64
	// domStar and dowStar record a field written as "*" (or "*/n"): the
	// standard rule is that when both day fields are restricted, a day
	// matching either one is enough.
	domStar, dowStar bool
}

type cronField struct {
	name     string
	min, max int
	names    []string // names[i] is the value min+i, when names are allowed
}

var cronFields = [5]cronField{
	{name: "minute", min: 0, max: 59},
	{name: "hour", min: 0, max: 23},
	{name: "day of month", min: 1, max: 31},
	{name: "month", min: 1, max: 12, names: []string{"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}},
	// 7 is accepted for Sunday as most crons do; it folds onto 0.
	{name: "day of week", min: 0, max: 7, names: []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"}},
}

const maxCronLen = 200

func parseCron(expr string) (cronSpec, error) {
	if len(expr) > maxCronLen {
		return cronSpec{}, fmt.Errorf("is longer than %d characters", maxCronLen)
	}
	fields := strings.Fields(expr)
	if len(fields) != 5 {
		return cronSpec{}, fmt.Errorf("must have 5 fields (minute hour day-of-month month day-of-week), like \"0 9 * * 1\"; got %d", len(fields))
	}
	var bits [5]uint64
	var stars [5]bool
	for i, f := range fields {
		b, star, err := parseCronField(f, cronFields[i])
		if err != nil {
			return cronSpec{}, fmt.Errorf("%s field %q: %w", cronFields[i].name, f, err)
		}
		bits[i], stars[i] = b, star
	}
	if bits[4]&(1<<7) != 0 {
		bits[4] = bits[4]&^(1<<7) | 1
	}
	return cronSpec{minute: bits[0], hour: bits[1], dom: bits[2], month: bits[3], dow: bits[4], domStar: stars[2], dowStar: stars[4]}, nil
}

func parseCronField(s string, f cronField) (bits uint64, star bool, err error) {
	star = strings.HasPrefix(s, "*")
	for _, part := range strings.Split(s, ",") {
		lo, hi, step := f.min, f.max, 1
		rng, stepStr, hasStep := strings.Cut(part, "/")
		if hasStep {
			step, err = strconv.Atoi(stepStr)
			if err != nil || step < 1 || step > f.max {
				return 0, false, fmt.Errorf("step %q must be a number from 1 to %d", stepStr, f.max)
			}
		}
		switch {
		case rng == "*":
		case strings.Contains(rng, "-"):
			a, b, _ := strings.Cut(rng, "-")
			if lo, err = cronValue(a, f); err != nil {
				return 0, false, err
			}
			if hi, err = cronValue(b, f); err != nil {
				return 0, false, err
			}
			if lo > hi {
				return 0, false, fmt.Errorf("range %q runs backwards", rng)
			}
		default:
			if lo, err = cronValue(rng, f); err != nil {
				return 0, false, err
			}
			if hasStep {
				hi = f.max // "5/15" means from 5 to the end, every 15
			} else {
				hi = lo
			}
		}
		for v := lo; v <= hi; v += step {
			bits |= 1 << uint(v)
		}
	}
	return bits, star, nil
}

func cronValue(s string, f cronField) (int, error) {
	if s == "" {
		return 0, errors.New("has an empty value")
	}
	for i, n := range f.names {
		if strings.EqualFold(s, n) {
			return f.min + i, nil
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil || len(s) > 2 {
		return 0, fmt.Errorf("value %q is not a number", s)
	}
	if v < f.min || v > f.max {
		return 0, fmt.Errorf("value %d is outside %d-%d", v, f.min, f.max)
	}
	return v, nil
}

func (c cronSpec) matchDay(y int, m time.Month, d int) bool {
	if c.month&(1<<uint(m)) == 0 {
		return false
	}
	domOK := c.dom&(1<<uint(d)) != 0
	dowOK := c.dow&(1<<uint(time.Date(y, m, d, 12, 0, 0, 0, time.UTC).Weekday())) != 0
	if c.domStar || c.dowStar {
		return domOK && dowOK
	}
	return domOK || dowOK
}

// Schedule is a parsed cron expression in a time zone.
type Schedule struct {
	spec cronSpec
	loc  *time.Location
	expr string
}

// ParseSchedule parses a standard five-field cron expression, read as wall
// clock time in loc (UTC when loc is nil).
func ParseSchedule(expr string, loc *time.Location) (Schedule, error) {
	spec, err := parseCron(expr)
	if err != nil {
		return Schedule{}, fmt.Errorf("cron %q: %w", expr, err)
	}
	if loc == nil {
		loc = time.UTC
	}
	return Schedule{spec: spec, loc: loc, expr: expr}, nil
}

// searchYears bounds how far Next looks: an expression such as
// "0 0 30 2 *" never matches and must not loop forever.
const searchYears = 5

// Next returns the first slot strictly after t, and false when the
// expression matches no date within five years.
//
// Slots are wall clock times in the schedule's zone. A wall time that a
// daylight-saving change skips runs at the first instant after the gap
// (several skipped slots become that one slot); a wall time that occurs
// twice runs once, at its first occurrence.
func (s Schedule) Next(t time.Time) (time.Time, bool) {
	t = t.In(s.loc)
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	end := day.AddDate(searchYears, 0, 1)
	// On t's own day, wall times before t's are skipped: each resolves to
	// an instant no later than t (see resolveWall), so none can be next.
	first := t.Hour()*60 + t.Minute()
	for ; day.Before(end); day = day.AddDate(0, 0, 1) {
		y, m, d := day.Date()
		if !s.spec.matchDay(y, m, d) {
			first = 0
			continue
		}
		for h := first / 60; h < 24; h++ {
			if s.spec.hour&(1<<uint(h)) == 0 {
				continue
			}
			for mi := 0; mi < 60; mi++ {
				if s.spec.minute&(1<<uint(mi)) == 0 || h*60+mi < first {
					continue
				}
				if at := resolveWall(s.loc, y, m, d, h, mi); at.After(t) {
					return at, true
				}
			}
		}
		first = 0
	}
	return time.Time{}, false
}

// resolveWall turns a wall clock time in loc into an instant: its first
// occurrence, or the end of the gap when the clock skipped it.
func resolveWall(loc *time.Location, y int, m time.Month, d, h, mi int) time.Time {
	wallUTC := time.Date(y, m, d, h, mi, 0, 0, time.UTC)
	var best time.Time
	// Every offset that could apply near this wall time: before, after and
	// whatever the standard library picks.
	var candidates [3]time.Time
	candidates[0] = time.Date(y, m, d, h, mi, 0, 0, loc)
	for i, probe := range []time.Time{wallUTC.Add(-26 * time.Hour), wallUTC.Add(26 * time.Hour)} {
		_, off := probe.In(loc).Zone()
		candidates[i+1] = wallUTC.Add(-time.Duration(off) * time.Second)
	}
	for _, c := range candidates {
		w := c.In(loc)
		if w.Year() == y && w.Month() == m && w.Day() == d && w.Hour() == h && w.Minute() == mi {
			if best.IsZero() || c.Before(best) {
				best = c
			}
		}
	}
	if !best.IsZero() {
		return best
	}
	// Skipped: read with the offset from before the change, the wall time
	// lands after the change; the zone then in force began at the gap's end.
	_, off := wallUTC.Add(-26 * time.Hour).In(loc).Zone()
	after := wallUTC.Add(-time.Duration(off) * time.Second).In(loc)
	start, _ := after.ZoneBounds()
	if start.IsZero() {
		return after
	}
	return start
}

// Slot is one due run of a scheduled workflow.
type Slot struct {
	// At is the slot's instant.
	At time.Time
	// Key is unique per workflow and slot: a store that makes it a unique
	// constraint starts each slot exactly once, whatever the number of
	// replicas racing for it.
	Key string
}

// SlotKey is the unique key of a workflow's slot.
func SlotKey(workflowID string, at time.Time) string {
	return workflowID + "@" + at.UTC().Format(time.RFC3339)
}

// Due returns the one slot to run now: the latest slot in (last, now].
// last is the slot that ran last or, for a workflow that never ran, the
// time it was first seen (so adding a workflow does not run it for the
// past); a zero last is never due, for the same reason. Slots missed
// during downtime collapse into that one latest slot.
func (s Schedule) Due(workflowID string, last, now time.Time) (Slot, bool) {
	if last.IsZero() || !now.After(last) {
		return Slot{}, false
	}
	// Look back from now in growing windows so that both "every minute
	// after a year down" and "once a year" take a handful of steps.
	for window := time.Hour; ; window *= 2 {
		from := now.Add(-window)
		if window > 100*365*24*time.Hour || !from.After(last) {
			from = last
		}
		next, ok := s.Next(from)
		if ok && !next.After(now) {
			latest := next
			for {
				n, ok := s.Next(latest)
				if !ok || n.After(now) {
					break
				}
				latest = n
			}
			return Slot{At: latest, Key: SlotKey(workflowID, latest)}, true
		}
		if from.Equal(last) {
			return Slot{}, false
		}
	}
}

// String returns the expression as written.
func (s Schedule) String() string { return s.expr }

// Location is the zone the schedule is read in.
func (s Schedule) Location() *time.Location { return s.loc }
