// Package projectrepo is everything docsmith reads from a project's
// repository, in one place: the forge token (the same credentials for
// agent turns, index builds and workflow reads), the mirror each build
// fetches into and reads the docs from, the base branch's commit on the
// remote, the files changed between two commits, and the workflow files.
//
// It knows projects and git; it knows nothing of indexes or turns. The
// errors it returns say what to fix (apperr kinds for the API, RepoError
// for the workflow service).
package projectrepo

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/tenant"
)

// Config is what Repos needs.
type Config struct {
	Git *gitcli.Git
	// WorkDir holds the short-lived checkouts: docs too large to read into
	// memory, workflow reads.
	WorkDir string
	// MirrorDir holds a mirror of each repository read (see gitcli.Mirror),
	// which later reads fetch into; "" is WorkDir's "mirrors".
	MirrorDir string
	// MaxDocsInMemory bounds the files a docs read takes into memory from a
	// mirror; a docs root larger in all is checked out into WorkDir.
	// Default DefaultMaxDocsInMemory.
	MaxDocsInMemory int64
	// LookupEnv reads the forge tokens projects name; nil means
	// os.LookupEnv.
	LookupEnv func(string) (string, bool)
	Log       *slog.Logger
}

// DefaultMaxDocsInMemory is Config.MaxDocsInMemory's default: a large docs
// site (mintlify's, 980 pages) takes 11 MB.
const DefaultMaxDocsInMemory = 64 << 20

// Repos reads projects' repositories.
type Repos struct {
	cfg Config
}

// New returns a Repos.
func New(cfg Config) *Repos {
	if cfg.LookupEnv == nil {
		cfg.LookupEnv = os.LookupEnv
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.MirrorDir == "" {
		cfg.MirrorDir = filepath.Join(cfg.WorkDir, "mirrors")
	}
	if cfg.MaxDocsInMemory <= 0 {
		cfg.MaxDocsInMemory = DefaultMaxDocsInMemory
	}
	return &Repos{cfg: cfg}
}

// Credentials reads the project's forge token from the variable or file
// it names, with lookupEnv (nil: os.LookupEnv) for the variable; a project that names none
// (a local or public remote) gets nil. source is the variable or file, for
// messages that tell the operator where the token comes from. A token
// that cannot be read is an apperr Conflict that says which.
func Credentials(p tenant.Project, lookupEnv func(string) (string, bool)) (creds *gitcli.Credentials, source string, err error) {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	var token string
	switch {
	case p.TokenEnv != "":
		source = p.TokenEnv
		v, ok := lookupEnv(p.TokenEnv)
		if !ok || strings.TrimSpace(v) == "" {
			return nil, source, apperr.New(apperr.Conflict, "the forge token variable %s named by project %s is not set", p.TokenEnv, p.ID)
		}
		token = strings.TrimSpace(v)
	case p.TokenFile != "":
		source = p.TokenFile
		b, err := os.ReadFile(p.TokenFile)
		if err != nil {
			return nil, source, apperr.Wrap(err, apperr.Conflict, "the forge token file named by project %s could not be read", p.ID)
		}
		token = strings.TrimSpace(string(b))
	default:
		return nil, "", nil
	}
	user := "x-access-token"
	if p.ForgeKind == tenant.ForgeGitLab {
		user = "oauth2"
	}
	return &gitcli.Credentials{Username: user, Password: token}, source, nil
}

// Credentials is the package's Credentials with this Repos' LookupEnv.
func (r *Repos) Credentials(p tenant.Project) (*gitcli.Credentials, string, error) {
	return Credentials(p, r.cfg.LookupEnv)
}
