package engine

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// snapshotChunks are chunks with every field set some of the time: nil and
// empty lists, groups, boosts, several chunks a page, mixed scripts.
func snapshotChunks(n int) []Chunk {
	rng := rand.New(rand.NewPCG(11, 12))
	vocab := []string{"kettle", "Kettles", "water", "randomUUID", "café", "侧边栏", "x²", "getID2", "timer"}
	var chunks []Chunk
	for i := range n {
		var words []string
		for range 1 + rng.IntN(30) {
			words = append(words, vocab[rng.IntN(len(vocab))])
		}
		page := fmt.Sprintf("p%03d", i/3)
		c := Chunk{
			ID: fmt.Sprintf("%s#%d", page, i), PagePath: page, Seq: i % 3, Anchor: fmt.Sprint("a", i%3),
			URL: "https://docs.example/" + page, PageTitle: "Title " + page, Heading: vocab[i%len(vocab)],
			Text: strings.Join(words, " "), Keywords: vocab[(i/3)%len(vocab)], PageHash: fmt.Sprintf("h%03d", i/3),
			Overlap: i % 7, Boost: float64(i % 4),
		}
		switch i % 5 {
		case 0:
			c.Breadcrumb = []string{"Guides", c.PageTitle, c.Heading}
		case 1:
			c.Breadcrumb = []string{}
			c.Groups = []string{}
		case 2:
			c.Groups = []string{"staff", "beta"}
			c.Version, c.Language = "v2", "en"
		case 3:
			c.Markdown, c.MarkdownOverlap = "```yaml\n"+c.Text+"\n  indented: true\n```\n", i%9
		}
		chunks = append(chunks, c)
	}
	return chunks
}

// encodeSnapshot is di's snapshot, as a Memory writes it.
func encodeSnapshot(t testing.TB, di *Index, analysis [32]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := EncodeSnapshot(&buf, di.SnapshotHeader(analysis), di); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestSnapshotRoundTrip: an index read back from its snapshot is the index
// written, field for field, and says what it was built from.
func TestSnapshotRoundTrip(t *testing.T) {
	t.Parallel()
	analysis := AnalysisFingerprint()
	for _, n := range []int{0, 1, 3*buildBatch + 5} {
		chunks := snapshotChunks(n)
		di := Build(chunks, 42)
		data := encodeSnapshot(t, di, analysis)
		h, got, err := DecodeSnapshot(data)
		if err != nil {
			t.Fatalf("%d chunks: %v", n, err)
		}
		if !reflect.DeepEqual(got, di) {
			t.Fatalf("%d chunks: the index read back differs from the one written", n)
		}
		hh, err := DecodeSnapshotHeader(data[:SnapshotHeaderSize])
		if err != nil || hh != h || h.Version != 42 || h.Analysis != analysis || h.Pages != PagesDigest(PageHashes(chunks)) {
			t.Fatalf("%d chunks: header = %+v, %v", n, hh, err)
		}
	}
}

// TestSnapshotDamaged: a snapshot cut short or with a byte changed anywhere
// is refused, never read.
func TestSnapshotDamaged(t *testing.T) {
	t.Parallel()
	good := encodeSnapshot(t, Build(snapshotChunks(40), 1), AnalysisFingerprint())
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		data := append([]byte(nil), good...)
		if i%2 == 0 {
			data = data[:rng.IntN(len(data))]
		} else {
			data[rng.IntN(len(data))] ^= byte(1 + rng.IntN(255))
		}
		if _, _, err := DecodeSnapshot(data); err == nil {
			t.Fatalf("damage %d was read as a snapshot", i)
		}
	}
}

// FuzzReadSnapshot: whatever a snapshot holds, with a checksum that matches,
// reading it never panics and gives an index or an error.
func FuzzReadSnapshot(f *testing.F) {
	seed := encodeSnapshot(f, Build(snapshotChunks(7), 1), AnalysisFingerprint())
	f.Add(seed[:len(seed)-4])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, body []byte) {
		data := binary.LittleEndian.AppendUint32(append([]byte(nil), body...), crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
		_, di, err := DecodeSnapshot(data)
		if err == nil && di == nil {
			t.Fatal("no index and no error")
		}
		if err == nil {
			// What was read can be searched.
			di.Search(Query{Terms: ParseQuery("kettle water", "en"), Limit: 5})
		}
	})
}

// TestSnapshotOfAnotherFormat: a whole snapshot that says it is of the
// format before (no Markdown in its chunks) is refused, not misread.
func TestSnapshotOfAnotherFormat(t *testing.T) {
	t.Parallel()
	data := encodeSnapshot(t, Build(snapshotChunks(10), 1), AnalysisFingerprint())
	binary.LittleEndian.PutUint32(data[len(snapshotMagic):], snapshotFormat-1)
	body := data[:len(data)-4]
	binary.LittleEndian.PutUint32(data[len(data)-4:], crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
	if _, _, err := DecodeSnapshot(data); err == nil {
		t.Errorf("a snapshot of format %d was read", snapshotFormat-1)
	}
	// The same bytes with this format's number pass the checksum: only
	// the format refused them.
	binary.LittleEndian.PutUint32(data[len(snapshotMagic):], snapshotFormat)
	binary.LittleEndian.PutUint32(data[len(data)-4:], crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
	if _, _, err := DecodeSnapshot(data); err != nil {
		t.Errorf("the snapshot with its own format: %v", err)
	}
}
