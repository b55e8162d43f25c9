package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/apperr"
)

// holdWriter keeps the writer busy until the returned function is called,
// so that the writes started meanwhile queue up and share the next batch.
func holdWriter(t *testing.T, s *Store) (release func()) {
	t.Helper()
	held, done := make(chan struct{}), make(chan struct{})
	go func() {
		_ = s.write.runRaw(context.Background(), func(context.Context, *wtx) error {
			close(held)
			<-done
			return nil
		})
	}()
	<-held
	return func() { close(done) }
}

// queued waits until n writes wait for the writer: it cannot see them, so
// it gives their goroutines time to reach the queue.
func queued() { time.Sleep(200 * time.Millisecond) }

func openTestStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	if _, err := s.exec(t.Context(), `CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return s
}

func rowsOf(t *testing.T, s *Store) []string {
	t.Helper()
	rows, err := s.read.QueryContext(t.Context(), `SELECT id || '=' || v FROM t ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// TestWriterGroupCommit: writes that wait together are committed in one
// transaction, and each caller is answered for its own: one that fails
// (after writing) leaves nothing behind, the others are all stored.
func TestWriterGroupCommit(t *testing.T) {
	t.Parallel()
	s := openTestStore(t)
	release := holdWriter(t, s)
	batchesBefore := s.write.batches.Load()

	const n = 20
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = s.writeTx(t.Context(), func(ctx context.Context, tx *wtx) error {
				if _, err := tx.ExecContext(ctx, `INSERT INTO t (id, v) VALUES (?, ?)`, i, "ok"); err != nil {
					return err
				}
				if i%5 == 3 {
					// Wrote, then failed: its row must go with it.
					return fmt.Errorf("write %d refused", i)
				}
				if i == 7 {
					// A statement that fails: a duplicate key.
					_, err := tx.ExecContext(ctx, `INSERT INTO t (id, v) VALUES (?, ?)`, i, "again")
					return err
				}
				return nil
			})
		})
	}
	queued()
	release()
	wg.Wait()

	var want []string
	for i := range n {
		failed := i%5 == 3 || i == 7
		if failed != (errs[i] != nil) {
			t.Errorf("write %d: err = %v", i, errs[i])
		}
		if !failed {
			want = append(want, strconv.Itoa(i)+"=ok")
		}
	}
	if got := rowsOf(t, s); strings.Join(got, " ") != strings.Join(sortedNumeric(want), " ") {
		t.Errorf("rows = %v, want %v", got, sortedNumeric(want))
	}
	if batches := s.write.batches.Load() - batchesBefore; batches >= n/2 {
		t.Errorf("%d writes took %d commits: they were not batched", n, batches)
	}
}

// TestWriterGathersABurst: a lone write is committed at once, however long
// the gather window; while writes come in a burst, a batch waits in the
// window for more, so that they share one commit.
func TestWriterGathersABurst(t *testing.T) {
	t.Parallel()
	s := openTestStore(t)
	if err := s.write.runRaw(t.Context(), func(context.Context, *wtx) error {
		s.write.gather = time.Hour
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	insert := func(i int) error {
		return s.writeTx(t.Context(), func(ctx context.Context, tx *wtx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO t (id, v) VALUES (?, ?)`, i, "ok")
			return err
		})
	}
	if err := insert(0); err != nil { // alone: were it held for the window, this would hang
		t.Fatal(err)
	}

	release := holdWriter(t, s)
	batchesBefore := s.write.batches.Load()
	var wg sync.WaitGroup
	errs := make(chan error, maxBatch)
	write := func(i int) { wg.Go(func() { errs <- insert(i) }) }
	write(1)
	write(2)
	queued()
	release() // the two waiting writes make a burst: their batch waits for more
	time.Sleep(50 * time.Millisecond)
	for i := 3; i <= maxBatch; i++ {
		write(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := len(rowsOf(t, s)); got != maxBatch+1 {
		t.Errorf("%d rows, want %d", got, maxBatch+1)
	}
	if batches := s.write.batches.Load() - batchesBefore; batches != 1 {
		t.Errorf("the burst of %d writes took %d commits, want 1", maxBatch, batches)
	}
}

func sortedNumeric(rows []string) []string {
	out := append([]string(nil), rows...)
	num := func(r string) int { n, _ := strconv.Atoi(strings.SplitN(r, "=", 2)[0]); return n }
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && num(out[j]) < num(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// TestWriterAbandonedWait: a write whose caller gives up before the writer
// starts it is not written, and the caller hears so; one the writer started
// is answered with its outcome even after the caller's context ended.
func TestWriterAbandonedWait(t *testing.T) {
	t.Parallel()
	s := openTestStore(t)
	release := holdWriter(t, s)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		errc <- s.writeTx(ctx, func(ctx context.Context, tx *wtx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO t (id, v) VALUES (1, 'abandoned')`)
			return err
		})
	}()
	queued()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("abandoned write = %v, want context.Canceled", err)
	}
	release()

	// Started, then its caller's context ends: it commits, and says so.
	ctx, cancel = context.WithCancel(t.Context())
	err := s.writeTx(ctx, func(wctx context.Context, tx *wtx) error {
		cancel()
		if wctx.Err() != nil {
			return errors.New("the transaction's context ended with the caller's")
		}
		_, err := tx.ExecContext(wctx, `INSERT INTO t (id, v) VALUES (2, 'started')`)
		return err
	})
	if err != nil {
		t.Fatalf("started write = %v, want it committed", err)
	}
	if got := rowsOf(t, s); strings.Join(got, " ") != "2=started" {
		t.Errorf("rows = %v, want only the started write", got)
	}
}

