package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// uiLogin runs 'docsmith ui login': it asks the server for a one-time
// sign-in link for the admin key and prints it.
func uiLogin(ctx context.Context, args []string, env Env) error {
	fs := newFlagSet("ui login", env)
	c := jobFlags(fs, env)
	if _, err := parse(fs, args); err != nil {
		return usageErr(err)
	}
	if c.key == "" {
		return errors.New("an admin key is needed: --key or DOCSMITH_API_KEY")
	}
	var out struct {
		Path      string `json:"path"`
		ExpiresAt string `json:"expiresAt"`
	}
	if err := c.send(ctx, "POST", strings.TrimRight(c.base, "/")+"/ui/login-links", nil, false, &out); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s%s\n", strings.TrimRight(c.base, "/"), out.Path)
	fmt.Fprintf(env.Stderr, "Open the link in a browser to sign in; it works once, until %s.\n", out.ExpiresAt)
	return nil
}
