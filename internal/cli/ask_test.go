package cli

import (
	"bytes"
	"strings"
	"testing"
)

func TestPrintAnswer(t *testing.T) {
	t.Parallel()
	stream := strings.Join([]string{
		`data: {"type":"start","messageId":"m","messageMetadata":{"threadId":"thr_1"}}`, ``,
		`data: {"type":"source-url","sourceId":"src_1","url":"https://docs.example/a#b","title":"A › B"}`, ``,
		`: ping`, ``,
		`data: {"type":"text-start","id":"t"}`, ``,
		`data: {"type":"text-delta","id":"t","delta":"Use the "}`, ``,
		`data: {"type":"text-delta","id":"t","delta":"--port flag [1]."}`, ``,
		`data: {"type":"data-answer-status","id":"answer-status","data":{"status":"partial","note":"The docs don't mention Datadog.","missing":["Datadog"]}}`, ``,
		`data: {"type":"finish","messageMetadata":{"threadId":"thr_1"}}`, ``,
		`data: [DONE]`, ``,
	}, "\n")
	var out bytes.Buffer
	if err := printAnswer(strings.NewReader(stream), &out, "thr_1"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Use the --port flag [1].\n", "[1] A › B  https://docs.example/a#b", "--thread thr_1", "status partial: The docs don't mention Datadog."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	err := printAnswer(strings.NewReader(`data: {"type":"error","errorText":"model unavailable"}`+"\n\n"), &bytes.Buffer{}, "")
	if err == nil || !strings.Contains(err.Error(), "model unavailable") {
		t.Fatalf("in-band error: %v", err)
	}
}
