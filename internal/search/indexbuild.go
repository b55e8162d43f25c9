package search

import (
	"runtime"
	"slices"
	"sync"
)

// Building a domain's index in memory. Most of a load is analysis (cutting
// the fields into tokens and stemming them), which needs nothing but the
// chunk at hand: an indexBuilder takes the chunks as the store reads them
// and hands them in batches to a few goroutines that analyse them while
// the rest is still being read. Each goroutine numbers the stems it meets
// on its own; finish renumbers them for the whole domain and lays out the
// postings in a few shared arrays, so a load allocates little and leaves
// the garbage collector few pointers.

// buildBatch is how many chunks go to an analysing goroutine at a time:
// enough to make the hand-over cheap, few enough to keep both cores busy
// while the store is read.
const buildBatch = 64

// indexBuilder builds a domainIndex from chunks given in index order. add
// is called from one goroutine; then finish, or abort.
type indexBuilder struct {
	batch   []Chunk
	batches []*tokenBatch
	work    chan *tokenBatch
	wg      sync.WaitGroup
	tzs     []*tokenizer
}

// tokenBatch is a run of consecutive chunks and their tokens.
type tokenBatch struct {
	chunks []Chunk
	// stream holds every field's token numbers, in the numbering of tz;
	// fieldLen their counts, numFields per chunk.
	stream   []int32
	fieldLen []uint32
	tz       *tokenizer
}

// tokenizer is one analysing goroutine's numbering of stems.
type tokenizer struct {
	// ids numbers each raw token (as written) by its stem.
	ids    map[string]int32
	byStem map[string]int32
	stems  []string
	// The title's and keywords' text and tokens of the chunk before: the
	// chunks of a page repeat them.
	prevText [numFields]string
	prevIDs  [numFields][]int32
}

// newIndexBuilder starts an indexBuilder with one analysing goroutine per
// processor the runtime uses.
func newIndexBuilder() *indexBuilder {
	return newIndexBuilderN(runtime.GOMAXPROCS(0))
}

func newIndexBuilderN(n int) *indexBuilder {
	n = max(1, n)
	b := &indexBuilder{work: make(chan *tokenBatch, 2*n), tzs: make([]*tokenizer, n)}
	for i := range b.tzs {
		tz := &tokenizer{ids: map[string]int32{}, byStem: map[string]int32{}}
		b.tzs[i] = tz
		b.wg.Go(func() {
			for tb := range b.work {
				tz.tokenize(tb)
			}
		})
	}
	return b
}

// add takes the next chunk.
func (b *indexBuilder) add(c Chunk) error {
	if b.batch == nil {
		b.batch = make([]Chunk, 0, buildBatch)
	}
	b.batch = append(b.batch, c)
	if len(b.batch) == buildBatch {
		b.send()
	}
	return nil
}

func (b *indexBuilder) send() {
	tb := &tokenBatch{chunks: b.batch}
	b.batch = nil
	b.batches = append(b.batches, tb)
	b.work <- tb
}

// wait stops the analysing goroutines once they are done.
func (b *indexBuilder) wait() {
	if len(b.batch) > 0 {
		b.send()
	}
	close(b.work)
	b.wg.Wait()
}

// abort drops what was added.
func (b *indexBuilder) abort() {
	b.batch = nil
	b.wait()
}

// buildDomainIndex indexes chunks (in index order).
func buildDomainIndex(chunks []Chunk, version int64) *domainIndex {
	b := newIndexBuilder()
	for _, c := range chunks {
		_ = b.add(c)
	}
	return b.finish(version)
}

// tokenize analyses a batch's fields into token numbers.
func (tz *tokenizer) tokenize(tb *tokenBatch) {
	tb.tz = tz
	// A docs site's text has about a token for every six bytes; room for
	// one in five mostly saves growing the stream.
	size := 0
	for i := range tb.chunks {
		c := &tb.chunks[i]
		size += len(c.PageTitle) + len(c.Keywords) + len(c.Text)
		for _, h := range c.Breadcrumb {
			size += len(h) + 1
		}
	}
	tb.stream = make([]int32, 0, size/5)
	tb.fieldLen = make([]uint32, 0, numFields*len(tb.chunks))
	for i := range tb.chunks {
		f := rawFields(tb.chunks[i])
		for fi, text := range [numFields]string{f.Title, f.Headings, f.Keywords, f.Body} {
			start := len(tb.stream)
			if fi == 0 || fi == 2 {
				if text != tz.prevText[fi] {
					tz.prevText[fi], tz.prevIDs[fi] = text, tz.prevIDs[fi][:0]
					analyzedTokens(text, func(raw string) { tz.prevIDs[fi] = append(tz.prevIDs[fi], tz.id(raw)) })
				}
				tb.stream = append(tb.stream, tz.prevIDs[fi]...)
			} else {
				analyzedTokens(text, func(raw string) { tb.stream = append(tb.stream, tz.id(raw)) })
			}
			tb.fieldLen = append(tb.fieldLen, uint32(len(tb.stream)-start))
		}
	}
}

// id numbers a raw token by its stem.
func (tz *tokenizer) id(raw string) int32 {
	if n, ok := tz.ids[raw]; ok {
		return n
	}
	st := stemToken(raw)
	n, ok := tz.byStem[st]
	if !ok {
		n = int32(len(tz.stems))
		tz.byStem[st] = n
		tz.stems = append(tz.stems, st)
	}
	// No copy of raw: it is part of a field's text, which the key keeps
	// alive no longer than the tokenizer.
	tz.ids[raw] = n
	return n
}

