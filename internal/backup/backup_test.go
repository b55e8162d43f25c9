package backup_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/backup"
	"github.com/docsmith/docsmith/internal/datadir"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/tenant"
)

func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// acked records the writes the store acknowledged, in order.
type acked struct {
	mu                  sync.Mutex
	jobs, keys, turns   []string
	jobsAt, keysAt, tAt int // lengths when the backup began
}

func (a *acked) add(list *[]string, id string) {
	a.mu.Lock()
	*list = append(*list, id)
	a.mu.Unlock()
}

func (a *acked) counts() (int, int, int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.jobs), len(a.keys), len(a.turns)
}

// TestBackupUnderWriteLoad takes a backup while jobs, assistant turns and
// keys are being written through the services and the store, restores it,
// and finds every write acknowledged before the backup began in a database
// that passes SQLite's integrity check; the rest of the data directory's
// state comes back too, and what is rebuildable does not.
func TestBackupUnderWriteLoad(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	st, err := sqlite.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	tenants := tenant.NewService(st, now)
	jobs := agentjob.NewService(st, agentjob.NewHub(), now)
	must(t, st.CreateOrg(ctx, tenant.Org{ID: "acme", CreatedAt: now()}))
	project := tenant.Project{ID: "docs", OrgID: "acme", RepoURL: filepath.Join(dir, "demo-docs.git"), BaseRef: "main", ForgeKind: "local", DocsRoot: ".", Model: "builtin", CreatedAt: now()}
	must(t, st.CreateProject(ctx, project))
	must(t, st.CreateDomain(ctx, tenant.Domain{ID: "site", OrgID: "acme", ProjectID: "docs", Ref: "main", Model: "extractive", CreatedAt: now()}))
	must(t, st.CreateThread(ctx, assistant.Thread{ID: "thr_1", Domain: "site", OrgID: "acme", FP: "anonymous", CreatedAt: now(), UpdatedAt: now()}))
	state := map[string]string{
		"demo-widget-key":                 "svc_widgetkey_secret\n",
		"demo-docs.git/HEAD":              "ref: refs/heads/main\n",
		"demo-docs.git/refs/heads/main":   "0123456789abcdef0123456789abcdef01234567\n",
		"demo-docs.git/objects/01/234567": "an object",
		"search-cache/site.snap":          "rebuildable",
		"git-mirrors/abc.git/HEAD":        "rebuildable",
		"work/job_1/page.mdx":             "rebuildable",
	}
	for name, body := range state {
		writeFile(t, filepath.Join(dir, name), body)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}

	var a acked
	stop := make(chan struct{})
	var wg sync.WaitGroup
	writer := func(write func(i int) (string, error), list *[]string) {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id, err := write(i)
				if err != nil {
					t.Error(err)
					return
				}
				a.add(list, id)
			}
		})
	}
	writer(func(i int) (string, error) {
		j, _, err := jobs.Create(ctx, project, fmt.Sprintf("replace %d with %d", i, i+1), "")
		return j.ID, err
	}, &a.jobs)
	writer(func(int) (string, error) {
		k, _, err := tenants.CreateKey(ctx, "acme", apikey.Assistant, "load")
		return k.ID, err
	}, &a.keys)
	writer(func(i int) (string, error) {
		msg := fmt.Sprintf("msg_%d", i)
		_, err := st.AddTurn(ctx, assistant.Turn{ThreadID: "thr_1", MessageID: msg, FP: "anonymous", Question: "q", Answer: "a",
			Model: "extractive", Status: assistant.TurnAnswered, CreatedAt: now()})
		return msg, err
	}, &a.turns)
	defer func() { close(stop); wg.Wait() }()

	// Let the load build up, then take the backup while it goes on.
	deadline := time.Now().Add(30 * time.Second)
	for j, k, tn := a.counts(); j < 100 || k < 100 || tn < 100; j, k, tn = a.counts() {
		if time.Now().After(deadline) {
			t.Fatalf("writes too slow: %d jobs, %d keys, %d turns", j, k, tn)
		}
		time.Sleep(5 * time.Millisecond)
	}
	a.jobsAt, a.keysAt, a.tAt = a.counts()
	archive := filepath.Join(t.TempDir(), "docsmith.tar.gz")
	res, err := backup.Create(ctx, backup.Options{DataDir: dir, To: archive, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	j, k, tn := a.counts()
	t.Logf("backup of %d jobs, %d keys, %d turns acknowledged before it; %d more written while it ran; %d bytes",
		a.jobsAt, a.keysAt, a.tAt, j+k+tn-a.jobsAt-a.keysAt-a.tAt, res.Size)

	paths := make([]string, 0, len(res.Manifest.Files))
	for _, f := range res.Manifest.Files {
		paths = append(paths, f.Path)
	}
	wantPaths := []string{"docsmith.db", "demo-docs.git/HEAD", "demo-docs.git/objects/01/234567", "demo-docs.git/refs/heads/main", "demo-widget-key", sqlite.MarkerName}
	if !slices.Equal(paths, wantPaths) {
		t.Errorf("backup holds %q, want %q", paths, wantPaths)
	}
	if res.Manifest.SchemaVersion == 0 || res.Manifest.Docsmith != "test" {
		t.Errorf("manifest = %+v", res.Manifest)
	}

	restored := filepath.Join(t.TempDir(), "restored")
	if _, err := backup.Restore(ctx, backup.RestoreOptions{From: archive, DataDir: restored}); err != nil {
		t.Fatal(err)
	}
	checkIntegrity(t, filepath.Join(restored, backup.DatabaseName))
	for name, body := range state {
		got, err := os.ReadFile(filepath.Join(restored, name))
		switch {
		case strings.HasPrefix(name, "search-cache/") || strings.HasPrefix(name, "git-mirrors/") || strings.HasPrefix(name, "work/"):
			if err == nil {
				t.Errorf("rebuildable %s was restored", name)
			}
		case err != nil || string(got) != body:
			t.Errorf("%s restored as %q, %v; want %q", name, got, err, body)
		}
	}
	if _, err := os.Lstat(filepath.Join(restored, "link")); err == nil {
		t.Error("a symbolic link was restored")
	}

	r, err := sqlite.Open(ctx, restored)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, id := range a.jobs[:a.jobsAt] {
		if _, err := r.GetJob(ctx, "docs", id); err != nil {
			t.Fatalf("job %s, acknowledged before the backup: %v", id, err)
		}
	}
	for _, id := range a.keys[:a.keysAt] {
		if _, err := r.GetKey(ctx, id); err != nil {
			t.Fatalf("key %s, acknowledged before the backup: %v", id, err)
		}
	}
	turns, err := r.RecentTurns(ctx, "thr_1", 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, turn := range turns {
		have[turn.MessageID] = true
	}
	for _, id := range a.turns[:a.tAt] {
		if !have[id] {
			t.Fatalf("turn %s, acknowledged before the backup, is not in the restored database", id)
		}
	}
}

// TestBackupTarget: a backup never replaces a file without --force, is
// never written inside the directory it copies, and leaves nothing behind
// when it fails.
func TestBackupTarget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := newDataDir(t)
	out := t.TempDir()
	archive := filepath.Join(out, "b.tar.gz")
	writeFile(t, archive, "precious")
	if _, err := backup.Create(ctx, backup.Options{DataDir: dir, To: archive}); !errors.Is(err, backup.ErrExists) {
		t.Fatalf("backup over a file = %v, want ErrExists", err)
	}
	if b, _ := os.ReadFile(archive); string(b) != "precious" {
		t.Fatal("the existing file was changed")
	}
	if _, err := backup.Create(ctx, backup.Options{DataDir: dir, To: archive, Force: true}); err != nil {
		t.Fatalf("backup --force: %v", err)
	}
	if _, err := backup.Verify(ctx, archive, backup.DefaultLimits); err != nil {
		t.Fatalf("the forced backup does not verify: %v", err)
	}
	if _, err := backup.Create(ctx, backup.Options{DataDir: dir, To: filepath.Join(dir, "b.tar.gz")}); err == nil || !strings.Contains(err.Error(), "inside the data directory") {
		t.Fatalf("backup inside the data directory = %v", err)
	}
	if _, err := backup.Create(ctx, backup.Options{DataDir: t.TempDir(), To: filepath.Join(out, "none.tar.gz")}); err == nil {
		t.Fatal("backup of a directory without a database succeeded")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := backup.Create(cancelled, backup.Options{DataDir: dir, To: filepath.Join(out, "cut.tar.gz")}); err == nil {
		t.Fatal("a cancelled backup succeeded")
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 {
		t.Fatalf("after failed backups %s holds %d entries, want only b.tar.gz", out, len(entries))
	}
}

// TestRestoreRefusals: a restore refuses a data directory a docsmith
// process holds (even with --force), refuses a non-empty one without
// --force, and with it moves what was there aside rather than delete it.
func TestRestoreRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	archive := newArchive(t)

	live := newDataDir(t)
	lock, err := datadir.Share(live)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := backup.Restore(ctx, backup.RestoreOptions{From: archive, DataDir: live, Force: true}); !errors.Is(err, datadir.ErrInUse) {
		t.Fatalf("restore over a live directory = %v, want ErrInUse", err)
	}
	must(t, lock.Release())

	full := t.TempDir()
	writeFile(t, filepath.Join(full, "notes.txt"), "mine")
	if _, err := backup.Restore(ctx, backup.RestoreOptions{From: archive, DataDir: full}); !errors.Is(err, backup.ErrNotEmpty) {
		t.Fatalf("restore over a non-empty directory = %v, want ErrNotEmpty", err)
	}
	res, err := backup.Restore(ctx, backup.RestoreOptions{From: archive, DataDir: full, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(res.Aside, "notes.txt")); err != nil || string(b) != "mine" {
		t.Fatalf("what the directory held was not kept aside: %q %v", b, err)
	}
	checkIntegrity(t, filepath.Join(full, backup.DatabaseName))
	entries, _ := os.ReadDir(full)
	for _, e := range entries {
		if strings.Contains(e.Name(), "restore-") && filepath.Join(full, e.Name()) != res.Aside {
			t.Errorf("restore left %s", e.Name())
		}
	}

	// A restore holds the directory: a server cannot start in it meanwhile.
	hold, err := datadir.Exclusive(full)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := datadir.Share(full); !errors.Is(err, datadir.ErrRestoring) {
		t.Fatalf("share during a restore = %v, want ErrRestoring", err)
	}
	must(t, hold.Release())

	// An empty directory (a mounted volume) is restored into in place.
	empty := t.TempDir()
	if _, err := backup.Restore(ctx, backup.RestoreOptions{From: archive, DataDir: empty}); err != nil {
		t.Fatal(err)
	}
	checkIntegrity(t, filepath.Join(empty, backup.DatabaseName))
}

// TestRestoreTampered: an archive whose files do not match the manifest,
// or that is cut short, is refused and nothing is written.
func TestRestoreTampered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	archive := newArchive(t)
	m, files := readArchive(t, archive)

	changed := slices.Clone(files)
	changed[len(changed)-1].body = append(slices.Clone(changed[len(changed)-1].body[:len(changed[len(changed)-1].body)-1]), 'X')
	raw, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"a byte of a file changed": build(t, mustJSON(t, m), changed),
		"cut short":                raw[:len(raw)/2],
		"not gzip":                 []byte("hello"),
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			refused(t, ctx, body)
		})
	}
}

