package openai

import (
	"encoding/binary"
	"math/bits"
	"strings"
	"unicode/utf8"
)

// parseChunk reads data, one event's data, into c if it is a chunk of the
// usual shape, and reports whether it was. It takes exactly what the SDK's
// decoding gives for such a chunk (its strings as gjson reads them, which
// keeps invalid UTF-8 as it is) and declines everything else, for the
// SDK to read: JSON that is not valid, a top-level "error" member, a
// member the adapter uses given twice or with a value of another type, a
// key with escapes, an escaped surrogate, a number that is not a small
// integer, nesting deeper than maxDepth. Every other member is checked to
// be valid JSON and skipped. The strings of c stay valid after data is
// overwritten.
func (p *jsonParser) parseChunk(data []byte, c *chunk) bool {
	p.data, p.pos, p.ok, p.depth = data, 0, true, 0
	c.choices = c.choices[:0]
	c.hasUsage, c.promptTokens, c.completionTokens = false, 0, 0
	p.space()
	if !p.eat('{') {
		return false
	}
	var seenChoices, seenUsage bool
	for first := true; p.member(first); first = false {
		switch key := p.key(); {
		case string(key) == "choices" && !seenChoices:
			seenChoices = true
			p.choices(c)
		case string(key) == "usage" && !seenUsage:
			seenUsage = true
			p.usage(c)
		case string(key) == "choices", string(key) == "usage", string(key) == "error":
			return false
		default:
			p.skip()
		}
	}
	p.space()
	return p.ok && p.pos == len(p.data)
}

// maxDepth bounds the nesting parseChunk follows; deeper JSON goes to the
// SDK, whose decoder bounds it too.
const maxDepth = 64

// jsonParser reads the parts of a JSON document parseChunk takes. ok turns
// false at the first thing it does not take, and every method does nothing
// from then on. Its hot loops work on local copies of data and pos, which
// the compiler keeps in registers.
type jsonParser struct {
	data  []byte
	pos   int
	ok    bool
	depth int
	// keyStart and keyEnd are where the key member found is in data: two
	// numbers, which unlike a slice of data cost no write barrier to set.
	keyStart, keyEnd int
	scratch          []byte    // a string being unescaped, kept for the next one
	texts            textBlock // where the texts of chunks are copied to
}

func (p *jsonParser) fail() { p.ok = false }

// reset lets go of the last data read, and of a scratch buffer a large
// string grew; what the texts of chunks were copied to is kept.
func (p *jsonParser) reset() {
	p.data = nil
	if cap(p.scratch) > readBufferSize {
		p.scratch = nil
	}
}

// skipSpace returns the position of the first byte from pos on that is not
// JSON white space, or len(data). Most often it is the byte at pos, above
// every space.
func skipSpace(data []byte, pos int) int {
	for pos < len(data) && data[pos] <= ' ' {
		switch data[pos] {
		case ' ', '\t', '\n', '\r':
			pos++
		default:
			return pos
		}
	}
	return pos
}

func (p *jsonParser) space() { p.pos = skipSpace(p.data, p.pos) }

// eat consumes b, after spaces.
func (p *jsonParser) eat(b byte) bool {
	if !p.ok {
		return false
	}
	pos := skipSpace(p.data, p.pos)
	if pos >= len(p.data) || p.data[pos] != b {
		p.fail()
		return false
	}
	p.pos = pos + 1
	return true
}

// peek is the next byte after spaces, or 0 at the end.
func (p *jsonParser) peek() byte {
	if !p.ok {
		return 0
	}
	p.pos = skipSpace(p.data, p.pos)
	if p.pos >= len(p.data) {
		return 0
	}
	return p.data[p.pos]
}

// key is the key member found.
func (p *jsonParser) key() []byte { return p.data[p.keyStart:p.keyEnd] }

// member reads up to the value of the next member of an object whose "{"
// was read, and finds its key. It returns false at the object's "}" or when p
// failed.
func (p *jsonParser) member(first bool) bool {
	if !p.ok {
		return false
	}
	data := p.data
	pos := skipSpace(data, p.pos)
	if pos < len(data) && data[pos] == '}' {
		p.pos = pos + 1
		return false
	}
	if !first {
		if pos >= len(data) || data[pos] != ',' {
			p.fail()
			return false
		}
		pos = skipSpace(data, pos+1)
	}
	if pos >= len(data) || data[pos] != '"' {
		p.fail()
		return false
	}
	start := pos + 1
	end := plainEnd(data, start)
	if end >= len(data) || data[end] != '"' {
		p.fail() // an escaped key may spell a member's name
		return false
	}
	p.keyStart, p.keyEnd = start, end
	pos = skipSpace(data, end+1)
	if pos >= len(data) || data[pos] != ':' {
		p.fail()
		return false
	}
	p.pos = pos + 1
	return true
}

