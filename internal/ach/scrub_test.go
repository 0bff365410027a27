package ach

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/redact"
)

// echoAll answers every request with an error that repeats everything the
// service received: the header, the query and the body.
func echoAll(status int) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, r *http.Request, body []byte) {
		msg := r.Header.Get("Authorization") + " " + r.URL.RawQuery + " " + string(body)
		reply(status, fmt.Sprintf(`{"error":true,"code":%q,"message":%q}`, msg, msg))(w, r, nil)
	}
}

// secretCalls calls every method that carries a secret.
func secretCalls(c *Client) map[string]func() error {
	ctx := context.Background()
	src := FundingSourceRequest{UserID: testUser, Routing: testRouting, Account: testAccount, Type: Checking}
	return map[string]func() error{
		"create source": func() error { _, err := c.CreateFundingSource(ctx, src); return err },
		"on demand":     func() error { _, err := c.CreateOnDemandFundingSource(ctx, src); return err },
		"processor":     func() error { _, err := c.CreateProcessorFundingSource(ctx, "plaid", testUser, testToken); return err },
		"available":     func() error { _, err := c.AccountAvailable(ctx, testRouting, testAccount); return err },
		"delete":        func() error { return c.DeleteAccount(ctx, testRouting, testAccount) },
		"get user":      func() error { _, err := c.GetUser(ctx, testUser); return err },
	}
}

// noSecret fails when text holds the key, the token or the whole account.
func noSecret(t *testing.T, what, text string) {
	t.Helper()
	for _, s := range []string{testKey, testToken, testAccount} {
		if strings.Contains(text, s) {
			t.Errorf("%s shows %q: %s", what, s, text)
		}
	}
}

func TestSecretsNeverInErrors(t *testing.T) {
	for _, status := range []int{400, 403, 404, 500, 200} {
		srv, _ := fakeService(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
			if status == 200 {
				msg := r.Header.Get("Authorization") + " " + r.URL.RawQuery + " " + string(body)
				reply(200, fmt.Sprintf(`{"success":false,"message":%q}`, msg))(w, r, nil)
				return
			}
			echoAll(status)(w, r, body)
		})
		c := newTestClient(t, srv.URL)
		for name, call := range secretCalls(c) {
			err := call()
			if err == nil {
				t.Fatalf("%d %s: no error", status, name)
			}
			e := asError(t, err)
			noSecret(t, fmt.Sprintf("%d %s error", status, name), err.Error())
			noSecret(t, "Message", e.Message)
			noSecret(t, "Code", e.Code)
			if strings.Contains(err.Error(), testRouting+" ") && !strings.Contains(err.Error(), redact.Account(testAccount)) &&
				(name == "create source" || name == "available") {
				t.Errorf("%s: the account is not shown masked: %v", name, err)
			}
		}
	}
}

// TestURLOfAFailedQueryIsMasked: net/http quotes the URL of a failed
// request, and the /accounts query holds an account number. Neither the
// text nor the *url.Error reached with errors.As may show it.
func TestURLOfAFailedQueryIsMasked(t *testing.T) {
	for name, base := range map[string]string{"closed port": closedAddr(t), "hang up": ""} {
		if base == "" {
			srv, _ := fakeService(t, hangUp)
			base = srv.URL
		}
		c := newTestClient(t, base)
		_, err := c.AccountAvailable(context.Background(), testRouting, testAccount)
		if err == nil {
			t.Fatalf("%s: no error", name)
		}
		noSecret(t, name, err.Error())
		var ue *url.Error
		if !errors.As(err, &ue) {
			t.Fatalf("%s: %v does not wrap a *url.Error", name, err)
		}
		noSecret(t, name+" url.Error", ue.Error())
		if !strings.Contains(ue.URL, redact.Account(testAccount)) {
			t.Errorf("%s: URL %q does not show the masked account", name, ue.URL)
		}
	}
}

func TestRequestFormattingMasksAccount(t *testing.T) {
	r := FundingSourceRequest{UserID: testUser, Routing: testRouting, Account: testAccount, Type: Checking}
	for _, s := range []string{fmt.Sprint(r), fmt.Sprintf("%v", r), fmt.Sprintf("%+v", r), fmt.Sprintf("%s", r), r.LogValue().String()} {
		noSecret(t, "formatted request", s)
		if !strings.Contains(s, redact.Account(testAccount)) {
			t.Errorf("formatted request %q lacks the masked account", s)
		}
	}
}