// TestWriterFullDiskFailsTheBatch: a write that fills the disk rolls back
// the transaction it shares: every caller of the batch is told the disk is
// full and nothing of theirs is stored.
func TestWriterFullDiskFailsTheBatch(t *testing.T) {
	t.Parallel()
	s := openTestStore(t)
	var pages int
	err := s.write.runRaw(t.Context(), func(ctx context.Context, tx *wtx) error {
		return tx.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages)
	})
	if err != nil {
		t.Fatal(err)
	}
	onWriteConn(t, s, `PRAGMA max_page_count = `+strconv.Itoa(pages+1))
	release := holdWriter(t, s)
	const n = 6
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = s.writeTx(t.Context(), func(ctx context.Context, tx *wtx) error {
				v := "small"
				if i == n-1 {
					v = strings.Repeat("x", 64<<10) // more than the one page left
				}
				_, err := tx.ExecContext(ctx, `INSERT INTO t (id, v) VALUES (?, ?)`, i, v)
				return err
			})
		})
	}
	queued()
	release()
	wg.Wait()
	for i, err := range errs {
		if !apperr.Is(err, apperr.StorageFull) {
			t.Errorf("write %d of the batch = %v, want StorageFull", i, err)
		}
	}
	if got := rowsOf(t, s); len(got) != 0 {
		t.Errorf("rows stored by a batch that met a full disk: %v", got)
	}
	// The writer goes on once there is room.
	onWriteConn(t, s, `PRAGMA max_page_count = 1000000`)
	if _, err := s.exec(t.Context(), `INSERT INTO t (id, v) VALUES (100, 'after')`); err != nil {
		t.Fatalf("write after the disk has room again: %v", err)
	}
}

// TestWriterPanic: a panic in a write transaction reaches its caller, rolls
// back only that transaction, and leaves the writer working.
func TestWriterPanic(t *testing.T) {
	t.Parallel()
	s := openTestStore(t)
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Errorf("recovered %v, want the transaction's panic", p)
			}
		}()
		_ = s.writeTx(t.Context(), func(ctx context.Context, tx *wtx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO t (id, v) VALUES (1, 'panicked')`); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	if _, err := s.exec(t.Context(), `INSERT INTO t (id, v) VALUES (2, 'after')`); err != nil {
		t.Fatal(err)
	}
	if got := rowsOf(t, s); strings.Join(got, " ") != "2=after" {
		t.Errorf("rows = %v", got)
	}
}

// TestWriterClosed: writes handed to a closed store fail; the ones it took
// before are answered.
func TestWriterClosed(t *testing.T) {
	t.Parallel()
	s, err := Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.exec(t.Context(), `SELECT 1`); !errors.Is(err, errStoreClosed) {
		t.Fatalf("write after Close = %v", err)
	}
}