// plainEnd returns the position of the first quote, backslash or control
// character of data from pos on, or len(data): where a string's plain
// characters end. It looks at eight bytes at a time, then at the last
// few byte by byte.
func plainEnd(data []byte, pos int) int {
	for ; pos+8 <= len(data); pos += 8 {
		if found := quoteBackslashOrControl(binary.LittleEndian.Uint64(data[pos:])); found != 0 {
			return pos + bits.TrailingZeros64(found)/8
		}
	}
	for i, b := range data[pos:] {
		if b == '"' || b == '\\' || b < 0x20 {
			return pos + i
		}
	}
	return len(data)
}

// Every byte of a word of eight bytes set to 0x01, and to 0x80.
const (
	eachByte01 = 0x0101010101010101
	eachByte80 = 0x8080808080808080
)

// quoteBackslashOrControl finds the quotes, backslashes and control
// characters (below 0x20) among the eight bytes of w, read in little-endian
// order: it sets the top bit of the first of them in its result, and no
// bit below, or returns 0 if there is none. In x-0x20, a byte's top bit is
// set where x's was not only if the byte is below 0x20, or a byte below it
// was and borrowed from it; a byte equal to c is a zero byte of w^c, which
// the same test with 0x01 finds. Borrows go up only, so the lowest bit
// set is exact; those above it may not be.
func quoteBackslashOrControl(w uint64) uint64 {
	quotes := w ^ (eachByte01 * '"')
	backslashes := w ^ (eachByte01 * '\\')
	control := (w - eachByte01*0x20) &^ w
	quote := (quotes - eachByte01) &^ quotes
	backslash := (backslashes - eachByte01) &^ backslashes
	return (control | quote | backslash) & eachByte80
}

// element reads up to the next element of an array whose "[" was read. It
// returns false at the array's "]" or when p failed.
func (p *jsonParser) element(first bool) bool {
	if p.peek() == ']' {
		p.pos++
		return false
	}
	if !first {
		return p.eat(',')
	}
	return p.ok
}

// null consumes a null if one comes next, and reports whether it did.
func (p *jsonParser) null() bool {
	if p.peek() != 'n' {
		return false
	}
	p.literal("null")
	return true
}

func (p *jsonParser) literal(word string) {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		p.fail()
		return
	}
	p.pos += len(word)
}

// open enters an object or an array.
func (p *jsonParser) open(b byte) bool {
	if p.depth++; p.depth > maxDepth {
		p.fail()
	}
	return p.eat(b)
}

func (p *jsonParser) close() { p.depth-- }

// choices reads the choices array.
func (p *jsonParser) choices(c *chunk) {
	if p.null() || !p.open('[') {
		return
	}
	defer p.close()
	for first := true; p.element(first); first = false {
		c.choices = append(c.choices, choice{})
		p.choice(&c.choices[len(c.choices)-1])
	}
}

// choice reads one element of choices.
func (p *jsonParser) choice(ch *choice) {
	if p.null() || !p.open('{') {
		return
	}
	defer p.close()
	var seen struct{ index, delta, finish bool }
	for first := true; p.member(first); first = false {
		switch string(p.key()) {
		case "index":
			p.once(&seen.index)
			ch.index = p.integer()
		case "delta":
			p.once(&seen.delta)
			p.delta(ch)
		case "finish_reason":
			p.once(&seen.finish)
			ch.finishReason = string(p.stringBytes())
		default:
			p.skip()
		}
	}
}

// once fails on the second sight of a member: the SDK keeps the last of
// two, parseChunk would mix them.
func (p *jsonParser) once(seen *bool) {
	if *seen {
		p.fail()
	}
	*seen = true
}

// delta reads a choice's delta.
func (p *jsonParser) delta(ch *choice) {
	if p.null() || !p.open('{') {
		return
	}
	defer p.close()
	var seen struct{ content, refusal, toolCalls bool }
	for first := true; p.member(first); first = false {
		switch string(p.key()) {
		case "content":
			p.once(&seen.content)
			ch.content = p.text()
		case "refusal":
			p.once(&seen.refusal)
			ch.refusal = p.text()
		case "tool_calls":
			p.once(&seen.toolCalls)
			p.toolCalls(ch)
		default:
			p.skip()
		}
	}
}

