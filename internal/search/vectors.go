package search

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// Vector is a passage's embedding, keyed by the content hash of the text
// that was embedded (see EmbedHash): a passage whose title, headings and
// text do not change keeps its vector across updates.
type Vector struct {
	Hash   string
	Values []float32
}

// VectorSource is a store's passage vectors, kept per domain and model. It
// is optional: a store without it serves BM25 alone.
type VectorSource interface {
	// VectorHashes returns the hashes of the domain's vectors for model.
	VectorHashes(ctx context.Context, domain, model string) (map[string]bool, error)
	// DomainVectors calls each with every vector of the domain for model.
	// An error from each stops the read and is returned.
	DomainVectors(ctx context.Context, domain, model string, each func(Vector) error) error
	// PutVectors keeps vectors for model and deletes the domain's vectors
	// whose hash is not in inUse, and every vector of another model. When
	// it changes anything it raises the domain's index version, so that
	// the processes holding the domain load the vectors.
	PutVectors(ctx context.Context, domain, model string, vectors []Vector, inUse []string) error
}

// maxEmbedBytes bounds the text embedded for one passage: embedding models
// take a few thousand tokens at most, and a passage is a section, so only
// an unusually long one is cut.
const maxEmbedBytes = 8 << 10

// EmbedText is what is embedded for a passage: the page title, the
// headings down to the passage, then its text. The title and headings say
// what the passage is about when its text does not repeat them.
func EmbedText(c *Chunk) string {
	var b strings.Builder
	b.WriteString(c.PageTitle)
	if path := headingPath(c); len(path) > 0 {
		b.WriteString("\n")
		b.WriteString(strings.Join(path, " > "))
	}
	b.WriteString("\n\n")
	b.WriteString(c.Text)
	return truncateUTF8(b.String(), maxEmbedBytes)
}

// EmbedHash is the content hash a passage's vector is kept under: the
// SHA-256 of EmbedText, in hex.
func EmbedHash(c *Chunk) string {
	sum := sha256.Sum256([]byte(EmbedText(c)))
	return hex.EncodeToString(sum[:])
}

// headingPath is the headings from the page title down to the chunk: the
// breadcrumb after the title, or the chunk's own heading when the
// breadcrumb does not hold the title.
func headingPath(c *Chunk) []string {
	for i, crumb := range c.Breadcrumb {
		if crumb == c.PageTitle {
			return c.Breadcrumb[i+1:]
		}
	}
	if c.Heading != "" {
		return []string{c.Heading}
	}
	return nil
}

// truncateUTF8 cuts s to at most n bytes, on a character boundary.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// MaxVectorDims bounds a vector's dimensions, read from a store or a
// provider (the largest embedding models have a few thousand).
const MaxVectorDims = 16384

// EncodeVector is a vector as the stores keep it: float32 little-endian.
func EncodeVector(v []float32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
	}
	return out
}

// DecodeVector reads EncodeVector's bytes.
func DecodeVector(b []byte) ([]float32, error) {
	if len(b)%4 != 0 || len(b) == 0 || len(b)/4 > MaxVectorDims {
		return nil, fmt.Errorf("a vector of %d bytes: %w", len(b), ErrBadVector)
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out, nil
}
