package dashboard

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/tenant"
)

type loginView struct {
	Token string // a login link's secret, to post
	Error string
}

func randomString() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

// loginPage shows the sign-in form. A login link lands here with its token
// and shows one button: following a link signs nobody in by itself, so a
// link preview or prefetch does not use it up.
func (h *Handler) loginPage(w http.ResponseWriter, r *http.Request) {
	h.showLogin(w, r, http.StatusOK, loginView{Token: r.URL.Query().Get("token")})
}

func (h *Handler) showLogin(w http.ResponseWriter, r *http.Request, status int, lv loginView) {
	csrf := randomString()
	h.setCookie(w, r, loginCookie, csrf, 30*time.Minute)
	d := layoutData{Title: "Sign in", CSRF: csrf, Page: lv}
	t := h.pages["login"]
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, "layout", d); err != nil {
		h.Log.ErrorContext(r.Context(), "render login", "err", err)
		http.Error(w, "could not render the sign-in page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

// login signs in with an admin key (field key) or a login link's token
// (field token). The form's token must match the cookie the form page set.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	c, cookieErr := r.Cookie(loginCookie)
	form := r.PostFormValue("csrf")
	if cookieErr != nil || form == "" || subtle.ConstantTimeCompare([]byte(c.Value), []byte(form)) != 1 {
		h.showLogin(w, r, http.StatusForbidden, loginView{Error: "The sign-in form expired or came from elsewhere. Try again."})
		return
	}
	ctx := r.Context()
	key := strings.TrimSpace(r.PostFormValue("key"))
	token := r.PostFormValue("token")
	var principal tenant.Principal
	var err error
	switch {
	case token != "":
		principal, err = h.Sessions.Redeem(ctx, token)
	case key == "":
		err = apperr.New(apperr.Invalid, "paste an admin key (svc_...) to sign in")
	default:
		principal, err = h.Tenants.Authenticate(ctx, key)
	}
	if err == nil && principal.Kind != apikey.Admin {
		err = apperr.New(apperr.Forbidden, "this is an assistant key (svc_dsc_...); the dashboard needs an admin key (svc_...)")
	}
	if err != nil {
		status, ok := statusOf[apperr.CodeOf(err)]
		if !ok {
			h.Log.ErrorContext(ctx, "sign-in failed", "err", err)
			status = http.StatusInternalServerError
		}
		h.showLogin(w, r, status, loginView{Token: token, Error: apperr.MessageOf(err)})
		return
	}
	// A session id that came with the request is never reused: sign-in
	// always starts a new session, and ends the old one.
	if old, err := r.Cookie(sessionCookie); err == nil {
		_ = h.Sessions.End(ctx, old.Value)
	}
	id, _, err := h.Sessions.Start(ctx, principal)
	if err != nil {
		h.renderError(w, r, nil, err)
		return
	}
	h.setCookie(w, r, sessionCookie, id, h.Sessions.Absolute)
	h.clearCookie(w, r, loginCookie)
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

// loginLink makes a one-time sign-in link for the admin key in the
// Authorization header ('docsmith ui login').
func (h *Handler) loginLink(w http.ResponseWriter, r *http.Request) {
	writeJSON := func(status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	scheme, key, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	p, err := h.Tenants.Authenticate(r.Context(), strings.TrimSpace(key))
	if !strings.EqualFold(scheme, "Bearer") {
		err = apperr.New(apperr.Unauthorized, "send Authorization: Bearer <admin key>")
	}
	var secret string
	if err == nil {
		secret, err = h.Sessions.NewLoginToken(r.Context(), p)
	}
	if err != nil {
		status, ok := statusOf[apperr.CodeOf(err)]
		if !ok {
			h.Log.ErrorContext(r.Context(), "login link failed", "err", err)
			status = http.StatusInternalServerError
		}
		writeJSON(status, map[string]string{"error": apperr.MessageOf(err)})
		return
	}
	writeJSON(http.StatusCreated, map[string]string{
		"path":      "/ui/login?token=" + url.QueryEscape(secret),
		"expiresAt": h.Now().Add(h.Sessions.LinkTTL).UTC().Format(time.RFC3339),
	})
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request, v *viewer) error {
	c, _ := r.Cookie(sessionCookie) // the viewer came from it
	if err := h.Sessions.End(r.Context(), c.Value); err != nil {
		return err
	}
	h.clearCookie(w, r, sessionCookie)
	http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
	return nil
}

func (h *Handler) logoutEverywhere(w http.ResponseWriter, r *http.Request, v *viewer) error {
	if err := h.Sessions.EndAll(r.Context(), v.session.KeyID); err != nil {
		return err
	}
	h.clearCookie(w, r, sessionCookie)
	http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
	return nil
}