// toolCalls reads a delta's tool_calls array.
func (p *jsonParser) toolCalls(ch *choice) {
	if p.null() || !p.open('[') {
		return
	}
	defer p.close()
	for first := true; p.element(first); first = false {
		ch.toolCalls = append(ch.toolCalls, toolCallDelta{})
		p.toolCall(&ch.toolCalls[len(ch.toolCalls)-1])
	}
}

// toolCall reads one element of tool_calls.
func (p *jsonParser) toolCall(d *toolCallDelta) {
	if p.null() || !p.open('{') {
		return
	}
	defer p.close()
	var seen struct{ index, id, function bool }
	for first := true; p.member(first); first = false {
		switch string(p.key()) {
		case "index":
			p.once(&seen.index)
			d.index = p.integer()
		case "id":
			p.once(&seen.id)
			d.id = string(p.stringBytes())
		case "function":
			p.once(&seen.function)
			p.function(d)
		default:
			p.skip()
		}
	}
}

// function reads a tool call's function.
func (p *jsonParser) function(d *toolCallDelta) {
	if p.null() || !p.open('{') {
		return
	}
	defer p.close()
	var seen struct{ name, arguments bool }
	for first := true; p.member(first); first = false {
		switch string(p.key()) {
		case "name":
			p.once(&seen.name)
			d.name = string(p.stringBytes())
		case "arguments":
			p.once(&seen.arguments)
			d.arguments = p.text()
		default:
			p.skip()
		}
	}
}

// usage reads the usage object.
func (p *jsonParser) usage(c *chunk) {
	if p.null() || !p.open('{') {
		return
	}
	defer p.close()
	c.hasUsage = true
	var seen struct{ prompt, completion bool }
	for first := true; p.member(first); first = false {
		switch string(p.key()) {
		case "prompt_tokens":
			p.once(&seen.prompt)
			c.promptTokens = p.integer()
		case "completion_tokens":
			p.once(&seen.completion)
			c.completionTokens = p.integer()
		default:
			p.skip()
		}
	}
}

// maxIntDigits keeps integers exact through the float64 gjson reads them
// as first.
const maxIntDigits = 15

// integer reads an integer without fraction or exponent, or null (0).
func (p *jsonParser) integer() int64 {
	if p.null() {
		return 0
	}
	if !p.ok {
		return 0
	}
	data, pos := p.data, p.pos
	neg := pos < len(data) && data[pos] == '-'
	if neg {
		pos++
	}
	start := pos
	pos = digitsEnd(data, pos)
	digits := pos - start
	switch {
	case digits == 0, digits > maxIntDigits, digits > 1 && data[start] == '0':
		p.fail()
	case pos < len(data) && (data[pos] == '.' || data[pos] == 'e' || data[pos] == 'E'):
		p.fail()
	}
	p.pos = pos
	var n int64
	for _, d := range data[start:pos] {
		n = n*10 + int64(d-'0')
	}
	if neg {
		n = -n
	}
	return n
}

// text reads a string, or null (""), that the answer is made of: a
// delta's content, refusal or a tool call's arguments. It comes from
// p.texts, which takes many of them in one allocation.
func (p *jsonParser) text() string {
	return p.texts.string(p.stringBytes())
}

// stringBytes reads a string, or null (nil), and returns its characters as
// gjson unescapes them: a slice of data, or of scratch for a string with
// escapes, valid until the next string is read.
func (p *jsonParser) stringBytes() []byte {
	if p.null() || !p.eat('"') {
		return nil
	}
	data := p.data
	start := p.pos
	end := plainEnd(data, start)
	switch {
	case end < len(data) && data[end] == '"':
		p.pos = end + 1
		return data[start:end]
	case end < len(data) && data[end] == '\\':
		p.pos = end
		return p.unescape(start)
	}
	p.fail()
	return nil
}

// unescape reads the rest of a string from its first escape, at p.pos, on,
// and returns the whole string from start, unescaped as gjson unescapes it,
// in scratch.
func (p *jsonParser) unescape(start int) []byte {
	data, pos := p.data, p.pos
	buf := append(p.scratch[:0], data[start:pos]...)
	for {
		end := plainEnd(data, pos)
		buf = append(buf, data[pos:end]...)
		pos = end
		switch {
		case pos >= len(data) || data[pos] < 0x20:
			p.fail()
			return nil
		case data[pos] == '"':
			p.pos = pos + 1
			p.scratch = buf
			return buf
		case pos+1 >= len(data):
			p.fail()
			return nil
		}
		e := data[pos+1]
		pos += 2
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			// A surrogate (half of a pair, or alone) is left to the SDK:
			// gjson pairs them in its own way.
			r, ok := hex4(data, pos)
			if !ok || !utf8.ValidRune(r) {
				p.fail()
				return nil
			}
			buf = utf8.AppendRune(buf, r)
			pos += 4
		default:
			p.fail()
			return nil
		}
	}
}

