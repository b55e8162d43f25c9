package mdx

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// corpusDir finds shared/corpora by walking up from the package directory.
func corpusDir(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		c := filepath.Join(dir, "shared", "corpora")
		if st, err := os.Stat(c); err == nil && st.IsDir() {
			return c
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("no shared/corpora directory above the package")
		}
		dir = parent
	}
}

type corpusPage struct {
	corpus string
	path   string // relative to the corpus
	body   []byte
	offset int // lines of front matter removed
}

// corpusPages reads every .mdx and .md page of every corpus, front matter removed.
func corpusPages(t testing.TB) []corpusPage {
	t.Helper()
	root := corpusDir(t)
	var pages []corpusPage
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || (!strings.HasSuffix(path, ".mdx") && !strings.HasSuffix(path, ".md")) {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		corpus, rest, _ := strings.Cut(filepath.ToSlash(rel), "/")
		if !strings.Contains(rest, "/") && (strings.EqualFold(rest, "README.md") || rest == "PROVENANCE.md" || rest == "LICENSE.md") {
			return nil // the corpus's own notes, not a docs page
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		body, offset := stripFrontMatter(raw)
		pages = append(pages, corpusPage{corpus: corpus, path: rest, body: body, offset: offset})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Skip("the corpora hold no pages")
	}
	return pages
}

// stripFrontMatter removes a leading YAML front matter block, returning the
// body and the number of lines removed.
func stripFrontMatter(b []byte) ([]byte, int) {
	if !bytes.HasPrefix(b, []byte("---\n")) && !bytes.HasPrefix(b, []byte("---\r\n")) {
		return b, 0
	}
	lines := 1
	i := bytes.IndexByte(b, '\n') + 1
	for i < len(b) {
		e := bytes.IndexByte(b[i:], '\n')
		if e < 0 {
			e = len(b) - i
		}
		line := bytes.TrimRight(b[i:i+e], " \t\r")
		lines++
		i += e + 1
		if string(line) == "---" {
			return b[min(i, len(b)):], lines
		}
	}
	return b, 0
}

var proseLine = regexp.MustCompile(`(?m)^[\p{L}]`)

// hasProse reports whether a page has a line of text outside code fences.
func hasProse(body []byte) bool {
	fence := ""
	for line := range strings.SplitSeq(string(body), "\n") {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		if strings.HasPrefix(line, "import ") || strings.HasPrefix(line, "export ") {
			continue
		}
		if proseLine.MatchString(line) {
			return true
		}
	}
	return false
}

func TestCorpus(t *testing.T) {
	t.Parallel()
	pages := corpusPages(t)
	type tally struct{ pages, withProblems, problems int }
	tallies := map[string]*tally{}
	for _, p := range pages {
		tl := tallies[p.corpus]
		if tl == nil {
			tl = &tally{}
			tallies[p.corpus] = tl
		}
		tl.pages++
		probs := Check(p.body)
		if len(probs) > 0 {
			tl.withProblems++
			tl.problems += len(probs)
			for _, pr := range probs {
				t.Errorf("%s/%s:%d: %s", p.corpus, p.path, pr.Line+p.offset, pr.Message)
			}
		}
		secs := Sections(p.body, nil)
		if len(secs) == 0 || secs[0].Level != 0 {
			t.Errorf("%s/%s: Sections does not start with the text before the first heading", p.corpus, p.path)
		}
		for _, l := range Links(p.body) {
			if l.Target == "" && l.Line == 0 {
				t.Errorf("%s/%s: empty link", p.corpus, p.path)
			}
		}
		text := Text(p.body)
		if hasProse(p.body) && strings.TrimSpace(text) == "" {
			t.Errorf("%s/%s: page has prose but Text is empty", p.corpus, p.path)
		}
		if utf8.Valid(p.body) && !utf8.ValidString(text) {
			t.Errorf("%s/%s: Text is not valid UTF-8", p.corpus, p.path)
		}
	}
	for name, tl := range tallies {
		t.Logf("corpus %s: %d pages, %d with problems, %d problems", name, tl.pages, tl.withProblems, tl.problems)
	}
}

// closingTagLine matches a component's closing tag alone on its line. Lower
// case tags are left out: in the corpora they are mostly JSX inside
// JavaScript (export blocks, icon={<svg>…</svg>} props), which MDX hands to
// acorn and Check does not parse.
var closingTagLine = regexp.MustCompile(`^\s*</[A-Z][\w.]*>\s*$`)

// mutations returns copies of a page with one piece of structure removed:
// the first component closing tag that stands on its own line, and the last
// closing code fence. Each must make Check report a problem.
func mutations(body []byte) map[string][]byte {
	ls := strings.Split(string(body), "\n")
	fence, tagLine, fenceLine := "", -1, -1
	for i, line := range ls {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
				fence, fenceLine = "", i
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			n := 0
			for n < len(trimmed) && trimmed[n] == trimmed[0] {
				n++
			}
			fence = trimmed[:n]
			continue
		}
		if tagLine < 0 && closingTagLine.MatchString(line) {
			tagLine = i
		}
	}
	out := map[string][]byte{}
	drop := func(k int) []byte {
		return []byte(strings.Join(append(slices.Clone(ls[:k]), ls[k+1:]...), "\n"))
	}
	if tagLine >= 0 {
		out["closing tag on line "+strconv.Itoa(tagLine+1)+" removed"] = drop(tagLine)
	}
	if fenceLine >= 0 {
		out["closing fence on line "+strconv.Itoa(fenceLine+1)+" removed"] = drop(fenceLine)
	}
	return out
}

func TestCorpusMutationsAreFound(t *testing.T) {
	t.Parallel()
	tried := 0
	for _, p := range corpusPages(t) {
		if len(Check(p.body)) > 0 {
			continue // TestCorpus reports it
		}
		for what, body := range mutations(p.body) {
			tried++
			if len(Check(body)) == 0 {
				t.Errorf("%s/%s: %s, but Check found nothing", p.corpus, p.path, what)
			}
		}
	}
	t.Logf("%d broken copies of corpus pages checked", tried)
}

func BenchmarkSections(b *testing.B) {
	pages := corpusPages(b)
	var size int64
	for _, p := range pages {
		size += int64(len(p.body))
	}
	b.SetBytes(size / int64(len(pages)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		p := pages[i%len(pages)]
		Sections(p.body, nil)
	}
}
