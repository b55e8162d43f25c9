package app

import (
	"path/filepath"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/analytics"
	"github.com/docsmith/docsmith/internal/answercheck"
	"github.com/docsmith/docsmith/internal/gapproof"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/projectrepo"
)

// gapProver checks the gaps of a domain after each build of its index:
// it reads the projects' mirrors as the indexer does, and asks through an
// assistant over the served index whose turns are discarded, so that the
// questions asked again never show in the analytics.
func (m *Main) gapProver(b *Backend, git *gitcli.Git, jobs *agentjob.Service, stats *analytics.Service) *gapproof.Prover {
	repos := projectrepo.New(projectrepo.Config{
		Git:       git,
		WorkDir:   filepath.Join(m.Config.DataDir, "index-work"),
		MirrorDir: filepath.Join(m.Config.DataDir, "git-mirrors"),
		LookupEnv: m.LookupEnv,
		Log:       m.Log,
	})
	return gapproof.New(gapproof.Config{
		Lifecycles: stats,
		Jobs:       jobs,
		Projects:   b.Tenants,
		Repos:      repos,
		Asker:      answercheck.Asker{Service: m.newAssistant(b, answercheck.DiscardTurns{}, nil)},
		Now:        m.Now,
		Log:        m.Log,
	})
}