// TestRestoreHostileEntries: names that leave the data directory, links,
// folders, entries the manifest does not list, sizes that lie and sizes
// over the limits are refused before anything is written.
func TestRestoreHostileEntries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := entry{hdr: tar.Header{Name: "docsmith.db", Typeflag: tar.TypeReg}, body: []byte("SQLite format 3\x00")}
	file := func(name, body string) entry {
		return entry{hdr: tar.Header{Name: name, Typeflag: tar.TypeReg}, body: []byte(body)}
	}
	manifestOf := func(entries ...entry) backup.Manifest {
		m := backup.Manifest{Format: backup.FormatVersion}
		for _, e := range entries {
			sum := sha256.Sum256(e.body)
			m.Files = append(m.Files, backup.File{Path: e.hdr.Name, Size: int64(len(e.body)), SHA256: hex.EncodeToString(sum[:])})
		}
		return m
	}
	simple := func(entries ...entry) []byte {
		return build(t, mustJSON(t, manifestOf(entries...)), entries)
	}
	link := entry{hdr: tar.Header{Name: "evil", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}}
	hard := entry{hdr: tar.Header{Name: "evil", Typeflag: tar.TypeLink, Linkname: "/etc/passwd"}}
	folder := entry{hdr: tar.Header{Name: "evil", Typeflag: tar.TypeDir}}
	many := manifestOf(db)
	for i := range 3 {
		many.Files = append(many.Files, backup.File{Path: fmt.Sprintf("f%d", i), SHA256: strings.Repeat("0", 64)})
	}
	huge := manifestOf(db)
	huge.Files[0].Size = 65 << 30
	overlap := manifestOf(db, file("a", "x"), file("a/b", "y"))
	cases := map[string][]byte{
		"absolute path":             simple(db, file("/etc/cron.d/evil", "x")),
		"dot dot":                   simple(db, file("../evil", "x")),
		"dot dot inside":            simple(db, file("demo-docs.git/../../evil", "x")),
		"backslash":                 simple(db, file(`..\evil`, "x")),
		"the database's log":        simple(db, file("docsmith.db-wal", "x")),
		"the lock":                  simple(db, file("docsmith.lock", "x")),
		"no database":               simple(file("a", "x")),
		"symbolic link":             build(t, mustJSON(t, manifestOf(db, link)), []entry{db, link}),
		"hard link":                 build(t, mustJSON(t, manifestOf(db, hard)), []entry{db, hard}),
		"folder entry":              build(t, mustJSON(t, manifestOf(db, folder)), []entry{db, folder}),
		"entry not in manifest":     build(t, mustJSON(t, manifestOf(db)), []entry{db, file("extra", "x")}),
		"size that lies":            build(t, mustJSON(t, manifestOf(db, file("a", "x"))), []entry{db, file("a", "xyz")}),
		"entries out of order":      build(t, mustJSON(t, manifestOf(db, file("a", "x"))), []entry{file("a", "x"), db}),
		"manifest not first":        build(t, nil, []entry{db, file(backup.ManifestName, string(mustJSON(t, manifestOf(db))))}),
		"too large":                 build(t, mustJSON(t, huge), []entry{db}),
		"file and folder":           build(t, mustJSON(t, overlap), []entry{db, file("a", "x"), file("a/b", "y")}),
		"unknown manifest field":    build(t, []byte(`{"format":1,"files":[],"exec":"rm -rf /"}`), nil),
		"another format":            build(t, []byte(`{"format":99,"files":[]}`), nil),
		"fewer entries than listed": build(t, mustJSON(t, many), []entry{db}),
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			refused(t, ctx, body)
		})
	}
	// The limits hold whatever the manifest declares.
	archive := filepath.Join(t.TempDir(), "many.tar.gz")
	entries := []entry{db, file("a", "x"), file("b", "y")}
	writeFile(t, archive, string(simple(entries...)))
	if _, err := backup.Verify(ctx, archive, backup.Limits{MaxFiles: 2, MaxTotalBytes: 1 << 20, MaxManifest: 1 << 20}); !errors.Is(err, backup.ErrBadArchive) {
		t.Fatalf("more files than the limit = %v", err)
	}
	if _, err := backup.Verify(ctx, archive, backup.DefaultLimits); err != nil {
		t.Fatalf("the same archive within the limits = %v", err)
	}
}

