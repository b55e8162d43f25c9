package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSearchProvidersOffByDefault(t *testing.T) {
	t.Parallel()
	c, err := load(t, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Embeddings.Enabled() || c.Rerank.Enabled() {
		t.Errorf("providers on by default: %+v %+v", c.Embeddings, c.Rerank)
	}
	if c.Embeddings.Batch != 64 || c.Embeddings.Concurrency != 2 || c.Embeddings.Timeout != time.Second || c.Rerank.Budget != 300*time.Millisecond {
		t.Errorf("defaults: batch %d, timeout %s, rerank budget %s", c.Embeddings.Batch, c.Embeddings.Timeout, c.Rerank.Budget)
	}
}

func TestEmbeddingsTakeTheOpenAIKeyOnlyForTheSameAPI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name              string
		env               map[string]string
		wantBase, wantKey string
	}{
		{"OpenAI's API", map[string]string{
			"DOCSMITH_EMBEDDINGS": "openai/text-embedding-3-small", "DOCSMITH_OPENAI_API_KEY": "sk-openai",
		}, "", "sk-openai"},
		{"the models' base URL", map[string]string{
			"DOCSMITH_EMBEDDINGS": "openai/m", "DOCSMITH_OPENAI_BASE_URL": "http://gateway:4000/v1", "DOCSMITH_OPENAI_API_KEY": "sk-gw",
		}, "http://gateway:4000/v1", "sk-gw"},
		{"same base URL given twice", map[string]string{
			"DOCSMITH_EMBEDDINGS": "openai/m", "DOCSMITH_OPENAI_BASE_URL": "http://gateway:4000/v1", "DOCSMITH_EMBEDDINGS_BASE_URL": "http://gateway:4000/v1", "DOCSMITH_OPENAI_API_KEY": "sk-gw",
		}, "http://gateway:4000/v1", "sk-gw"},
		{"a server of its own keeps the key away", map[string]string{
			"DOCSMITH_EMBEDDINGS": "openai/bge-small", "DOCSMITH_EMBEDDINGS_BASE_URL": "http://vectors:8000/v1", "DOCSMITH_OPENAI_API_KEY": "sk-openai",
		}, "http://vectors:8000/v1", ""},
		{"its own key wins", map[string]string{
			"DOCSMITH_EMBEDDINGS": "openai/m", "DOCSMITH_EMBEDDINGS_API_KEY": "sk-embed", "DOCSMITH_OPENAI_API_KEY": "sk-openai",
		}, "", "sk-embed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := load(t, nil, tt.env)
			if err != nil {
				t.Fatal(err)
			}
			if !c.Embeddings.Enabled() || c.Embeddings.BaseURL != tt.wantBase || c.Embeddings.APIKey != tt.wantKey {
				t.Errorf("embeddings = model %q base %q key %q; want base %q key %q", c.Embeddings.Model, c.Embeddings.BaseURL, c.Embeddings.APIKey, tt.wantBase, tt.wantKey)
			}
		})
	}
}

func TestProviderKeysFromFilesAndMasked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	embedKey, rerankKey := filepath.Join(dir, "embed"), filepath.Join(dir, "rerank")
	if err := os.WriteFile(embedKey, []byte("sk-embed-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rerankKey, []byte("rk-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := load(t, nil, map[string]string{
		"DOCSMITH_EMBEDDINGS": "openai/m", "DOCSMITH_EMBEDDINGS_API_KEY_FILE": embedKey,
		"DOCSMITH_RERANK_URL": "https://rerank.example/v1/rerank", "DOCSMITH_RERANK_MODEL": "rerank-small", "DOCSMITH_RERANK_API_KEY_FILE": rerankKey,
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Embeddings.APIKey != "sk-embed-from-file" || c.Rerank.APIKey != "rk-from-file" || c.Rerank.Model != "rerank-small" {
		t.Errorf("keys = %q, %q", c.Embeddings.APIKey, c.Rerank.APIKey)
	}
	var out strings.Builder
	if err := c.Show(&out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "from-file") {
		t.Errorf("config show prints a provider key:\n%s", out.String())
	}
}

func TestSearchProviderValuesRefusedWithWhatToFix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"no provider prefix", map[string]string{"DOCSMITH_EMBEDDINGS": "text-embedding-3-small"}, "openai/MODEL"},
		{"another provider", map[string]string{"DOCSMITH_EMBEDDINGS": "cohere/embed-v4"}, "embeddings_base_url"},
		{"no model name", map[string]string{"DOCSMITH_EMBEDDINGS": "openai/"}, "openai/MODEL"},
		{"base URL not http", map[string]string{"DOCSMITH_EMBEDDINGS": "openai/m", "DOCSMITH_EMBEDDINGS_BASE_URL": "vectors:8000"}, "http(s) URL"},
		{"batch of zero", map[string]string{"DOCSMITH_EMBEDDINGS_BATCH": "0"}, "from 1 to 2048"},
		{"too many requests at once", map[string]string{"DOCSMITH_EMBEDDINGS_CONCURRENCY": "100"}, "from 1 to 32"},
		{"timeout not a duration", map[string]string{"DOCSMITH_EMBEDDINGS_TIMEOUT": "1"}, "positive duration"},
		{"base URL without embeddings", map[string]string{"DOCSMITH_EMBEDDINGS_BASE_URL": "http://vectors:8000/v1"}, "embeddings is empty"},
		{"rerank model without URL", map[string]string{"DOCSMITH_RERANK_MODEL": "rerank-small"}, "rerank_url is empty"},
		{"rerank URL not http", map[string]string{"DOCSMITH_RERANK_URL": "rerank.example/v1/rerank"}, "http(s) URL"},
		{"rerank budget negative", map[string]string{"DOCSMITH_RERANK_URL": "http://r/v1/rerank", "DOCSMITH_RERANK_BUDGET": "-5ms"}, "positive duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := load(t, nil, tt.env)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one that says %q", err, tt.want)
			}
		})
	}
}
