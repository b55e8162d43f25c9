package engine

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math"
	"slices"
)

// A snapshot is a domain's index in memory written to a file, so that a
// process starting again loads it without reading and analysing every
// chunk again. It is only ever a cache of what the store holds: a snapshot
// is used only when the pages it was built from are the pages the store
// has now, each with the same content hash (PageHash covers every field of
// a page's chunks, and the chunker's version), and when it was written by
// the same analysis (snapshotFormat, and the tokens of a probe text). Any
// other file, a damaged one included, is ignored and the index is loaded
// from the store.

// snapshotFormat is the layout of a snapshot file and of the index it
// holds; change it with either. 2: chunks carry their Markdown and its
// overlap. 3: words joined by punctuation are indexed joined too. 4: the
// related words mined from the chunks.
const snapshotFormat = 4

var snapshotMagic = [8]byte{'d', 's', 'm', 'i', 'd', 'x', '\n', 0}

// SnapshotHeader is what a snapshot says it holds, read before the rest.
type SnapshotHeader struct {
	Analysis [32]byte // AnalysisFingerprint
	Pages    [32]byte // PagesDigest of the pages it was built from
	Version  int64    // the index version it was built at
}

const SnapshotHeaderSize = 8 + 4 + 32 + 32 + 8

// AnalysisFingerprint is a digest of the tokens the analysis gives a probe
// text (plain words and stems, camel case, accents, CJK, digits): a
// snapshot written by another analysis holds other tokens.
func AnalysisFingerprint() [32]byte {
	const probe = "Configuring the randomUUID HTTPServer's libraries: naïve café crème, 侧边栏导航, カタカナ, 한국어, " +
		"getID2 and JUnit in v1.2.3 — running, runs, ran; 0AAAa x² ½; --dry-run api/v1/users team_space"
	h := sha256.New()
	_, _ = fmt.Fprintf(h, "%d\n", snapshotFormat)
	indexTokens(probe, func(raw string) {
		_, _ = io.WriteString(h, raw+"\x00"+stemToken(raw)+"\n")
	})
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// PagesDigest digests the pages and their content hashes, as the store's
// PageHashes gives them.
func PagesDigest(hashes map[string]string) [32]byte {
	paths := make([]string, 0, len(hashes))
	for p := range hashes {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	h := sha256.New()
	for _, p := range paths {
		_, _ = io.WriteString(h, p+"\x00"+hashes[p]+"\n")
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// PageHashes is a store's PageHashes as the chunks of an index say it: each page's
// least hash (the store's MIN).
func PageHashes(chunks []Chunk) map[string]string {
	out := map[string]string{}
	for i := range chunks {
		c := &chunks[i]
		if h, ok := out[c.PagePath]; !ok || c.PageHash < h {
			out[c.PagePath] = c.PageHash
		}
	}
	return out
}

// SnapshotHeader is the header of di's snapshot, written by the analysis
// analysis.
func (di *Index) SnapshotHeader(analysis [32]byte) SnapshotHeader {
	return SnapshotHeader{Analysis: analysis, Pages: PagesDigest(PageHashes(di.chunks)), Version: di.version}
}

// EncodeSnapshot writes the snapshot of di, with header h, to w: the
// header, the index, then a CRC-32C of both.
func EncodeSnapshot(w io.Writer, h SnapshotHeader, di *Index) error {
	crc := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	sw := &snapWriter{w: bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<20)}
	sw.header(h)
	sw.index(di)
	if sw.err == nil {
		sw.err = sw.w.Flush()
	}
	if sw.err != nil {
		return sw.err
	}
	return binary.Write(w, binary.LittleEndian, crc.Sum32())
}

// DecodeSnapshot checks a whole snapshot and returns the index it holds.
func DecodeSnapshot(data []byte) (SnapshotHeader, *Index, error) {
	if len(data) < SnapshotHeaderSize+4 {
		return SnapshotHeader{}, nil, ErrSnapshotDamaged
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)) != sum {
		return SnapshotHeader{}, nil, ErrSnapshotDamaged
	}
	r := &snapReader{b: body}
	h := r.header()
	di := r.index(h.Version)
	if r.err == nil && r.at != len(r.b) {
		r.err = ErrSnapshotDamaged
	}
	if r.err != nil {
		return SnapshotHeader{}, nil, r.err
	}
	return h, di, nil
}

var ErrSnapshotDamaged = errors.New("the index snapshot is damaged")

// The layout, all little endian: the header (magic, format, analysis,
// pages, version); the strings of the chunks and stems as one blob; the
// chunks, each string as an offset and length into the blob; each chunk's
// length; the stems in order, each with its counts; then every posting's
// chunks, weighted frequencies, offsets and positions, stem after stem;
// the related words; the index's size estimate; last, a CRC-32C of all that.

type snapWriter struct {
	w   *bufio.Writer
	err error
	// refs are the strings' offsets and lengths into the blob, in order.
	refs []uint32
	buf  [8]byte
}

func (w *snapWriter) bytes(p []byte) {
	if w.err == nil {
		_, w.err = w.w.Write(p)
	}
}

func (w *snapWriter) u32(v uint32) {
	binary.LittleEndian.PutUint32(w.buf[:4], v)
	w.bytes(w.buf[:4])
}

func (w *snapWriter) u64(v uint64) {
	binary.LittleEndian.PutUint64(w.buf[:8], v)
	w.bytes(w.buf[:8])
}

func (w *snapWriter) header(h SnapshotHeader) {
	w.bytes(snapshotMagic[:])
	w.u32(snapshotFormat)
	w.bytes(h.Analysis[:])
	w.bytes(h.Pages[:])
	w.u64(uint64(h.Version))
}

func (w *snapWriter) string(s string) {
	if w.err == nil {
		_, w.err = w.w.WriteString(s)
	}
}

// chunkStrings is how many strings of a chunk the blob holds (see
// blobStrings).
const chunkStrings = 12

// blobStrings calls fn with each string of the blob, in order: every
// chunk's, then the stems'.
func blobStrings(di *Index, fn func(string)) {
	for i := range di.chunks {
		c := &di.chunks[i]
		for _, s := range [...]string{c.ID, c.PagePath, c.Anchor, c.URL, c.PageTitle, c.Heading, c.Text, c.Markdown, c.Version, c.Language, c.PageHash, c.Keywords} {
			fn(s)
		}
		for _, s := range c.Breadcrumb {
			fn(s)
		}
		for _, s := range c.Groups {
			fn(s)
		}
	}
	for _, st := range di.sorted {
		fn(st)
	}
}

func (w *snapWriter) index(di *Index) {
	// The blob first: its length, counted with the strings' references,
	// then the strings themselves, written as they are.
	var size uint64
	blobStrings(di, func(s string) {
		w.refs = append(w.refs, uint32(size), uint32(len(s)))
		size += uint64(len(s))
	})
	w.u64(size)
	blobStrings(di, w.string)
	refs := w.refs
	ref := func() {
		w.u32(refs[0])
		w.u32(refs[1])
		refs = refs[2:]
	}
	w.u32(uint32(len(di.chunks)))
	for i := range di.chunks {
		c := &di.chunks[i]
		for range chunkStrings {
			ref()
		}
		w.u64(uint64(int64(c.Seq)))
		w.u64(uint64(int64(c.Overlap)))
		w.u64(uint64(int64(c.MarkdownOverlap)))
		w.u64(math.Float64bits(c.Boost))
		for _, list := range [...][]string{c.Breadcrumb, c.Groups} {
			// A nil and an empty list differ to a reader (in JSON).
			if list == nil {
				w.u32(math.MaxUint32)
			} else {
				w.u32(uint32(len(list)))
			}
			for range list {
				ref()
			}
		}
		w.u32(math.Float32bits(di.length[i]))
	}
	w.u32(uint32(len(di.sorted)))
	var docs, pos uint64
	for _, st := range di.sorted {
		pl := di.terms[st]
		ref()
		w.u32(uint32(len(pl.docs)))
		w.u32(uint32(len(pl.pos)))
		docs += uint64(len(pl.docs))
		pos += uint64(len(pl.pos))
	}
	w.u64(docs)
	w.u64(pos)
	for _, st := range di.sorted {
		pl := di.terms[st]
		for _, d := range pl.docs {
			w.u32(uint32(d))
		}
		for _, f := range pl.wtf {
			w.u32(math.Float32bits(f))
		}
		for _, o := range pl.off {
			w.u32(o)
		}
		for _, p := range pl.pos {
			w.u32(p)
		}
	}
	w.related(di.related)
	w.u64(uint64(di.bytes))
}

// related writes the related words, word by word in order, each with its
// relations: a string is its length then its bytes.
func (w *snapWriter) related(rel map[string][]relatedTerm) {
	words := slices.Sorted(maps.Keys(rel))
	w.u32(uint32(len(words)))
	str := func(s string) {
		w.u32(uint32(len(s)))
		w.string(s)
	}
	for _, word := range words {
		str(word)
		w.u32(uint32(len(rel[word])))
		for _, r := range rel[word] {
			str(r.token)
			w.u32(math.Float32bits(r.strength))
		}
	}
}

// related reads what snapWriter.related wrote.
func (r *snapReader) related() map[string][]relatedTerm {
	str := func() string {
		n := r.count(1)
		return string(r.take(n))
	}
	words := r.count(4 + 4)
	if words == 0 {
		return nil
	}
	rel := make(map[string][]relatedTerm, words)
	for range words {
		word := str()
		n := r.count(4 + 4)
		if n > maxRelated {
			r.err = ErrSnapshotDamaged
		}
		if r.err != nil {
			return nil
		}
		rs := make([]relatedTerm, n)
		for k := range rs {
			rs[k].token = str()
			rs[k].strength = math.Float32frombits(r.u32())
		}
		rel[word] = rs
	}
	return rel
}

// snapReader decodes a snapshot, every count and offset checked against
// what is there: a damaged file is an error, never a panic or a huge
// allocation.
type snapReader struct {
	b   []byte
	at  int
	err error
}

func (r *snapReader) take(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b)-r.at {
		r.err = ErrSnapshotDamaged
		return nil
	}
	p := r.b[r.at : r.at+n]
	r.at += n
	return p
}

func (r *snapReader) u32() uint32 {
	if p := r.take(4); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}

func (r *snapReader) u64() uint64 {
	if p := r.take(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

// count reads a count of items of size bytes each that must fit in what is
// left.
func (r *snapReader) count(size int) int {
	n := int(r.u32())
	if r.err == nil && n > (len(r.b)-r.at)/size {
		r.err = ErrSnapshotDamaged
		return 0
	}
	return n
}

func (r *snapReader) header() SnapshotHeader {
	var h SnapshotHeader
	if m := r.take(8); m == nil || [8]byte(m) != snapshotMagic {
		r.err = ErrSnapshotDamaged
		return h
	}
	if r.u32() != snapshotFormat {
		r.err = errors.New("the index snapshot has another format")
		return h
	}
	if p := r.take(32); p != nil {
		h.Analysis = [32]byte(p)
	}
	if p := r.take(32); p != nil {
		h.Pages = [32]byte(p)
	}
	h.Version = int64(r.u64())
	return h
}

func (r *snapReader) index(version int64) *Index {
	n := r.u64()
	if r.err != nil || n > uint64(len(r.b)-r.at) {
		r.err = ErrSnapshotDamaged
		return nil
	}
	blob := string(r.take(int(n)))
	str := func() string {
		off, l := r.u32(), r.u32()
		if r.err != nil || uint64(off)+uint64(l) > uint64(len(blob)) {
			r.err = ErrSnapshotDamaged
			return ""
		}
		return blob[off : off+l]
	}
	// A chunk takes at least its strings' references, four numbers, two
	// counts and its length.
	nChunks := r.count(chunkStrings*8 + 4*8 + 3*4)
	di := &Index{version: version, chunks: make([]Chunk, nChunks), length: make([]float32, nChunks),
		boost: make([]float32, nChunks), page: make([]int32, nChunks), pages: map[string]int32{}, maxBoost: 1}
	var total float64
	for i := range nChunks {
		c := &di.chunks[i]
		for _, s := range [...]*string{&c.ID, &c.PagePath, &c.Anchor, &c.URL, &c.PageTitle, &c.Heading, &c.Text, &c.Markdown, &c.Version, &c.Language, &c.PageHash, &c.Keywords} {
			*s = str()
		}
		c.Seq = int(int64(r.u64()))
		c.Overlap = int(int64(r.u64()))
		c.MarkdownOverlap = int(int64(r.u64()))
		c.Boost = math.Float64frombits(r.u64())
		for _, list := range [...]*[]string{&c.Breadcrumb, &c.Groups} {
			n := r.u32()
			if n == math.MaxUint32 {
				continue
			}
			if r.err == nil && int(n) > (len(r.b)-r.at)/8 {
				r.err = ErrSnapshotDamaged
			}
			if r.err != nil {
				return nil
			}
			*list = make([]string, n)
			for k := range *list {
				(*list)[k] = str()
			}
		}
		di.length[i] = math.Float32frombits(r.u32())
		if r.err != nil {
			return nil
		}
		total += float64(di.length[i])
		di.placeChunk(i)
	}
	if nChunks > 0 {
		di.avgLen = total / float64(nChunks)
	}
	nTerms := r.count(8 + 8)
	if nTerms > 0 {
		di.sorted = make([]string, nTerms)
	}
	nDocs, nPos := make([]uint32, nTerms), make([]uint32, nTerms)
	var sumDocs, sumPos uint64
	for t := range nTerms {
		di.sorted[t] = str()
		nDocs[t], nPos[t] = r.u32(), r.u32()
		sumDocs += uint64(nDocs[t])
		sumPos += uint64(nPos[t])
	}
	if r.u64() != sumDocs || r.u64() != sumPos || r.err != nil ||
		(3*sumDocs+uint64(nTerms)+sumPos)*4 > uint64(len(r.b)-r.at) {
		r.err = ErrSnapshotDamaged
		return nil
	}
	for t := 1; t < nTerms; t++ {
		if di.sorted[t-1] >= di.sorted[t] {
			r.err = ErrSnapshotDamaged
			return nil
		}
	}
	allDocs := make([]int32, sumDocs)
	allWTF := make([]float32, sumDocs)
	allOff := make([]uint32, sumDocs+uint64(nTerms))
	allPos := make([]uint32, sumPos)
	lists := make([]postings, nTerms)
	di.terms = make(map[string]*postings, nTerms)
	var docAt, posAt, offAt uint64
	for t := range nTerms {
		nd, np := uint64(nDocs[t]), uint64(nPos[t])
		pl := &lists[t]
		pl.docs = allDocs[docAt : docAt+nd : docAt+nd]
		pl.wtf = allWTF[docAt : docAt+nd : docAt+nd]
		pl.off = allOff[offAt : offAt+nd+1 : offAt+nd+1]
		pl.pos = allPos[posAt : posAt+np : posAt+np]
		for k := range pl.docs {
			d := r.u32()
			if d >= uint32(nChunks) || k > 0 && int32(d) <= pl.docs[k-1] {
				r.err = ErrSnapshotDamaged
			}
			pl.docs[k] = int32(d)
		}
		for k := range pl.wtf {
			pl.wtf[k] = math.Float32frombits(r.u32())
		}
		for k := range pl.off {
			o := r.u32()
			if uint64(o) > np || k > 0 && o < pl.off[k-1] {
				r.err = ErrSnapshotDamaged
			}
			pl.off[k] = o
		}
		for k := range pl.pos {
			pl.pos[k] = r.u32()
		}
		if r.err != nil {
			return nil
		}
		di.terms[di.sorted[t]] = pl
		docAt, offAt, posAt = docAt+nd, offAt+nd+1, posAt+np
	}
	di.related = r.related()
	di.bytes = int64(r.u64())
	if r.err != nil {
		return nil
	}
	di.prepare()
	return di
}

// DecodeSnapshotHeader reads what a snapshot says it holds from its first
// SnapshotHeaderSize bytes.
func DecodeSnapshotHeader(b []byte) (SnapshotHeader, error) {
	r := &snapReader{b: b}
	h := r.header()
	return h, r.err
}