// refused restores body into a new directory and checks that it is
// refused as a bad archive and that nothing was written beside it.
func refused(t *testing.T, ctx context.Context, body []byte) {
	t.Helper()
	parent := t.TempDir()
	archive := filepath.Join(t.TempDir(), "b.tar.gz")
	writeFile(t, archive, string(body))
	dir := filepath.Join(parent, "data")
	if _, err := backup.Restore(ctx, backup.RestoreOptions{From: archive, DataDir: dir}); !errors.Is(err, backup.ErrBadArchive) {
		t.Fatalf("restore = %v, want ErrBadArchive", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Fatalf("a refused restore left %s", entries[0].Name())
	}
}

type entry struct {
	hdr  tar.Header
	body []byte
}

// build writes an archive of manifest (none when nil) and entries.
func build(t *testing.T, manifest []byte, entries []entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	if manifest != nil {
		entries = append([]entry{{hdr: tar.Header{Name: backup.ManifestName, Typeflag: tar.TypeReg}, body: manifest}}, entries...)
	}
	for _, e := range entries {
		hdr := e.hdr
		hdr.Mode = 0o600
		if hdr.Typeflag == tar.TypeReg && hdr.Size == 0 {
			hdr.Size = int64(len(e.body))
		}
		must(t, tw.WriteHeader(&hdr))
		if hdr.Typeflag == tar.TypeReg {
			if _, err := tw.Write(e.body); err != nil {
				t.Fatal(err)
			}
		}
	}
	must(t, tw.Close())
	must(t, gz.Close())
	return buf.Bytes()
}

// readArchive returns an archive's manifest and files.
func readArchive(t *testing.T, path string) (backup.Manifest, []entry) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var m backup.Manifest
	var entries []entry
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return m, entries
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Name == backup.ManifestName {
			must(t, json.Unmarshal(body, &m))
			continue
		}
		entries = append(entries, entry{hdr: tar.Header{Name: hdr.Name, Typeflag: tar.TypeReg}, body: body})
	}
}

// newDataDir makes a data directory with a database and a state file.
func newDataDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	st, err := sqlite.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	must(t, st.CreateOrg(context.Background(), tenant.Org{ID: "acme", CreatedAt: now()}))
	must(t, st.Close())
	writeFile(t, filepath.Join(dir, "demo-widget-key"), "svc_key\n")
	return dir
}

// newArchive makes a backup of a new data directory.
func newArchive(t *testing.T) string {
	t.Helper()
	archive := filepath.Join(t.TempDir(), "b.tar.gz")
	if _, err := backup.Create(context.Background(), backup.Options{DataDir: newDataDir(t), To: archive}); err != nil {
		t.Fatal(err)
	}
	return archive
}

func checkIntegrity(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	var res string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Fatalf("integrity_check of %s = %q, %v", path, res, err)
	}
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(path), 0o700))
	must(t, os.WriteFile(path, []byte(body), 0o600))
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
