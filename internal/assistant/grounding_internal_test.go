package assistant

import (
	"reflect"
	"testing"
)

// A passage of a made-up product, written for these tests.
const testPassageText = `## Ports

The relay listens on port 8080 by default. Set ` + "`RELAY_PORT`" + ` to change it, or pass
` + "`--port 9090`" + ` to relay start. The relay reloads relay.yaml when it changes.

Timeouts are 1.5 seconds. Webhooks are signed with HMAC.`

func TestJudgeSentences(t *testing.T) {
	t.Parallel()
	p := newGroundedPassage("Relay › Ports", testPassageText)
	cited := []groundedPassage{p}
	for _, tc := range []struct {
		name      string
		sentence  string
		cited     []groundedPassage
		supported bool
		missing   []string
	}{
		{"paraphrase", "By default the relay listens on port 8080 [1].", cited, true, nil},
		{"inline code and flag", "Pass `--port 9090` to change the port [1].", cited, true, nil},
		{"environment variable", "Set RELAY_PORT to use another port [1].", cited, true, nil},
		{"decimal number", "The timeout is 1.5 seconds [1].", cited, true, nil},
		{"file name", "It reloads relay.yaml on changes [1].", cited, true, nil},
		{"wrong number", "The relay listens on port 3000 [1].", cited, false, []string{"3000"}},
		{"number inside another", "The relay listens on port 80 [1].", cited, false, []string{"80"}},
		{"invented flag", "Pass `--verbose` to see more [1].", cited, false, []string{"--verbose"}},
		{"unknown name", "Webhooks can also be signed with Datadog keys [1].", cited, false, []string{"Datadog"}},
		{"unknown acronym", "Webhooks are signed with RSA [1].", cited, false, []string{"RSA"}},
		{"words the passage lacks", "Deployments replicate across regions automatically [1].", cited, false,
			[]string{"Deployments", "replicate", "regions", "automatically"}},
		{"one word paraphrased of many", "The relay reloads its configuration file relay.yaml when it changes [1].", cited, true, nil},
		{"nothing cited", "The relay listens on port 8080.", nil, false, []string{"8080", "relay", "listens", "port"}},
		{"nothing to check", "Here is how:", nil, true, nil},
		{"a word inside another is not it", "It can lay eggs [1].", cited, false, []string{"lay", "eggs"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := judge(tc.sentence, segProse, tc.cited)
			if v.supported != tc.supported || !reflect.DeepEqual(v.missing, tc.missing) {
				t.Errorf("judge(%q) = %v missing %q; want %v missing %q", tc.sentence, v.supported, v.missing, tc.supported, tc.missing)
			}
		})
	}
}

func TestJudgeCodeBlocks(t *testing.T) {
	t.Parallel()
	p := newGroundedPassage("Relay", testPassageText)
	for _, tc := range []struct {
		code      string
		supported bool
		missing   []string
	}{
		{"```sh\nrelay start --port 9090\n```", true, nil},
		{"```sh\nrelay start --port 9090 --tls\n```", false, []string{"--tls"}},
		{"```yaml\nport: 8080\n```", true, nil},
	} {
		v := judge(tc.code, segCode, []groundedPassage{p})
		if v.supported != tc.supported || !reflect.DeepEqual(v.missing, tc.missing) {
			t.Errorf("judge(%q) = %v missing %q; want %v missing %q", tc.code, v.supported, v.missing, tc.supported, tc.missing)
		}
	}
}

func TestIsIdentifier(t *testing.T) {
	t.Parallel()
	for tok, want := range map[string]bool{
		"--force": true, "app.json": true, "RELAY_PORT": true, "useChat": true, "v2": true, "ES2020": true,
		"@scope/pkg": true, "a/b": true, "std::string": true,
		"built-in": false, "e.g": false, "SSO": false, "Relay": false, "1.5": false, "port": false, "-": false,
	} {
		if got := isIdentifier(tok); got != want {
			t.Errorf("isIdentifier(%q) = %v, want %v", tok, got, want)
		}
	}
}

func TestIsDecline(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		declineSentence: true,
		"The documentation doesn’t mention a Datadog integration.": true,
		"The provided passages do not cover rate limits.":          true,
		"I couldn't find anything about SAML in the docs.":         true,
		"There is no information about billing in the passages.":   true,
		"Webhooks aren't covered in the documentation.":            true,
		"I don't know.": true,
		"The relay does not cover requests over 10 MB; it rejects them [1].": false,
		"Set the port in relay.yaml [1].":                                    false,
		"The docs describe three ways to deploy [2].":                        false,
		"It syncs from many sources; it does not include hidden files [1].":  false,
		"The given context does not mention retries.":                        true,
	} {
		if got := isDecline(s); got != want {
			t.Errorf("isDecline(%q) = %v, want %v", s, got, want)
		}
	}
}
