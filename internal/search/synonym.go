package search

import (
	"strings"
	"sync"

	"github.com/docsmith/docsmith/internal/search/engine"
)

// synonymCache keeps the tables of the synonym groups requests carry (a
// domain's settings), compiled, so that a question does not stem a
// domain's table again; it forgets them all when it holds maxSynonymTables.
type synonymCache struct {
	mu     sync.Mutex
	tables map[string]*engine.SynonymTable
}

const maxSynonymTables = 256

func newSynonymCache() *synonymCache {
	return &synonymCache{tables: map[string]*engine.SynonymTable{}}
}

// table returns groups compiled, nil for none.
func (c *synonymCache) table(groups [][]string) *engine.SynonymTable {
	if len(groups) == 0 {
		return nil
	}
	if c == nil {
		return engine.CompileSynonyms(groups)
	}
	key := synonymKey(groups)
	c.mu.Lock()
	t, ok := c.tables[key]
	c.mu.Unlock()
	if ok {
		return t
	}
	t = engine.CompileSynonyms(groups)
	c.mu.Lock()
	if len(c.tables) >= maxSynonymTables {
		clear(c.tables)
	}
	c.tables[key] = t
	c.mu.Unlock()
	return t
}

// synonymKey spells groups as one string: members are separated by a unit
// separator and groups by a record separator, which no member holds (a
// member that did would only share a key with another spelling of itself).
func synonymKey(groups [][]string) string {
	var b strings.Builder
	for _, g := range groups {
		for _, m := range g {
			b.WriteString(m)
			b.WriteByte(0x1f)
		}
		b.WriteByte(0x1e)
	}
	return b.String()
}
