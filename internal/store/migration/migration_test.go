package migration

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoad(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		files   []string
		want    []string // "version name"
		wantErr string
	}{
		{name: "in version order", files: []string{"m/0010_ten.sql", "m/0002_two.sql", "m/0001_init.sql"}, want: []string{"1 init", "2 two", "10 ten"}},
		{name: "no files", files: nil, want: []string{}},
		{name: "no number", files: []string{"m/init.sql"}, wantErr: "must start with a positive number"},
		{name: "zero", files: []string{"m/0000_init.sql"}, wantErr: "must start with a positive number"},
		{name: "same number twice", files: []string{"m/0003_a.sql", "m/0003_b.sql"}, wantErr: "0003_a and 0003_b have the same number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fsys := fstest.MapFS{}
			for _, f := range tt.files {
				fsys[f] = &fstest.MapFile{Data: []byte("-- " + f)}
			}
			ms, err := Load(fsys, "m/*.sql")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Load = %v, want an error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, m := range ms {
				got = append(got, strconv.Itoa(m.Version)+" "+m.Name)
				if !strings.HasPrefix(m.SQL, "-- m/") {
					t.Errorf("migration %d has body %q", m.Version, m.SQL)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Load = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPlan(t *testing.T) {
	t.Parallel()
	ms := []Migration{{Version: 1, Name: "init"}, {Version: 2, Name: "two"}, {Version: 3, Name: "three"}}
	tests := []struct {
		name    string
		applied []int
		current int
		pending []int
		tooNew  bool
	}{
		{name: "new database", applied: nil, current: 0, pending: []int{1, 2, 3}},
		{name: "behind", applied: []int{1}, current: 1, pending: []int{2, 3}},
		{name: "a gap is filled", applied: []int{1, 3}, current: 3, pending: []int{2}},
		{name: "up to date", applied: []int{3, 2, 1}, current: 3, pending: nil},
		{name: "newer than this docsmith", applied: []int{1, 2, 3, 4}, current: 4, tooNew: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st, err := Plan(ms, tt.applied)
			if st.Current != tt.current || st.Latest != 3 {
				t.Errorf("Plan: current %d, latest %d; want %d, 3", st.Current, st.Latest, tt.current)
			}
			var tooNew *TooNewError
			if tt.tooNew {
				if !errors.As(err, &tooNew) || tooNew.Database != 4 || tooNew.Known != 3 {
					t.Fatalf("Plan = %v, want a TooNewError 4 > 3", err)
				}
				want := "the database is at schema version 4, this docsmith knows up to 3: it was upgraded by a newer docsmith; run that version or restore a backup"
				if err.Error() != want {
					t.Errorf("error = %q, want %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var pending []int
			for _, m := range st.Pending {
				pending = append(pending, m.Version)
			}
			if !reflect.DeepEqual(pending, tt.pending) {
				t.Errorf("pending = %v, want %v", pending, tt.pending)
			}
		})
	}
}
