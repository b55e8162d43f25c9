package config

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func load(t *testing.T, args []string, env map[string]string) (Config, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	l := Bind(fs, true)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return l.Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	c, err := load(t, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.DataDir != "./data" || c.Addr != "127.0.0.1:8080" || c.Workers != 4 || c.TurnTimeout != 15*time.Minute ||
		c.Limits.AgentPerProjectHour != 100 || c.Limits.AssistantPerKeyMonth != 10000 || c.Limits.AssistantPerOrgHour != 10000 || c.Limits.AssistantPerIPDay != 10000 || c.Limits.AssistantPerIPMinute != 60 || c.Limits.AssistantPerIPBurst != 20 || c.Budget.AnswersPerDay != 2000 || c.Budget.TokensPerDay != 2000000 || !c.Demo {
		t.Fatalf("defaults = %+v", c)
	}
}

func TestPrecedenceFlagEnvFileDefault(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "docsmith.yaml")
	if err := os.WriteFile(file, []byte("addr: 127.0.0.1:9000\nworkers: 7\ndata_dir: /from/file\ntrusted_proxies: [10.0.0.0/8, 192.168.0.0/16]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := load(t, []string{"--data", "/from/flag"}, map[string]string{
		"DOCSMITH_CONFIG":   file,
		"DOCSMITH_WORKERS":  "9",
		"DOCSMITH_DATA_DIR": "/from/env",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.DataDir != "/from/flag" {
		t.Errorf("data_dir = %q, want the flag's", c.DataDir)
	}
	if c.Workers != 9 {
		t.Errorf("workers = %d, want the environment's 9", c.Workers)
	}
	if c.Addr != "127.0.0.1:9000" {
		t.Errorf("addr = %q, want the file's", c.Addr)
	}
	if len(c.TrustedProxies) != 2 {
		t.Errorf("trusted_proxies = %v, want two from the file's list", c.TrustedProxies)
	}
	var out bytes.Buffer
	if err := c.Show(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"flag --data-dir", "env DOCSMITH_WORKERS", "file", "default"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("config show lacks source %q:\n%s", want, out.String())
		}
	}
}

func TestErrorsNameOptionAndSource(t *testing.T) {
	t.Parallel()
	_, err := load(t, []string{"--turn-timeout", "soon"}, map[string]string{"DOCSMITH_WORKERS": "-1", "DOCSMITH_LOG_FORMAT": "xml"})
	if err == nil {
		t.Fatal("bad values accepted")
	}
	for _, want := range []string{`turn_timeout (from flag --turn-timeout) = "soon"`, "workers (from env DOCSMITH_WORKERS)", "log_format", "one of text, json"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestFileUnknownOption(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(file, []byte("adr: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := load(t, []string{"--config", file}, nil)
	if err == nil || !strings.Contains(err.Error(), `unknown option "adr"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestSecretsMasked(t *testing.T) {
	t.Parallel()
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte("sk-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	real, err := load(t, nil, map[string]string{"DOCSMITH_ANTHROPIC_API_KEY": "sk-ant-secret", "DOCSMITH_OPENAI_API_KEY_FILE": keyFile})
	if err != nil {
		t.Fatal(err)
	}
	if real.Models.OpenAIAPIKey != "sk-from-file" || real.Models.AnthropicAPIKey != "sk-ant-secret" {
		t.Fatalf("keys = %q, %q", real.Models.OpenAIAPIKey, real.Models.AnthropicAPIKey)
	}
	var shown bytes.Buffer
	if err := real.Show(&shown); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(shown.String(), "sk-") || !strings.Contains(shown.String(), "file DOCSMITH_OPENAI_API_KEY_FILE") {
		t.Fatalf("config show leaks a key or hides its source:\n%s", shown.String())
	}

	c := Config{raw: map[string]string{"s": "hunter2"}, sources: map[string]string{"s": "env"}}
	var out bytes.Buffer
	if err := c.show(&out, []option{{name: "s", secret: true}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "hunter2") || !strings.Contains(out.String(), "********") {
		t.Fatalf("secret not masked:\n%s", out.String())
	}
}

func TestHelpListsEveryOption(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := Help(&out); err != nil {
		t.Fatal(err)
	}
	for _, o := range table() {
		if !strings.Contains(out.String(), o.EnvName()) || !strings.Contains(out.String(), "--"+o.flagName()) {
			t.Errorf("help lacks %s / --%s", o.EnvName(), o.flagName())
		}
	}
}

// TestSecretValuesMaskedInErrors: a secret option's bad value never appears
// in the error, whichever source it came from, and even when the
// validator's own message repeats it; other options still show theirs.
func TestSecretValuesMaskedInErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		secrets []string
		want    []string
	}{
		{
			name:    "database URL from the environment",
			env:     map[string]string{"DOCSMITH_DATABASE_URL": "mysql://u:pass@h/db"},
			secrets: []string{"pass", "u:pass"},
			want:    []string{"database_url (from env DOCSMITH_DATABASE_URL)", `"mysql://********"`, "postgres://"},
		},
		{
			name:    "database URL from a flag",
			args:    []string{"--database-url", "postgre://admin:s3cr3t-pw@db.internal/prod"},
			secrets: []string{"s3cr3t-pw", "db.internal"},
			want:    []string{"database_url (from flag --database-url)", "secret, masked"},
		},
		{
			name:    "redis URL without a scheme",
			env:     map[string]string{"DOCSMITH_REDIS_URL": "hunter2@cache:6379"},
			secrets: []string{"hunter2"},
			want:    []string{"redis_url (from env DOCSMITH_REDIS_URL)", `"********"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := load(t, tt.args, tt.env)
			if err == nil {
				t.Fatal("bad value accepted")
			}
			for _, s := range tt.secrets {
				if strings.Contains(err.Error(), s) {
					t.Errorf("error shows the secret %q: %v", s, err)
				}
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}

	t.Run("a validator that repeats the value", func(t *testing.T) {
		t.Parallel()
		echo := func(c *Config, v string) error {
			pw, _, _ := strings.Cut(strings.TrimPrefix(v, "https://me:"), "@")
			return fmt.Errorf("cannot use %q (password %s)", v, pw)
		}
		l := &Loader{fs: flag.NewFlagSet("t", flag.ContinueOnError), flags: map[string]*string{}, file: new(string),
			options: []option{{name: "token", secret: true, set: echo}, {name: "plain", set: echo}}}
		_, err := l.Load(func(k string) (string, bool) {
			v, ok := map[string]string{"DOCSMITH_TOKEN": "https://me:pa55word@example.test", "DOCSMITH_PLAIN": "visible"}[k]
			return v, ok
		})
		if err == nil {
			t.Fatal("bad value accepted")
		}
		if strings.Contains(err.Error(), "pa55word") || strings.Contains(err.Error(), "me:") {
			t.Errorf("error shows the secret: %v", err)
		}
		if !strings.Contains(err.Error(), `plain (from env DOCSMITH_PLAIN) = "visible"`) {
			t.Errorf("error hides a value that is not secret: %v", err)
		}
	})
}

// TestWorkflowOptions checks the workflow options' defaults and that each
// refuses what it cannot use, naming the option.
func TestWorkflowOptions(t *testing.T) {
	t.Parallel()
	c, err := load(t, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := c.Workflows
	if w.Location != time.UTC || w.DailyCap != 50 || w.NewRunWhileActive || w.SyncInterval != 5*time.Minute || w.Tick != 30*time.Second || w.WebhookReads != 16 {
		t.Fatalf("workflow defaults = %+v", w)
	}

	c, err = load(t, []string{"--workflow-timezone", "Europe/Berlin", "--workflow-daily-cap", "0", "--workflow-new-run-while-active=true"}, map[string]string{
		"DOCSMITH_WORKFLOW_SYNC_INTERVAL": "1m",
		"DOCSMITH_WORKFLOW_TICK":          "5s",
		"DOCSMITH_WEBHOOK_CONCURRENCY":    "4",
	})
	if err != nil {
		t.Fatal(err)
	}
	w = c.Workflows
	if w.Location.String() != "Europe/Berlin" || w.DailyCap != 0 || !w.NewRunWhileActive || w.SyncInterval != time.Minute || w.Tick != 5*time.Second || w.WebhookReads != 4 {
		t.Fatalf("workflow options = %+v", w)
	}

	tests := []struct {
		env  string
		bad  string
		want string
	}{
		{"DOCSMITH_WORKFLOW_TIMEZONE", "Mars/Olympus_Mons", "IANA time zone"},
		{"DOCSMITH_WORKFLOW_TIMEZONE", "Local", "IANA time zone"},
		{"DOCSMITH_WORKFLOW_TIMEZONE", "", "IANA time zone"},
		{"DOCSMITH_WORKFLOW_TIMEZONE", " UTC", "IANA time zone"},
		{"DOCSMITH_WORKFLOW_DAILY_CAP", "-1", "at least 0"},
		{"DOCSMITH_WORKFLOW_DAILY_CAP", "lots", "whole number"},
		{"DOCSMITH_WORKFLOW_NEW_RUN_WHILE_ACTIVE", "sometimes", "true or false"},
		{"DOCSMITH_WORKFLOW_SYNC_INTERVAL", "1s", "at least 10s"},
		{"DOCSMITH_WORKFLOW_SYNC_INTERVAL", "soon", "at least 10s"},
		{"DOCSMITH_WORKFLOW_TICK", "100ms", "at least 1s"},
		{"DOCSMITH_WEBHOOK_CONCURRENCY", "0", "at least 1"},
	}
	for _, tc := range tests {
		_, err := load(t, nil, map[string]string{tc.env: tc.bad})
		name := strings.ToLower(strings.TrimPrefix(tc.env, "DOCSMITH_"))
		if err == nil || !strings.Contains(err.Error(), name+" (from env "+tc.env+")") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s=%q: err = %v; want it to name %s and say %q", tc.env, tc.bad, err, name, tc.want)
		}
	}

	// config show lists them with their sources; --help documents them.
	c, err = load(t, []string{"--workflow-tick", "1m"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var shown, help bytes.Buffer
	if err := c.Show(&shown); err != nil {
		t.Fatal(err)
	}
	if err := Help(&help); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"workflow_timezone  ", "UTC", "workflow_tick  ", "flag --workflow-tick"} {
		if !strings.Contains(shown.String(), want) {
			t.Errorf("config show lacks %q:\n%s", want, shown.String())
		}
	}
	for _, want := range []string{"--workflow-timezone", "DOCSMITH_WORKFLOW_DAILY_CAP", "--workflow-new-run-while-active", "--workflow-sync-interval", "--workflow-tick"} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

// TestIndexPollInterval: a minute by default, 0 turns polling off, and a
// negative or malformed value is refused naming the option.
func TestIndexPollInterval(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		value string
		want  time.Duration
	}{{"", time.Minute}, {"0", 0}, {"1s", time.Second}, {"15m", 15 * time.Minute}} {
		env := map[string]string{}
		if tc.value != "" {
			env["DOCSMITH_INDEX_POLL_INTERVAL"] = tc.value
		}
		c, err := load(t, nil, env)
		if err != nil || c.IndexPollInterval != tc.want {
			t.Errorf("index_poll_interval %q = %s (%v), want %s", tc.value, c.IndexPollInterval, err, tc.want)
		}
	}
	for _, bad := range []string{"-1s", "soon"} {
		_, err := load(t, nil, map[string]string{"DOCSMITH_INDEX_POLL_INTERVAL": bad})
		if err == nil || !strings.Contains(err.Error(), "index_poll_interval") && !strings.Contains(err.Error(), "INDEX_POLL_INTERVAL") {
			t.Errorf("index_poll_interval %q: %v, want an error naming the option", bad, err)
		}
	}
}

// TestEndpointPasswordsMasked: an endpoint option that is not secret itself
// (embeddings_base_url, rerank_url) is shown without a password its URL
// carries, and the rest of the URL stays readable.
func TestEndpointPasswordsMasked(t *testing.T) {
	t.Parallel()
	c, err := load(t, nil, map[string]string{
		"DOCSMITH_EMBEDDINGS":          "openai/some-model",
		"DOCSMITH_EMBEDDINGS_BASE_URL": "https://svc:embed-pass-1@embed.internal/v1",
		"DOCSMITH_RERANK_URL":          "https://svc:rerank-pass-2@rerank.internal/v1/rerank",
	})
	if err != nil {
		t.Fatal(err)
	}
	var shown bytes.Buffer
	if err := c.Show(&shown); err != nil {
		t.Fatal(err)
	}
	out := shown.String()
	for _, pw := range []string{"embed-pass-1", "rerank-pass-2"} {
		if strings.Contains(out, pw) {
			t.Errorf("config show prints the password %q:\n%s", pw, out)
		}
	}
	for _, want := range []string{"https://svc:xxxxx@embed.internal/v1", "https://svc:xxxxx@rerank.internal/v1/rerank"} {
		if !strings.Contains(out, want) {
			t.Errorf("config show lacks %q:\n%s", want, out)
		}
	}
}
