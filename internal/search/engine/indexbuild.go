package engine

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
type Builder struct {
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
func NewBuilder() *Builder {
	return newIndexBuilderN(runtime.GOMAXPROCS(0))
}

func newIndexBuilderN(n int) *Builder {
	n = max(1, n)
	b := &Builder{work: make(chan *tokenBatch, 2*n), tzs: make([]*tokenizer, n)}
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
func (b *Builder) Add(c Chunk) error {
	if b.batch == nil {
		b.batch = make([]Chunk, 0, buildBatch)
	}
	b.batch = append(b.batch, c)
	if len(b.batch) == buildBatch {
		b.send()
	}
	return nil
}

func (b *Builder) send() {
	tb := &tokenBatch{chunks: b.batch}
	b.batch = nil
	b.batches = append(b.batches, tb)
	b.work <- tb
}

// wait stops the analysing goroutines once they are done.
func (b *Builder) wait() {
	if len(b.batch) > 0 {
		b.send()
	}
	close(b.work)
	b.wg.Wait()
}

// abort drops what was added.
func (b *Builder) Abort() {
	b.batch = nil
	b.wait()
}

// buildDomainIndex indexes chunks (in index order).
func Build(chunks []Chunk, version int64) *Index {
	b := NewBuilder()
	for _, c := range chunks {
		_ = b.Add(c)
	}
	return b.Finish(version)
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
					indexTokens(text, func(raw string) { tz.prevIDs[fi] = append(tz.prevIDs[fi], tz.id(raw)) })
				}
				tb.stream = append(tb.stream, tz.prevIDs[fi]...)
			} else {
				indexTokens(text, func(raw string) { tb.stream = append(tb.stream, tz.id(raw)) })
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
	// No copy of raw: it is part of a field's text (or a joined form made
	// for it), which the key keeps alive no longer than the tokenizer.
	tz.ids[raw] = n
	return n
}

// finish waits for the analysis and builds the index: the stems of every
// goroutine numbered for the domain, then the postings laid out in shared
// arrays. Counting and filling the postings go over every token twice, so
// they are split between goroutines by runs of chunks (buildPart): each
// counts its chunks' tokens, the counts place each part's postings of a
// token after those of the parts before, and each part fills its own.
func (b *Builder) Finish(version int64) *Index {
	b.wait()
	n := 0
	for _, tb := range b.batches {
		n += len(tb.chunks)
	}
	di := &Index{version: version, chunks: make([]Chunk, 0, n), length: make([]float32, n), boost: make([]float32, n),
		page: make([]int32, n), pages: map[string]int32{}, maxBoost: 1}
	for _, tb := range b.batches {
		di.chunks = append(di.chunks, tb.chunks...)
	}
	stems, remap := b.numberStems()
	// The map of stems to their postings, and the stems in order, while
	// the postings are counted and filled.
	lists := make([]postings, len(stems))
	var named sync.WaitGroup
	named.Go(func() {
		di.terms = make(map[string]*postings, len(stems))
		for t, st := range stems {
			di.terms[st] = &lists[t]
		}
		di.sorted = slices.Clone(stems)
		slices.Sort(di.sorted)
	})
	for d := range di.chunks {
		di.placeChunk(d)
	}

	parts := splitBatches(b.batches, len(b.tzs), len(stems))
	inParallel(parts, func(p *buildPart) { p.count(remap, di.length) })
	var total float64
	for d := range di.length {
		total += float64(di.length[d])
	}
	if len(di.chunks) > 0 {
		di.avgLen = total / float64(len(di.chunks))
	}

	arrays, posStart, size := layOutPostings(parts, stems, lists)
	inParallel(parts, func(p *buildPart) { p.fill(arrays, posStart) })
	named.Wait()
	// Mining related words reads the chunks and the postings' counts,
	// which prepare leaves alone: the two run side by side.
	var mined sync.WaitGroup
	mined.Go(func() { di.related = mineRelations(di) })
	di.prepare()
	mined.Wait()
	// What prepare adds: a norm and a seq a chunk, a postings pointer a
	// token.
	size += int64(len(di.chunks))*16 + int64(len(stems))*8
	for _, c := range di.chunks {
		size += int64(len(c.ID)+len(c.PagePath)+len(c.Anchor)+len(c.URL)+len(c.PageTitle)+len(c.Heading)+
			len(c.Text)+len(c.Markdown)+len(c.Version)+len(c.Language)+len(c.PageHash)+len(c.Keywords)) + 256
		for _, b := range c.Breadcrumb {
			size += int64(len(b)) + 16
		}
	}
	for w, rs := range di.related {
		size += int64(len(w)) + 40 + int64(len(rs))*24
	}
	di.bytes = size + int64(len(di.chunks))*8 + pageCountsBytes
	return di
}

// layOutPostings makes every token's postings slices of shared arrays, the
// parts' in turn, from the parts' counts; each part's counts become the
// indexes where it writes the token's next postings. It returns the
// arrays, where each token's positions start in arrays.pos, and the
// postings' share of the index's size estimate.
func layOutPostings(parts []*buildPart, stems []string, lists []postings) (postingArrays, []uint32, int64) {
	nDocs := make([]uint32, len(stems))
	nPos := make([]uint32, len(stems))
	for _, p := range parts {
		for t := range stems {
			nDocs[t] += p.docs[t]
			nPos[t] += p.pos[t]
		}
	}
	var sumDocs, sumPos uint32
	for t := range stems {
		sumDocs += nDocs[t]
		sumPos += nPos[t]
	}
	arrays := postingArrays{
		docs: make([]int32, sumDocs),
		wtf:  make([]float32, sumDocs),
		off:  make([]uint32, int(sumDocs)+len(stems)),
		pos:  make([]uint32, sumPos),
	}
	posStart := make([]uint32, len(stems))
	var docAt, posAt uint32
	var size int64
	for t := range stems {
		pl := &lists[t]
		offAt := docAt + uint32(t)
		pl.docs = arrays.docs[docAt : docAt+nDocs[t] : docAt+nDocs[t]]
		pl.wtf = arrays.wtf[docAt : docAt+nDocs[t] : docAt+nDocs[t]]
		pl.off = arrays.off[offAt : offAt+nDocs[t]+1 : offAt+nDocs[t]+1]
		pl.pos = arrays.pos[posAt : posAt+nPos[t] : posAt+nPos[t]]
		pl.off[nDocs[t]] = nPos[t]
		posStart[t] = posAt
		// Each part's counts become where it writes next.
		docNext, posNext := docAt, posAt
		for _, part := range parts {
			docNext, part.docs[t] = docNext+part.docs[t], docNext
			posNext, part.pos[t] = posNext+part.pos[t], posNext
		}
		docAt += nDocs[t]
		posAt += nPos[t]
		size += int64(len(stems[t])) + 64 + int64(nDocs[t])*12 + int64(nPos[t])*4
	}
	return arrays, posStart, size
}

// numberStems numbers the stems for the domain: the first goroutine's
// numbering, which it starts, with the others' stems it lacks added in
// turn. It returns the stems by number and each goroutine's numbering into
// the domain's.
func (b *Builder) numberStems() ([]string, map[*tokenizer][]int32) {
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
	return stems, remap
}

// postingArrays are the arrays every token's postings are slices of.
type postingArrays struct {
	docs []int32
	wtf  []float32
	off  []uint32
	pos  []uint32
}

// buildPart is a run of consecutive batches whose postings one goroutine
// counts and fills.
type buildPart struct {
	batches []*tokenBatch
	first   int32 // the number of the first batch's first chunk
	// docs and pos count, per token, the part's chunks holding it and its
	// positions in them (count); then they are the indexes in the shared
	// arrays where the part writes the token's next ones (fill).
	docs, pos []uint32
	// last is, per token, the chunk last counted or filled.
	last []int32
}

// splitBatches cuts batches into at most n parts of about as many tokens,
// for a domain of stems tokens.
func splitBatches(batches []*tokenBatch, n, stems int) []*buildPart {
	tokens := 0
	for _, tb := range batches {
		tokens += len(tb.stream)
	}
	per := tokens/max(n, 1) + 1
	var parts []*buildPart
	var part *buildPart
	d, inPart := int32(0), 0
	for _, tb := range batches {
		if part == nil || (inPart >= per && len(parts) < n) {
			part = &buildPart{first: d}
			parts = append(parts, part)
			inPart = 0
		}
		part.batches = append(part.batches, tb)
		inPart += len(tb.stream)
		d += int32(len(tb.chunks))
	}
	for _, p := range parts {
		p.docs = make([]uint32, stems)
		p.pos = make([]uint32, stems)
		p.last = make([]int32, stems)
	}
	return parts
}

// inParallel runs fn on every part, each in a goroutine of its own, and
// waits for them.
func inParallel(parts []*buildPart, fn func(*buildPart)) {
	var wg sync.WaitGroup
	for _, p := range parts[min(1, len(parts)):] {
		wg.Go(func() { fn(p) })
	}
	if len(parts) > 0 {
		fn(parts[0])
	}
	wg.Wait()
}

// count numbers the part's tokens for the domain (remap), counts their
// chunks and positions, and sets each chunk's length.
func (p *buildPart) count(remap map[*tokenizer][]int32, length []float32) {
	for t := range p.last {
		p.last[t] = -1
	}
	d := p.first
	for _, tb := range p.batches {
		r := remap[tb.tz]
		at := 0
		for ci := range tb.chunks {
			n := 0
			for fi := range numFields {
				k := int(tb.fieldLen[ci*numFields+fi])
				for pos, t := range tb.stream[at : at+k] {
					t = r[t]
					tb.stream[at+pos] = t
					if p.last[t] != d {
						p.last[t] = d
						p.docs[t]++
					}
					if pos <= posMask {
						p.pos[t]++
					}
				}
				at += k
				n += k
			}
			length[d] = float32(n)
			d++
		}
	}
}

// fill writes the part's postings where count's numbers, made indexes,
// say, and lets go of its batches' tokens. posStart is where each token's
// positions start in arrays.pos, which its offsets count from.
func (p *buildPart) fill(arrays postingArrays, posStart []uint32) {
	for t := range p.last {
		p.last[t] = -1
	}
	d := p.first
	for _, tb := range p.batches {
		at := 0
		for ci := range tb.chunks {
			for fi := range numFields {
				w := fieldWeights[fi]
				k := int(tb.fieldLen[ci*numFields+fi])
				for pos, t := range tb.stream[at : at+k] {
					if p.last[t] != d {
						p.last[t] = d
						i := p.docs[t]
						p.docs[t]++
						arrays.docs[i] = d
						// The offsets of token t start t places after its
						// chunks, one more each than the tokens before.
						arrays.off[i+uint32(t)] = p.pos[t] - posStart[t]
					}
					arrays.wtf[p.docs[t]-1] += w
					if pos <= posMask {
						arrays.pos[p.pos[t]] = uint32(fi)<<fieldShift | uint32(pos)
						p.pos[t]++
					}
				}
				at += k
			}
			d++
		}
		tb.stream, tb.fieldLen = nil, nil
	}
}
