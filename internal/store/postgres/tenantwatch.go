package postgres

import (
	"context"
	"sync"
)

// tenantsChannel is where the schema's triggers announce a change of an
// organization, project, domain or key (migrations/0013_tenant_changes.sql),
// with the schema as payload. It is one channel for every schema of the
// database, so that the triggers need not compute a channel name.
const tenantsChannel = "docsmith.tenants"

// WatchTenants calls changed whenever a tenant (organization, project,
// domain or key) of this schema may have changed, whoever changed it,
// until ctx ends, reconnecting after losing the database. It also calls
// changed after each (re)connection, since what changed while it was not
// listening is not announced again. ready, if not nil, is closed once it
// first listens.
func (s *Store) WatchTenants(ctx context.Context, changed func(), ready chan<- struct{}) {
	var once sync.Once
	s.listen(ctx, tenantsChannel, func() {
		changed()
		if ready != nil {
			once.Do(func() { close(ready) })
		}
	}, func(schema string) {
		if schema == s.schema {
			changed()
		}
	})
}
