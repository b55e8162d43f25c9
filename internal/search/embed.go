package search

import (
	"context"
	"fmt"

	"github.com/docsmith/docsmith/internal/search/engine"
	"github.com/docsmith/docsmith/internal/semantic"
)

// embedGroup is how many passages are embedded between two checks of the
// context; the embedder splits each group into its own requests.
const embedGroup = 256

// VectorStats says what UpdateVectors did.
type VectorStats struct {
	// Passages counts the distinct passage texts of the domain; Embedded
	// those embedded now; Missing those left without a vector because
	// the provider failed (the next update embeds them).
	Passages, Embedded, Missing int
	// Requests counts the calls to the embedder.
	Requests int
}

// UpdateVectors embeds, with the configured Embedder (none: nothing to
// do), the domain's passages that have no vector for its model yet, keeps them, and deletes the vectors no passage
// uses any more. A passage keeps its vector while its title, headings and
// text (EmbedText) do not change, so an update embeds only the passages it
// changed. When the provider fails, the vectors embedded before the
// failure are kept and the error is returned with the stats: search goes
// on with BM25 for the passages without one.
func (m *Memory) UpdateVectors(ctx context.Context, domain string) (VectorStats, error) {
	vs, ok := m.src.(VectorSource)
	if !ok || m.cfg.Embedder == nil {
		return VectorStats{}, nil
	}
	st, err := updateVectors(ctx, m.src, vs, domain, m.cfg.Embedder)
	m.Changed(domain)
	return st, err
}

func updateVectors(ctx context.Context, src Source, vs VectorSource, domain string, e semantic.Embedder) (VectorStats, error) {
	model := e.Model()
	have, err := vs.VectorHashes(ctx, domain, model)
	if err != nil {
		return VectorStats{}, err
	}
	var (
		inUse   []string
		texts   []string
		hashes  []string
		counted = map[string]bool{}
	)
	_, err = src.DomainChunks(ctx, domain, func(c Chunk) error {
		h := EmbedHash(&c)
		if counted[h] {
			return nil
		}
		counted[h] = true
		inUse = append(inUse, h)
		if !have[h] {
			texts = append(texts, EmbedText(&c))
			hashes = append(hashes, h)
		}
		return nil
	})
	if err != nil {
		return VectorStats{}, err
	}
	st := VectorStats{Passages: len(inUse)}
	var (
		fresh    []Vector
		embedErr error
	)
	for start := 0; start < len(texts); start += embedGroup {
		end := min(start+embedGroup, len(texts))
		st.Requests++
		vecs, err := e.Embed(ctx, texts[start:end])
		if err == nil && len(vecs) != end-start {
			err = &semantic.Error{Provider: semantic.ProviderEmbeddings, Reason: semantic.ReasonMalformed,
				Err: fmt.Errorf("%d vectors for %d texts", len(vecs), end-start)}
		}
		if err != nil {
			embedErr = err
			break
		}
		for i, v := range vecs {
			if _, ok := engine.Normalized(v); !ok || len(v) > MaxVectorDims {
				continue
			}
			fresh = append(fresh, Vector{Hash: hashes[start+i], Values: v})
		}
	}
	st.Embedded = len(fresh)
	st.Missing = len(texts) - len(fresh)
	if len(fresh) > 0 || len(have) > 0 {
		if err := vs.PutVectors(ctx, domain, model, fresh, inUse); err != nil {
			st.Embedded, st.Missing = 0, len(texts)
			return st, err
		}
	}
	if embedErr != nil {
		return st, fmt.Errorf("embed the passages of %s: %w", domain, embedErr)
	}
	return st, nil
}
