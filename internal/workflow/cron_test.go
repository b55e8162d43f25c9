package workflow

import (
	"strings"
	"testing"
	"time"
)

func mustSchedule(t testing.TB, expr string, loc *time.Location) Schedule {
	t.Helper()
	s, err := ParseSchedule(expr, loc)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustLoc(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Skipf("time zone data for %s unavailable: %v", name, err)
	}
	return loc
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestParseScheduleRejects(t *testing.T) {
	t.Parallel()
	tests := []struct{ expr, want string }{
		{"", "5 fields"},
		{"* * * *", "5 fields"},
		{"0 * * * * *", "5 fields"},
		{"@daily", "5 fields"},
		{"CRON_TZ=Europe/Paris 0 9 * * 1", "5 fields"},
		{"60 * * * *", "outside 0-59"},
		{"* 24 * * *", "outside 0-23"},
		{"* * 0 * *", "outside 1-31"},
		{"* * * 13 *", "outside 1-12"},
		{"* * * * 8", "outside 0-7"},
		{"5-1 * * * *", "backwards"},
		{"*/0 * * * *", "step"},
		{"1,,2 * * * *", "empty"},
		{"a * * * *", "not a number"},
		{"-1 * * * *", "empty"},
		{"001 * * * *", "not a number"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			t.Parallel()
			_, err := ParseSchedule(tt.expr, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestNext(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr, after, want string
	}{
		{"0 9 * * 1", "2026-11-23T08:11:00Z", "2026-11-23T09:00:00Z"}, // a Monday
		{"0 9 * * 1", "2026-11-23T09:00:00Z", "2026-11-30T09:00:00Z"}, // strictly after
		{"*/15 * * * *", "2026-01-01T00:07:30Z", "2026-01-01T00:15:00Z"},
		{"5/20 * * * *", "2026-01-01T00:26:00Z", "2026-01-01T00:45:00Z"},
		{"0 0 1 JAN *", "2026-06-01T00:00:00Z", "2027-01-01T00:00:00Z"},
		{"0 0 * * sun", "2026-11-23T00:00:00Z", "2026-11-29T00:00:00Z"},
		{"0 0 * * 7", "2026-11-23T00:00:00Z", "2026-11-29T00:00:00Z"},
		// Both day fields restricted: either one matching is enough.
		{"0 0 1 * 5", "2026-11-23T00:00:00Z", "2026-11-27T00:00:00Z"},
		{"0 0 1 * 5", "2026-11-27T00:00:00Z", "2026-12-01T00:00:00Z"},
		// Day of month restricted, day of week "*": only the day of month.
		{"0 0 29 2 *", "2026-03-01T00:00:00Z", "2028-02-29T00:00:00Z"},
		{"30 23 31 * *", "2026-04-01T00:00:00Z", "2026-05-31T23:30:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.expr+" after "+tt.after, func(t *testing.T) {
			t.Parallel()
			got, ok := mustSchedule(t, tt.expr, nil).Next(utc(tt.after))
			if !ok || !got.Equal(utc(tt.want)) {
				t.Fatalf("Next = %v %v, want %s", got, ok, tt.want)
			}
		})
	}
}

func TestNextNeverMatches(t *testing.T) {
	t.Parallel()
	if got, ok := mustSchedule(t, "0 0 30 2 *", nil).Next(utc("2026-01-01T00:00:00Z")); ok {
		t.Fatalf("Next = %v, want none", got)
	}
}

func TestNextAcrossDaylightSaving(t *testing.T) {
	t.Parallel()
	ny := mustLoc(t, "America/New_York")
	// 2026-03-08: clocks jump from 02:00 EST to 03:00 EDT (07:00Z).
	// 2026-11-01: clocks fall back from 02:00 EDT to 01:00 EST (06:00Z).
	tests := []struct {
		name, expr, after string
		want              []string
	}{
		{"daily 09:00 keeps its wall time", "0 9 * * *", "2026-03-07T00:00:00Z",
			[]string{"2026-03-07T14:00:00Z", "2026-03-08T13:00:00Z", "2026-03-09T13:00:00Z"}},
		{"skipped 02:30 runs when the gap ends", "30 2 * * *", "2026-03-07T12:00:00Z",
			[]string{"2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z"}},
		{"several skipped slots become one", "*/20 2,3 8 3 *", "2026-03-08T06:00:00Z",
			[]string{"2026-03-08T07:00:00Z", "2026-03-08T07:20:00Z", "2026-03-08T07:40:00Z", "2027-03-08T07:00:00Z"}},
		{"repeated 01:30 runs once, first time", "30 1 * * *", "2026-10-31T12:00:00Z",
			[]string{"2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"}},
		{"every 30 minutes through the repeated hour", "*/30 0-2 1 11 *", "2026-11-01T03:50:00Z",
			[]string{"2026-11-01T04:00:00Z", "2026-11-01T04:30:00Z", "2026-11-01T05:00:00Z", "2026-11-01T05:30:00Z", "2026-11-01T07:00:00Z", "2026-11-01T07:30:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := mustSchedule(t, tt.expr, ny)
			at := utc(tt.after)
			for i, w := range tt.want {
				next, ok := s.Next(at)
				if !ok || !next.Equal(utc(w)) {
					t.Fatalf("slot %d = %v (%v), want %s", i, next.UTC(), next, w)
				}
				at = next
			}
		})
	}
}

func TestDue(t *testing.T) {
	t.Parallel()
	weekly := mustSchedule(t, "0 9 * * 1", nil)
	everyMinute := mustSchedule(t, "* * * * *", nil)
	yearly := mustSchedule(t, "0 0 1 1 *", nil)
	tests := []struct {
		name      string
		s         Schedule
		last, now string
		want      string // "" when nothing is due
	}{
		{"not yet", weekly, "2026-11-16T09:00:00Z", "2026-11-23T08:59:59Z", ""},
		{"on the slot", weekly, "2026-11-16T09:00:00Z", "2026-11-23T09:00:00Z", "2026-11-23T09:00:00Z"},
		{"late", weekly, "2026-11-16T09:00:00Z", "2026-11-23T11:30:00Z", "2026-11-23T09:00:00Z"},
		{"already ran", weekly, "2026-11-23T09:00:00Z", "2026-11-23T11:30:00Z", ""},
		{"three weeks down runs once, the latest", weekly, "2026-11-02T09:00:00Z", "2026-11-25T00:00:00Z", "2026-11-23T09:00:00Z"},
		{"every minute after a year down", everyMinute, "2025-11-23T08:00:00Z", "2026-11-23T08:11:42Z", "2026-11-23T08:11:00Z"},
		{"yearly after two years down", yearly, "2024-01-01T00:00:00Z", "2026-11-23T08:00:00Z", "2026-01-01T00:00:00Z"},
		{"new workflow does not run for the past", weekly, "2026-11-23T10:00:00Z", "2026-11-23T10:00:01Z", ""},
		{"clock went backwards", weekly, "2026-11-23T10:00:00Z", "2026-11-23T09:30:00Z", ""},
		{"zero last is never due", weekly, "0001-01-01T00:00:00Z", "2026-11-23T10:00:00Z", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			slot, ok := tt.s.Due("links", utc(tt.last), utc(tt.now))
			if tt.want == "" {
				if ok {
					t.Fatalf("due %v, want nothing", slot)
				}
				return
			}
			if !ok || !slot.At.Equal(utc(tt.want)) || slot.Key != "links@"+tt.want {
				t.Fatalf("Due = %+v %v, want %s", slot, ok, tt.want)
			}
		})
	}
}

// TestDueFakeClock drives a replica loop with a fake clock: each tick asks
// for the due slot and records it as the last run, as the store would.
func TestDueFakeClock(t *testing.T) {
	t.Parallel()
	paris := mustLoc(t, "Europe/Paris")
	s := mustSchedule(t, "0 9 * * 1", paris)
	last := utc("2026-03-01T00:00:00Z")
	var ran []string
	for now := last; now.Before(utc("2026-04-10T00:00:00Z")); now = now.Add(10 * time.Minute) {
		if now.After(utc("2026-03-15T00:00:00Z")) && now.Before(utc("2026-03-31T12:00:00Z")) {
			continue // the server was down for two Mondays
		}
		if slot, ok := s.Due("w", last, now); ok {
			ran = append(ran, slot.Key)
			last = slot.At
		}
	}
	// Paris moves to summer time on 2026-03-29, so 09:00 is 08:00Z before
	// and 07:00Z after; the downtime's two slots became one run on restart.
	want := []string{"w@2026-03-02T08:00:00Z", "w@2026-03-09T08:00:00Z", "w@2026-03-30T07:00:00Z", "w@2026-04-06T07:00:00Z"}
	if strings.Join(ran, " ") != strings.Join(want, " ") {
		t.Fatalf("ran %v, want %v", ran, want)
	}
}

// TestDueReplicasAgree: replicas whose clocks differ, and whose last-run
// view differs by a slot, still name the same slot, so the store's unique
// key lets exactly one of them start it.
func TestDueReplicasAgree(t *testing.T) {
	t.Parallel()
	s := mustSchedule(t, "*/15 * * * *", mustLoc(t, "Europe/Paris"))
	a, okA := s.Due("w", utc("2026-11-23T08:45:00Z"), utc("2026-11-23T09:00:02Z"))
	b, okB := s.Due("w", utc("2026-11-23T08:30:00Z"), utc("2026-11-23T09:14:59Z"))
	if !okA || !okB || a.Key != b.Key || a.Key != "w@2026-11-23T09:00:00Z" {
		t.Fatalf("replicas disagree: %+v %v, %+v %v", a, okA, b, okB)
	}
}

func TestSlotKeyIsZoneIndependent(t *testing.T) {
	t.Parallel()
	at := utc("2026-11-23T09:00:00Z")
	if a, b := SlotKey("w", at), SlotKey("w", at.In(mustLoc(t, "Asia/Tokyo"))); a != b {
		t.Fatalf("%s != %s", a, b)
	}
}

func FuzzParseSchedule(f *testing.F) {
	for _, s := range []string{"0 9 * * 1", "*/5 1-3 1,15 JAN-MAR MON-FRI", "5/20 * * * 7", "0 0 30 2 *"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		s, err := ParseSchedule(expr, time.UTC)
		if err != nil {
			return
		}
		from := utc("2026-01-01T00:00:00Z")
		next, ok := s.Next(from)
		if ok && !next.After(from) {
			t.Fatalf("Next(%v) = %v, not after", from, next)
		}
	})
}

func BenchmarkDueEveryMinuteAfterAYear(b *testing.B) {
	s := mustSchedule(b, "* * * * *", nil)
	last, now := utc("2025-11-23T08:00:00Z"), utc("2026-11-23T08:11:42Z")
	for b.Loop() {
		s.Due("w", last, now)
	}
}

func BenchmarkNextNeverMatches(b *testing.B) {
	s := mustSchedule(b, "0 0 30 2 *", nil)
	from := utc("2026-01-01T00:00:00Z")
	for b.Loop() {
		s.Next(from)
	}
}
