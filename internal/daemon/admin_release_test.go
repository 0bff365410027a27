package daemon

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestAdminRelease: POST /v1/release passes the body to Options.Release and
// answers 200 with its line; a refusal is 409 with the reason; a wrong
// token 401; without a configured token the endpoint is refused (403)
// and Release is never called.
func TestAdminRelease(t *testing.T) {
	t.Parallel()
	const token = "adm1n-t0ken-0123456789abcdef"
	s := guardedScheduler(t, Options{Logger: newLogSink().logger()})
	var got []string
	release := func(_ context.Context, body []byte) (string, error) {
		got = append(got, string(body))
		switch {
		case strings.Contains(string(body), `"line":2`):
			return "released pay.csv line 2", nil
		case strings.Contains(string(body), `"line":3`):
			return "", Refusal(errors.New("pay.csv line 3 is pending, not held"))
		}
		return "", errors.New("ledger closed")
	}
	post := func(h http.Handler, auth, body string) (int, string) {
		req := newAdminRequest("POST", "/v1/release")
		req.Body = http.NoBody
		if body != "" {
			req.Body = readCloser{strings.NewReader(body)}
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := newRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}

	open := s.AdminHandler(AdminOptions{Release: release})
	if code, body := post(open, "", `{"line":2}`); code != http.StatusForbidden || !strings.Contains(body, "admin.token_file") {
		t.Errorf("release without a configured token = %d %s, want 403 naming admin.token_file", code, body)
	}
	h := s.AdminHandler(AdminOptions{Release: release, Token: token})
	if code, _ := post(h, "Bearer wrong-0123456789abcdef", `{"line":2}`); code != http.StatusUnauthorized {
		t.Errorf("a wrong token = %d, want 401", code)
	}
	if len(got) != 0 {
		t.Fatalf("Release called on a refused request: %q", got)
	}
	for _, c := range []struct {
		body string
		code int
		want string
	}{
		{`{"line":2}`, http.StatusOK, `"result": "released pay.csv line 2"`},
		{`{"line":3}`, http.StatusConflict, "pending, not held"},
		{`{"line":4}`, http.StatusInternalServerError, "ledger closed"},
	} {
		if code, body := post(h, "Bearer "+token, c.body); code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("release %s = %d %s, want %d %q", c.body, code, body, c.code, c.want)
		}
	}
	if code, _ := post(s.AdminHandler(AdminOptions{Token: token}), "Bearer "+token, `{}`); code != http.StatusNotFound {
		t.Errorf("release with no Release = %d, want 404", code)
	}
}

// TestSchedulerRequest: Request runs an idle job at once.
func TestSchedulerRequest(t *testing.T) {
	t.Parallel()
	ran := make(chan struct{}, 1)
	s := newStarted(t, []Job{{Name: "submit", Spec: yearly, Run: func(context.Context) (string, error) {
		ran <- struct{}{}
		return "", nil
	}}}, Options{Logger: newLogSink().logger()})
	s.Request("submit", "release")
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("Request did not run the job")
	}
}

type readCloser struct{ *strings.Reader }

func (readCloser) Close() error { return nil }