// finish waits for the analysis and builds the index: the stems of every
// goroutine numbered for the domain, each token's chunks and positions
// counted, then the postings filled in shared arrays.
func (b *indexBuilder) finish(version int64) *domainIndex {
	b.wait()
	n := 0
	for _, tb := range b.batches {
		n += len(tb.chunks)
	}
	di := &domainIndex{version: version, chunks: make([]Chunk, 0, n), length: make([]float32, n), boost: make([]float32, n),
		page: make([]int32, n), pages: map[string]int32{}, maxBoost: 1}
	for _, tb := range b.batches {
		di.chunks = append(di.chunks, tb.chunks...)
	}
	// The domain's numbering of stems, and each goroutine's into it: the
	// first goroutine's numbering, which it starts, with the others' stems
	// it lacks added in turn.
	first := b.tzs[0]
	stems, byStem := first.stems, first.byStem
	remap := map[*tokenizer][]int32{}
	r := make([]int32, len(stems))
	for i := range r {
		r[i] = int32(i)
	}
	remap[first] = r
	for _, tz := range b.tzs[1:] {
		r := make([]int32, len(tz.stems))
		for i, st := range tz.stems {
			g, ok := byStem[st]
			if !ok {
				g = int32(len(stems))
				byStem[st] = g
				stems = append(stems, st)
			}
			r[i] = g
		}
		remap[tz] = r
	}
	// Per token: chunks and positions counted, and the chunk last counted.
	nDocs := make([]uint32, len(stems))
	nPos := make([]uint32, len(stems))
	last := make([]int32, len(stems))
	for t := range last {
		last[t] = -1
	}
	d := int32(0)
	for _, tb := range b.batches {
		r := remap[tb.tz]
		at := 0
		for ci := range tb.chunks {
			c := &tb.chunks[ci]
			pg, ok := di.pages[c.PagePath]
			if !ok {
				pg = int32(len(di.pages))
				di.pages[c.PagePath] = pg
			}
			di.page[d] = pg
			for fi := range numFields {
				k := int(tb.fieldLen[ci*numFields+fi])
				for p, t := range tb.stream[at : at+k] {
					t = r[t]
					tb.stream[at+p] = t
					if last[t] != d {
						last[t] = d
						nDocs[t]++
					}
					if p <= posMask {
						nPos[t]++
					}
				}
				at += k
			}
			bst := RankBoost(c.Boost)
			di.boost[d] = float32(bst)
			di.maxBoost = max(di.maxBoost, bst)
			d++
		}
	}
	// The postings of token t are slices of shared arrays.
	var sumDocs, sumPos uint32
	for t := range stems {
		sumDocs += nDocs[t]
		sumPos += nPos[t]
	}
	allDocs := make([]int32, sumDocs)
	allWTF := make([]float32, sumDocs)
	allOff := make([]uint32, int(sumDocs)+len(stems))
	allPos := make([]uint32, sumPos)
	lists := make([]postings, len(stems))
	di.terms = make(map[string]*postings, len(stems))
	var docAt, posAt uint32
	var size int64
	for t, st := range stems {
		pl := &lists[t]
		pl.docs = allDocs[docAt : docAt : docAt+nDocs[t]]
		pl.wtf = allWTF[docAt : docAt : docAt+nDocs[t]]
		offAt := docAt + uint32(t)
		pl.off = allOff[offAt : offAt : offAt+nDocs[t]+1]
		pl.pos = allPos[posAt : posAt : posAt+nPos[t]]
		docAt += nDocs[t]
		posAt += nPos[t]
		di.terms[st] = pl
		last[t] = -1
		size += int64(len(st)) + 64 + int64(nDocs[t])*12 + int64(nPos[t])*4
	}
	var total float64
	d = 0
	for _, tb := range b.batches {
		at := 0
		for ci := range tb.chunks {
			n := uint32(0)
			for fi := range numFields {
				w := fieldWeights[fi]
				k := int(tb.fieldLen[ci*numFields+fi])
				for p, t := range tb.stream[at : at+k] {
					pl := &lists[t]
					if last[t] != d {
						last[t] = d
						pl.docs = append(pl.docs, d)
						pl.wtf = append(pl.wtf, 0)
						pl.off = append(pl.off, uint32(len(pl.pos)))
					}
					pl.wtf[len(pl.wtf)-1] += w
					if p <= posMask {
						pl.pos = append(pl.pos, uint32(fi)<<fieldShift|uint32(p))
					}
				}
				at += k
				n += uint32(k)
			}
			di.length[d] = float32(n)
			total += float64(n)
			d++
		}
		tb.stream, tb.fieldLen = nil, nil
	}
	for t := range lists {
		lists[t].off = append(lists[t].off, uint32(len(lists[t].pos)))
	}
	if len(di.chunks) > 0 {
		di.avgLen = total / float64(len(di.chunks))
	}
	// The stems are not needed in their numbering any more.
	di.sorted = stems
	slices.Sort(di.sorted)
	di.prepare()
	// What prepare adds: a norm and a seq a chunk, a postings pointer a
	// token.
	size += int64(len(di.chunks))*16 + int64(len(stems))*8
	for _, c := range di.chunks {
		size += int64(len(c.ID)+len(c.PagePath)+len(c.Anchor)+len(c.URL)+len(c.PageTitle)+len(c.Heading)+
			len(c.Text)+len(c.Version)+len(c.Language)+len(c.PageHash)+len(c.Keywords)) + 256
		for _, b := range c.Breadcrumb {
			size += int64(len(b)) + 16
		}
	}
	di.bytes = size + int64(len(di.chunks))*8 + pageCountsBytes
	return di
}
