package tenant

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/docsmith/docsmith/internal/apperr"
)

// The bounds of DomainSettings.ChecksEvery: every run asks the domain's
// model each check's question, so runs closer than a quarter of an hour
// spend answers without watching any better, and a month is the longest
// a team would wait to hear of a regression.
const (
	MinChecksEvery     = 15 * time.Minute
	MaxChecksEvery     = 31 * 24 * time.Hour
	DefaultChecksEvery = 24 * time.Hour
)

// ChecksOff is the ChecksEvery value that stops the domain's scheduled
// check runs.
const ChecksOff = "off"

// maxAlertURLBytes bounds an alert webhook's URL.
const maxAlertURLBytes = 2048

// checksEveryWords are the named intervals of ChecksEvery.
var checksEveryWords = map[string]time.Duration{
	"hourly": time.Hour,
	"daily":  24 * time.Hour,
	"weekly": 7 * 24 * time.Hour,
}

// ChecksInterval is how often the domain's answer checks run against its
// served index, and false when the team turned the schedule off. It is
// the one reading of ChecksEvery; CheckChecksSchedule has refused what it
// cannot read, which runs daily should one be stored all the same.
func (s DomainSettings) ChecksInterval() (time.Duration, bool) {
	every, err := parseChecksEvery(s.ChecksEvery)
	switch {
	case err != nil:
		return DefaultChecksEvery, true
	case every == 0:
		return 0, false
	}
	return every, true
}

// parseChecksEvery reads a ChecksEvery value: 0 for off.
func parseChecksEvery(v string) (time.Duration, error) {
	v = strings.ToLower(strings.TrimSpace(v))
	if v == "" {
		return DefaultChecksEvery, nil
	}
	if v == ChecksOff {
		return 0, nil
	}
	if d, ok := checksEveryWords[v]; ok {
		return d, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < MinChecksEvery || d > MaxChecksEvery {
		return 0, fmt.Errorf("must be hourly, daily, weekly, off, or a duration from %s to %s such as 6h", shortDuration(MinChecksEvery), shortDuration(MaxChecksEvery))
	}
	return d, nil
}

func shortDuration(d time.Duration) string {
	s := d.String()
	s = strings.TrimSuffix(s, "0s")
	return strings.TrimSuffix(s, "0m")
}

// CheckChecksSchedule checks a domain's schedule of answer checks and its
// alert webhook: an interval it can read, and a webhook that is an
// http(s) URL without credentials in it, whose signing secret is named
// (a variable or a file, not both). The key arguments are what the caller
// calls the settings (flags, set-up file keys), for its errors.
func CheckChecksSchedule(s DomainSettings, everyKey, urlKey, secretEnvKey, secretFileKey string) error {
	if _, err := parseChecksEvery(s.ChecksEvery); err != nil {
		return apperr.New(apperr.Invalid, "%s %q %v", everyKey, s.ChecksEvery, err)
	}
	if err := checkSecretSource("alert webhook secret", s.AlertWebhookSecretEnv, s.AlertWebhookSecretFile, secretEnvKey, secretFileKey); err != nil {
		return err
	}
	if s.AlertWebhookURL == "" {
		if s.AlertWebhookSecretEnv != "" || s.AlertWebhookSecretFile != "" {
			return apperr.New(apperr.Invalid, "%s or %s is set without %s: name the URL the alerts go to", secretEnvKey, secretFileKey, urlKey)
		}
		return nil
	}
	if err := checkAlertURL(s.AlertWebhookURL); err != nil {
		// The URL is not repeated: a chat's incoming webhook URL is itself
		// a secret.
		return apperr.New(apperr.Invalid, "%s %v", urlKey, err)
	}
	if s.AlertWebhookSecretEnv == "" && s.AlertWebhookSecretFile == "" {
		return apperr.New(apperr.Invalid, "%s needs %s or %s: the secret that signs each alert, so the receiver can tell it comes from docsmith", urlKey, secretEnvKey, secretFileKey)
	}
	return nil
}

// checkAlertURL says what is wrong with an alert webhook URL, as the end
// of a sentence that names the setting; nil when it is acceptable here.
// Which hosts and schemes the server may reach is the server's policy,
// applied again when an alert is sent.
func checkAlertURL(raw string) error {
	if len(raw) > maxAlertURLBytes {
		return fmt.Errorf("is longer than %d bytes", maxAlertURLBytes)
	}
	if strings.ContainsFunc(raw, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return errors.New("must not contain spaces or control characters")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return errors.New("must be an https:// URL, such as a Slack incoming webhook's")
	}
	if u.User != nil {
		return errors.New("must not carry a user or password; the alert is signed with the secret instead")
	}
	if u.Fragment != "" {
		return errors.New("must not have a #fragment")
	}
	return nil
}
