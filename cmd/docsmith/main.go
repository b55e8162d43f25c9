// Command docsmith runs the docsmith service and its set-up commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/docsmith/docsmith/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, LookupEnv: os.LookupEnv})
	stop()
	os.Exit(code)
}
