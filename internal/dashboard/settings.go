package dashboard

import (
	"net/http"
	"strings"

	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/freshness"
	"github.com/docsmith/docsmith/internal/tenant"
)

type domainSetting struct {
	tenant.Domain
	Snippet string
	// Spend is the domain's model spend today against its budget; nil
	// when the domain has no model (its answers cost nothing) or no
	// SpendReader is configured.
	Spend *assistant.DaySpend
	// Ref is the branch the domain reads; Index what is known of its
	// search index (nil when no IndexStatus is configured).
	Ref   string
	Index *freshness.Status
}

type settingsView struct {
	Projects []tenant.Project
	Domains  []domainSetting
	Keys     []tenant.Key
	// NewSecret is shown once, right after the key is made.
	NewSecret string
	NewKind   string
	CurrentID string
}

func (h *Handler) settingsPage(w http.ResponseWriter, r *http.Request, v *viewer) error {
	return h.showSettings(w, r, v, "", "")
}

func (h *Handler) showSettings(w http.ResponseWriter, r *http.Request, v *viewer, secret, kind string) error {
	keys, err := h.Tenants.Store().ListKeys(r.Context(), v.session.OrgID)
	if err != nil {
		return err
	}
	view := settingsView{Projects: v.projects, Keys: keys, NewSecret: secret, NewKind: kind, CurrentID: v.session.KeyID}
	base := h.PublicURL
	if base == "" {
		scheme := "http"
		if h.secure(r) {
			scheme = "https"
		}
		base = scheme + "://" + r.Host
	}
	// Right after an assistant key is made, the snippets carry it: such a
	// key is public by nature (it sits in every page with the widget).
	key := "svc_dsc_…"
	if kind == string(apikey.Assistant) && secret != "" {
		key = secret
	}
	for _, d := range v.domains {
		ds := domainSetting{Domain: d, Snippet: widgetSnippet(strings.TrimRight(base, "/"), d, key), Ref: d.Ref}
		for _, p := range v.projects {
			if p.ID == d.ProjectID {
				ds.Ref = freshness.RefOf(d, p)
			}
		}
		if h.IndexStatus != nil {
			st, err := h.IndexStatus.Status(r.Context(), d.ID)
			if err != nil {
				return err
			}
			ds.Index = &st
		}
		if h.Spend != nil && assistant.PaidModel(d.Model) {
			spend, err := h.Spend.DaySpend(r.Context(), d)
			if err != nil {
				return err
			}
			ds.Spend = &spend
		}
		view.Domains = append(view.Domains, ds)
	}
	return h.render(w, r, v, http.StatusOK, "settings", "Settings", "settings", view)
}

// widgetSnippet is the script tag a docs site pastes, with key as its
// assistant key (a placeholder except right after one is made).
func widgetSnippet(base string, d tenant.Domain, key string) string {
	return `<script async src="` + base + `/widget.js" data-domain="` + d.ID + `" data-key="` + key + `" data-title="` + d.ID + ` docs"></script>`
}

func (h *Handler) createKey(w http.ResponseWriter, r *http.Request, v *viewer) error {
	kind := apikey.Kind(r.PostFormValue("kind"))
	if kind != apikey.Admin && kind != apikey.Assistant {
		return apperr.New(apperr.Invalid, "kind must be admin or assistant")
	}
	name := strings.TrimSpace(r.PostFormValue("name"))
	if len(name) > 100 {
		return apperr.New(apperr.Invalid, "the key's name is %d characters; the limit is 100", len(name))
	}
	_, secret, err := h.Tenants.CreateKey(r.Context(), v.session.OrgID, kind, name)
	if err != nil {
		return err
	}
	// Shown in this answer only: a POST's page is not cached (no-store)
	// and reloading it asks before sending the form again.
	return h.showSettings(w, r, v, secret, string(kind))
}

func (h *Handler) revokeKey(w http.ResponseWriter, r *http.Request, v *viewer) error {
	id := r.PathValue("keyId")
	k, err := h.Tenants.Store().GetKey(r.Context(), id)
	if err == nil && k.OrgID != v.session.OrgID {
		err = apperr.New(apperr.NotFound, "key %q not found", id)
	}
	if err != nil {
		return err
	}
	if err := h.Tenants.Store().RevokeKey(r.Context(), v.session.OrgID, id, h.Now()); err != nil {
		return err
	}
	// Its sessions end now; Resolve would also refuse them at their next
	// request.
	if err := h.Sessions.EndAll(r.Context(), id); err != nil {
		return err
	}
	if id == v.session.KeyID {
		h.clearCookie(w, r, sessionCookie)
		http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
		return nil
	}
	http.Redirect(w, r, "/ui/settings?flash=key-revoked", http.StatusSeeOther)
	return nil
}
