package openai

import "unicode/utf8"

// parseChunk reads data, one event's data, into c if it is a chunk of the
// usual shape, and reports whether it was. It takes exactly what the SDK's
// decoding gives for such a chunk (its strings as gjson reads them, which
// keeps invalid UTF-8 as it is) and declines everything else, for the
// SDK to read: JSON that is not valid, a top-level "error" member, a
// member the adapter uses given twice or with a value of another type, a
// key with escapes, an escaped surrogate, a number that is not a small
// integer, nesting deeper than maxDepth. Every other member is checked to
// be valid JSON and skipped.
func parseChunk(data []byte, c *chunk) bool {
	p := jsonParser{data: data, ok: true}
	c.choices = c.choices[:0]
	c.hasUsage, c.promptTokens, c.completionTokens = false, 0, 0
	p.space()
	if !p.eat('{') {
		return false
	}
	var seenChoices, seenUsage bool
	for first := true; p.member(first); first = false {
		switch key := p.key; {
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
// from then on.
type jsonParser struct {
	data    []byte
	pos     int
	ok      bool
	depth   int
	key     []byte // the key member found
	scratch []byte // a string being unescaped
}

func (p *jsonParser) fail() { p.ok = false }

func (p *jsonParser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// eat consumes b, after spaces.
func (p *jsonParser) eat(b byte) bool {
	p.space()
	if !p.ok || p.pos >= len(p.data) || p.data[p.pos] != b {
		p.fail()
		return false
	}
	p.pos++
	return true
}

// peek is the next byte after spaces, or 0 at the end.
func (p *jsonParser) peek() byte {
	p.space()
	if !p.ok || p.pos >= len(p.data) {
		return 0
	}
	return p.data[p.pos]
}

// member reads up to the value of the next member of an object whose "{"
// was read, and sets key. It returns false at the object's "}" or when p
// failed.
func (p *jsonParser) member(first bool) bool {
	if p.peek() == '}' {
		p.pos++
		return false
	}
	if !first && !p.eat(',') {
		return false
	}
	if !p.eat('"') {
		return false
	}
	start := p.pos
	for p.pos < len(p.data) && p.data[p.pos] != '"' {
		if b := p.data[p.pos]; b == '\\' || b < 0x20 {
			p.fail() // an escaped key may spell a member's name
			return false
		}
		p.pos++
	}
	if p.pos >= len(p.data) {
		p.fail()
		return false
	}
	p.key = p.data[start:p.pos]
	p.pos++
	return p.eat(':')
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
		switch string(p.key) {
		case "index":
			p.once(&seen.index)
			ch.index = p.integer()
		case "delta":
			p.once(&seen.delta)
			p.delta(ch)
		case "finish_reason":
			p.once(&seen.finish)
			ch.finishReason = p.string()
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
		switch string(p.key) {
		case "content":
			p.once(&seen.content)
			ch.content = p.string()
		case "refusal":
			p.once(&seen.refusal)
			ch.refusal = p.string()
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
		switch string(p.key) {
		case "index":
			p.once(&seen.index)
			d.index = p.integer()
		case "id":
			p.once(&seen.id)
			d.id = p.string()
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
		switch string(p.key) {
		case "name":
			p.once(&seen.name)
			d.name = p.string()
		case "arguments":
			p.once(&seen.arguments)
			d.arguments = p.string()
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
		switch string(p.key) {
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
	neg := p.pos < len(p.data) && p.data[p.pos] == '-'
	if neg {
		p.pos++
	}
	start := p.pos
	var n int64
	for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
		n = n*10 + int64(p.data[p.pos]-'0')
		p.pos++
	}
	digits := p.pos - start
	switch {
	case digits == 0, digits > maxIntDigits, digits > 1 && p.data[start] == '0':
		p.fail()
	case p.pos < len(p.data) && (p.data[p.pos] == '.' || p.data[p.pos] == 'e' || p.data[p.pos] == 'E'):
		p.fail()
	}
	if neg {
		n = -n
	}
	return n
}

// string reads a string, or null (""). The string is new, for the caller to
// keep.
func (p *jsonParser) string() string {
	if p.null() || !p.eat('"') {
		return ""
	}
	start := p.pos
	for p.pos < len(p.data) {
		switch b := p.data[p.pos]; {
		case b == '"':
			s := string(p.data[start:p.pos])
			p.pos++
			return s
		case b == '\\':
			return p.escapedString(start)
		case b < 0x20:
			p.fail()
			return ""
		}
		p.pos++
	}
	p.fail()
	return ""
}

// escapedString reads the rest of a string from its first escape on, as
// gjson unescapes it.
func (p *jsonParser) escapedString(start int) string {
	s, ok := p.unescape(append(p.scratch[:0], p.data[start:p.pos]...))
	if !ok {
		p.fail()
		return ""
	}
	return s
}

// unescape appends the rest of a string to buf, unescaped, and returns it;
// buf is kept for the next string.
func (p *jsonParser) unescape(buf []byte) (string, bool) {
	for p.pos < len(p.data) {
		b := p.data[p.pos]
		switch {
		case b == '"':
			p.pos++
			p.scratch = buf[:0]
			return string(buf), true
		case b < 0x20:
			return "", false
		case b != '\\':
			buf = append(buf, b)
			p.pos++
			continue
		}
		if p.pos+1 >= len(p.data) {
			return "", false
		}
		e := p.data[p.pos+1]
		p.pos += 2
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
			r, ok := p.hex4()
			if !ok || !utf8.ValidRune(r) {
				return "", false
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", false
		}
	}
	return "", false
}

// hex4 reads the four hex digits of a \u escape.
func (p *jsonParser) hex4() (rune, bool) {
	if len(p.data)-p.pos < 4 {
		return 0, false
	}
	var r rune
	for _, b := range p.data[p.pos : p.pos+4] {
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
	p.pos += 4
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
	p.pos++ // the opening quote
	for p.pos < len(p.data) {
		switch b := p.data[p.pos]; {
		case b == '"':
			p.pos++
			return
		case b < 0x20:
			p.fail()
			return
		case b == '\\':
			p.skipEscape()
			if !p.ok {
				return
			}
			continue
		}
		p.pos++
	}
	p.fail()
}

// skipEscape checks and passes over one escape.
func (p *jsonParser) skipEscape() {
	if p.pos+1 >= len(p.data) {
		p.fail()
		return
	}
	e := p.data[p.pos+1]
	p.pos += 2
	switch e {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
	case 'u':
		if _, ok := p.hex4(); !ok {
			p.fail()
		}
	default:
		p.fail()
	}
}

// number checks and passes over a number, as JSON spells them.
func (p *jsonParser) number() {
	if !p.ok {
		return
	}
	if p.pos < len(p.data) && p.data[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos < len(p.data) && p.data[p.pos] == '0':
		p.pos++
	case p.digits() == 0:
		p.fail()
		return
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if p.digits() == 0 {
			p.fail()
			return
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if p.digits() == 0 {
			p.fail()
		}
	}
}

// digits passes over decimal digits and says how many.
func (p *jsonParser) digits() int {
	start := p.pos
	for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
		p.pos++
	}
	return p.pos - start
}
