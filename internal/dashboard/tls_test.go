package dashboard

import "crypto/tls"

// insecureTLS trusts httptest's self-signed server in tests.
func insecureTLS() *tls.Config { return &tls.Config{InsecureSkipVerify: true} } //nolint:gosec // a test server's own certificate
