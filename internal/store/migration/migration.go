// Package migration reads a store's embedded schema migrations and decides,
// from the versions a database has applied, which are pending and whether
// the database was upgraded by a newer docsmith than this one. The stores
// apply the migrations themselves, each in its own SQL dialect.
package migration

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Migration is one embedded migration file, NNNN_name.sql.
type Migration struct {
	Version int
	Name    string // the file name without the number and ".sql": "pr_checks"
	SQL     string
}

// Load reads the migrations matching pattern in fsys, in version order.
// Every file name must start with a number, and no two with the same one.
func Load(fsys fs.FS, pattern string) ([]Migration, error) {
	names, err := fs.Glob(fsys, pattern)
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	ms := make([]Migration, 0, len(names))
	for _, name := range names {
		base := strings.TrimSuffix(path.Base(name), ".sql")
		number, rest, _ := strings.Cut(base, "_")
		version, err := strconv.Atoi(number)
		if err != nil || version <= 0 {
			return nil, fmt.Errorf("migration %s: its name must start with a positive number", path.Base(name))
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", path.Base(name), err)
		}
		ms = append(ms, Migration{Version: version, Name: rest, SQL: string(body)})
	}
	slices.SortFunc(ms, func(a, b Migration) int { return a.Version - b.Version })
	for i := 1; i < len(ms); i++ {
		if ms[i].Version == ms[i-1].Version {
			return nil, fmt.Errorf("migrations %04d_%s and %04d_%s have the same number", ms[i-1].Version, ms[i-1].Name, ms[i].Version, ms[i].Name)
		}
	}
	return ms, nil
}

// Status is where a database stands against this docsmith's migrations.
type Status struct {
	Current int         // the highest version the database has applied; 0 for none
	Latest  int         // the highest version this docsmith knows
	Pending []Migration // known and not applied, in version order
}

// TooNewError is the error of a database whose schema is newer than the
// migrations this docsmith knows: a newer docsmith upgraded it, and this
// one would misread it.
type TooNewError struct {
	Database int // the database's schema version
	Known    int // the highest this docsmith knows
}

func (e *TooNewError) Error() string {
	return fmt.Sprintf("the database is at schema version %d, this docsmith knows up to %d: "+
		"it was upgraded by a newer docsmith; run that version or restore a backup", e.Database, e.Known)
}

// Plan compares the known migrations ms (as Load returns them) with the
// versions a database has applied. It returns a *TooNewError when the
// database holds a version above the highest of ms.
func Plan(ms []Migration, applied []int) (Status, error) {
	st := Status{}
	if len(ms) > 0 {
		st.Latest = ms[len(ms)-1].Version
	}
	done := make(map[int]bool, len(applied))
	for _, v := range applied {
		done[v] = true
		st.Current = max(st.Current, v)
	}
	if st.Current > st.Latest {
		return st, &TooNewError{Database: st.Current, Known: st.Latest}
	}
	for _, m := range ms {
		if !done[m.Version] {
			st.Pending = append(st.Pending, m)
		}
	}
	return st, nil
}