// hex4 reads the four hex digits of a \u escape at pos.
func hex4(data []byte, pos int) (rune, bool) {
	if len(data)-pos < 4 {
		return 0, false
	}
	var r rune
	for _, b := range data[pos : pos+4] {
		var v byte
		switch {
		case b >= '0' && b <= '9':
			v = b - '0'
		case b >= 'a' && b <= 'f':
			v = b - 'a' + 10
		case b >= 'A' && b <= 'F':
			v = b - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}

// skip checks and passes over any JSON value.
func (p *jsonParser) skip() {
	switch p.peek() {
	case '{':
		p.open('{')
		defer p.close()
		for first := true; p.member(first); first = false {
			p.skip()
		}
	case '[':
		p.open('[')
		defer p.close()
		for first := true; p.element(first); first = false {
			p.skip()
		}
	case '"':
		p.skipString()
	case 't':
		p.literal("true")
	case 'f':
		p.literal("false")
	case 'n':
		p.literal("null")
	default:
		p.number()
	}
}

// skipString checks and passes over a string.
func (p *jsonParser) skipString() {
	data := p.data
	pos := p.pos + 1 // the opening quote
	for {
		pos = plainEnd(data, pos)
		switch {
		case pos >= len(data) || data[pos] < 0x20:
			p.fail()
			return
		case data[pos] == '"':
			p.pos = pos + 1
			return
		}
		pos = skipEscape(data, pos)
		if pos < 0 {
			p.fail()
			return
		}
	}
}

// skipEscape checks the escape at pos and returns the position after it,
// or -1 if it is not valid.
func skipEscape(data []byte, pos int) int {
	if pos+1 >= len(data) {
		return -1
	}
	switch data[pos+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return pos + 2
	case 'u':
		if _, ok := hex4(data, pos+2); ok {
			return pos + 6
		}
	}
	return -1
}

// number checks and passes over a number, as JSON spells them.
func (p *jsonParser) number() {
	if !p.ok {
		return
	}
	data, pos := p.data, p.pos
	if pos < len(data) && data[pos] == '-' {
		pos++
	}
	if pos < len(data) && data[pos] == '0' {
		pos++
	} else {
		end := digitsEnd(data, pos)
		if end == pos {
			p.fail()
			return
		}
		pos = end
	}
	if pos < len(data) && data[pos] == '.' {
		end := digitsEnd(data, pos+1)
		if end == pos+1 {
			p.fail()
			return
		}
		pos = end
	}
	if pos < len(data) && (data[pos] == 'e' || data[pos] == 'E') {
		pos++
		if pos < len(data) && (data[pos] == '+' || data[pos] == '-') {
			pos++
		}
		end := digitsEnd(data, pos)
		if end == pos {
			p.fail()
			return
		}
		pos = end
	}
	p.pos = pos
}

// digitsEnd returns the position of the first byte from pos on that is not
// a decimal digit, or len(data).
func digitsEnd(data []byte, pos int) int {
	for pos < len(data) && data[pos] >= '0' && data[pos] <= '9' {
		pos++
	}
	return pos
}

// textBlockSize is the size of a textBlock's blocks: the text of a few
// hundred deltas.
const textBlockSize = 4 << 10

// textBlock makes the strings of the texts that chunks carry, many to one
// allocation: each is copied to the end of a block that is only ever
// appended to, and so stays as it is for as long as it is used, while the
// event it was read from is overwritten by the next. A text larger than a
// quarter of a block is a string of its own.
type textBlock struct {
	block strings.Builder
}

// string returns b as a string.
func (t *textBlock) string(b []byte) string {
	switch {
	case len(b) == 0:
		return ""
	case len(b) > textBlockSize/4:
		return string(b)
	case t.block.Cap()-t.block.Len() < len(b):
		// Reset leaves the full block to the strings made from it.
		t.block.Reset()
		t.block.Grow(textBlockSize)
	}
	start := t.block.Len()
	t.block.Write(b)
	return t.block.String()[start:]
}
