package main

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// config is what the init container is told through its environment.
type config struct {
	Repository string // BERTH_SOURCE_REPOSITORY, an http(s) URL
	Revision   string // BERTH_SOURCE_REVISION: branch, tag or full commit hash
	Dir        string // BERTH_CHECKOUT_DIR
	Token      string // GIT_TOKEN, optional
}

func loadConfig(getenv func(string) string) (config, error) {
	c := config{
		Repository: strings.TrimSpace(getenv("BERTH_SOURCE_REPOSITORY")),
		Revision:   strings.TrimSpace(getenv("BERTH_SOURCE_REVISION")),
		Dir:        strings.TrimSpace(getenv("BERTH_CHECKOUT_DIR")),
		Token:      getenv("GIT_TOKEN"),
	}
	var missing []string
	for _, v := range []struct{ name, value string }{
		{"BERTH_SOURCE_REPOSITORY", c.Repository},
		{"BERTH_SOURCE_REVISION", c.Revision},
		{"BERTH_CHECKOUT_DIR", c.Dir},
	} {
		if v.value == "" {
			missing = append(missing, v.name)
		}
	}
	if len(missing) > 0 {
		return c, fmt.Errorf("required environment variable(s) not set: %s", strings.Join(missing, ", "))
	}

	u, err := url.Parse(c.Repository)
	if err != nil {
		// url.Parse's error quotes the URL; a URL with credentials must not
		// be echoed, so only say that it is malformed.
		return c, errors.New("BERTH_SOURCE_REPOSITORY is not a valid URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return c, fmt.Errorf("BERTH_SOURCE_REPOSITORY must be an http or https URL, got scheme %q", u.Scheme)
	}
	if u.Host == "" {
		return c, errors.New("BERTH_SOURCE_REPOSITORY has no host")
	}
	if _, hasPassword := u.User.Password(); hasPassword {
		// go-git would store such a URL in .git/config; the token belongs
		// in GIT_TOKEN, which is never written to disk.
		return c, errors.New("BERTH_SOURCE_REPOSITORY must not embed credentials; pass the token in GIT_TOKEN")
	}
	return c, nil
}

// sameRepository reports whether two repository URLs name the same
// repository, ignoring case of scheme and host, user info, a trailing slash
// and a trailing ".git".
func sameRepository(a, b string) bool {
	na, errA := normaliseURL(a)
	nb, errB := normaliseURL(b)
	return errA == nil && errB == nil && na == nb
}

func normaliseURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	path := strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), ".git")
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host) + path, nil
}

// displayURL is raw without any user info, for messages.
func displayURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User = nil
	return u.String()
}
