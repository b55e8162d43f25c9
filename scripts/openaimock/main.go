//go:build unix

// Command openaimock is a model server for make bench-compare: it speaks the
// OpenAI Chat Completions streaming API (llmtest's server, byte for byte as
// OpenAI frames it) and answers every request at once with the answer of
// the Node chat server's mock model, 200 text deltas of 4 characters, so
// that docsmith with an openai/… model is loaded like the Node server. GET
// /stats reports how many answers it streamed and the CPU time it used, for
// its cost to be reported apart from docsmith's.
//
//	openaimock -addr 127.0.0.1:18600   # then DOCSMITH_OPENAI_BASE_URL=http://127.0.0.1:18600/v1
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/docsmith/docsmith/internal/llm/llmtest"
)

// The Node server's mock answer (peers/chat-server/server.mjs).
const (
	answerDeltas = 200
	deltaChars   = 4
	sentence     = "Per the cited docs pages, follow the steps shown there and check each setting. "
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	if err := run(*addr); err != nil {
		fmt.Fprintln(os.Stderr, "openaimock:", err)
		os.Exit(1)
	}
}

func run(addr string) error {
	text := strings.Repeat(sentence, answerDeltas*deltaChars/len(sentence)+1)[:answerDeltas*deltaChars]
	deltas := make([]string, answerDeltas)
	for i := range deltas {
		deltas[i] = text[i*deltaChars : (i+1)*deltaChars]
	}
	answer := llmtest.Text(deltas...).WithUsage(1000, answerDeltas)
	model := llmtest.OpenAIHandler(answer, log.Printf)
	var answered atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		model.ServeHTTP(w, r)
		answered.Add(1)
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"answered": answered.Load(), "cpu_s": cpu.Seconds()})
	})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	fmt.Printf("openaimock: serving http://%s/v1\n", ln.Addr())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		return err
	}
	return nil
}
