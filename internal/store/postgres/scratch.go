package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"

	"github.com/jackc/pgx/v5"
)

// OpenScratch opens a store on a new schema of the database at rawURL, for
// throw-away work such as an evaluation index. drop closes the store and
// drops the schema with everything in it.
func OpenScratch(ctx context.Context, rawURL, prefix string, log *slog.Logger) (s *Store, drop func(context.Context) error, err error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, nil, errors.New("the database URL is not a valid postgres:// URL")
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	schema := pgx.Identifier{prefix + hex.EncodeToString(b)}.Sanitize()
	conn, err := pgx.Connect(ctx, rawURL)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to postgres: %w", err)
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema); err != nil {
		return nil, nil, fmt.Errorf("create schema %s: %w", schema, err)
	}
	dropSchema := func(ctx context.Context) error {
		c, err := pgx.Connect(ctx, rawURL)
		if err != nil {
			return fmt.Errorf("drop schema %s: %w", schema, err)
		}
		defer func() { _ = c.Close(context.WithoutCancel(ctx)) }()
		if _, err := c.Exec(ctx, `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			return fmt.Errorf("drop schema %s: %w", schema, err)
		}
		return nil
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	s, err = Open(ctx, u.String(), log)
	if err != nil {
		return nil, nil, errors.Join(err, dropSchema(context.WithoutCancel(ctx)))
	}
	return s, func(ctx context.Context) error { return errors.Join(s.Close(), dropSchema(ctx)) }, nil
}
