package echeck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
)

// closedAddr returns the base URL of a loopback port nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

func TestStatusClassification(t *testing.T) {
	cases := []struct {
		status    int
		body      string
		createCls apiwire.Class
		getCls    apiwire.Class
		msg, code string
	}{
		{400, `{"error":true,"message":"The amount field is required.","code":1001}`, apiwire.Permanent, apiwire.Permanent, "The amount field is required.", "1001"},
		{402, `{"error":true,"message":"Request failed","code":"E402"}`, apiwire.Permanent, apiwire.Permanent, "Request failed", "E402"},
		{404, `{"error":true,"message":"Check not found"}`, apiwire.Permanent, apiwire.Permanent, "Check not found", ""},
		{405, `{"error":true,"message":"Method not allowed"}`, apiwire.Permanent, apiwire.Permanent, "Method not allowed", ""},
		{409, `{"error":true,"message":"Conflict"}`, apiwire.Permanent, apiwire.Permanent, "Conflict", ""},
		{422, `{"message":"The given data was invalid.","errors":{"memo":["The memo may not be greater than 128 characters."]}}`,
			apiwire.Permanent, apiwire.Permanent, "The given data was invalid. (memo: The memo may not be greater than 128 characters.)", ""},
		{401, `{"error":true,"message":"Unauthenticated"}`, apiwire.Fatal, apiwire.Fatal, "Unauthenticated", ""},
		{403, `{"error":true,"message":"Fund Confirmation Limit Reached"}`, apiwire.Fatal, apiwire.Fatal, "Fund Confirmation Limit Reached", ""},
		{429, `{"error":true,"message":"Too Many Attempts."}`, apiwire.Retryable, apiwire.Retryable, "Too Many Attempts.", ""},
		{408, ``, apiwire.Retryable, apiwire.Retryable, "Request Timeout", ""},
		{500, `{"error":true,"message":"Server Error"}`, apiwire.Ambiguous, apiwire.Retryable, "Server Error", ""},
		{503, `{"error":true,"message":"Down for maintenance"}`, apiwire.Ambiguous, apiwire.Retryable, "Down for maintenance", ""},
		{502, `<html><body>Bad Gateway</body></html>`, apiwire.Ambiguous, apiwire.Retryable, "<html><body>Bad Gateway</body></html>", ""},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			srv, _ := fakeService(t, reply(tc.status, tc.body))
			c := newTestClient(t, srv.URL)
			ctx := context.Background()
			_, err := c.CreateCheck(ctx, CheckRequest{Amount: 100})
			e := asError(t, err)
			if e.Class != tc.createCls || e.Status != tc.status || e.Message != tc.msg || e.Code != tc.code || e.Op != OpCheckCreate {
				t.Errorf("create: %+v, want class %s message %q code %q", e, tc.createCls, tc.msg, tc.code)
			}
			_, err = c.GetCheck(ctx, testID)
			if got := apiwire.ClassOf(err); got != tc.getCls {
				t.Errorf("get: %v, want %s", err, tc.getCls)
			}
			if err := c.DeleteCheck(ctx, testID); apiwire.ClassOf(err) != tc.getCls {
				t.Errorf("delete: %v, want %s", err, tc.getCls)
			}
		})
	}
}

func TestTooManyRequests(t *testing.T) {
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	for name, header := range map[string]string{
		"seconds":   "90",
		"http-date": now.Add(90 * time.Second).Format(http.TimeFormat),
	} {
		t.Run(name, func(t *testing.T) {
			srv, _ := fakeService(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
				w.Header().Set("Retry-After", header)
				w.WriteHeader(http.StatusTooManyRequests)
				io.WriteString(w, `{"error":true,"message":"Too Many Attempts."}`)
			})
			lim := &fakeLimiter{}
			c := newTestClient(t, srv.URL, func(o *apiwire.Options) { o.Limiter = lim })
			c.core.Now = func() time.Time { return now }
			_, err := c.CreateCheck(context.Background(), CheckRequest{Amount: 100})
			e := asError(t, err)
			if e.Class != apiwire.Retryable || e.RetryAfter != 90*time.Second {
				t.Errorf("got %v, want Retryable after 90s", err)
			}
			if n := lim.throttled.Load(); n != 1 {
				t.Errorf("Throttled called %d times, want 1", n)
			}
			lim.mu.Lock()
			defer lim.mu.Unlock()
			if len(lim.pauses) != 1 || lim.pauses[0] != 90*time.Second {
				t.Errorf("pauses = %v, want [90s]", lim.pauses)
			}
		})
	}
}

// hangUp reads the whole request, then closes the connection without a
// word: the request arrived, the answer is lost.
func hangUp(w http.ResponseWriter, _ *http.Request, _ []byte) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(err)
	}
	conn.Close()
}

func TestAnswerLostAfterSend(t *testing.T) {
	srv, rec := fakeService(t, hangUp)
	c := newTestClient(t, srv.URL)
	ctx := context.Background()
	_, err := c.CreateCheck(ctx, CheckRequest{Amount: 100})
	if e := asError(t, err); e.Class != apiwire.Ambiguous || e.Status != 0 || e.Err == nil {
		t.Errorf("create: %v, want Ambiguous network error", err)
	}
	_, err = c.CreatePaymentLink(ctx, PaymentLinkRequest{Amount: 100})
	if apiwire.ClassOf(err) != apiwire.Ambiguous {
		t.Errorf("payment link create: %v, want Ambiguous", err)
	}
	_, err = c.Tokenize(ctx, TokenizeRequest{BankAccount: testAccount})
	if apiwire.ClassOf(err) != apiwire.Ambiguous {
		t.Errorf("tokenize: %v, want Ambiguous", err)
	}
	_, err = c.EditCheck(ctx, testID, CheckRequest{Amount: 100})
	if apiwire.ClassOf(err) != apiwire.Retryable {
		t.Errorf("edit: %v, want Retryable", err)
	}
	_, err = c.GetCheck(ctx, testID)
	if apiwire.ClassOf(err) != apiwire.Retryable {
		t.Errorf("get: %v, want Retryable", err)
	}
	// The transport may replay an idempotent GET once on a fresh
	// connection; a POST it must never replay.
	posts := 0
	for _, r := range rec.all() {
		if r.Method == "POST" {
			posts++
		}
	}
	if posts != 4 {
		t.Errorf("service saw %d POSTs, want exactly 4 (one per call)", posts)
	}
}

func TestTimeoutAfterSendOnCreateIsAmbiguous(t *testing.T) {
	srv, _ := fakeService(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		<-r.Context().Done() // never answers; returns when the client gives up
	})
	// Long enough for the request to arrive even on a loaded machine; the
	// test waits this long once.
	c := newTestClient(t, srv.URL, func(o *apiwire.Options) { o.Timeout = time.Second })
	_, err := c.CreateCheck(context.Background(), CheckRequest{Amount: 100})
	if e := asError(t, err); e.Class != apiwire.Ambiguous || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("create timed out: %v, want Ambiguous wrapping DeadlineExceeded", err)
	}
}

func TestCallerCancelAfterSendOnCreateIsAmbiguous(t *testing.T) {
	arrived := make(chan struct{}, 1)
	srv, _ := fakeService(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		arrived <- struct{}{}
		<-r.Context().Done()
	})
	c := newTestClient(t, srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := c.CreateCheck(ctx, CheckRequest{Amount: 100})
		errc <- err
	}()
	<-arrived
	cancel()
	err := <-errc
	if e := asError(t, err); e.Class != apiwire.Ambiguous || !errors.Is(err, context.Canceled) {
		t.Errorf("create canceled after send: %v, want Ambiguous wrapping Canceled", err)
	}
}

func TestCanceledBeforeSendIsRetryable(t *testing.T) {
	srv, rec := fakeService(t, okAnswers)
	c := newTestClient(t, srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.CreateCheck(ctx, CheckRequest{Amount: 100})
	if e := asError(t, err); e.Class != apiwire.Retryable || !errors.Is(err, context.Canceled) {
		t.Errorf("create with a canceled context: %v, want Retryable wrapping Canceled", err)
	}
	if n := len(rec.all()); n != 0 {
		t.Errorf("%d requests reached the service", n)
	}
}

func TestConnectionRefusedIsRetryable(t *testing.T) {
	c := newTestClient(t, closedAddr(t))
	_, err := c.CreateCheck(context.Background(), CheckRequest{Amount: 100, BankAccount: testAccount})
	if e := asError(t, err); e.Class != apiwire.Retryable || e.Status != 0 {
		t.Errorf("create to a closed port: %v, want Retryable", err)
	}
}

func TestTruncatedSuccessOnCreateIsAmbiguous(t *testing.T) {
	srv, _ := fakeService(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"success\":true,\"check\":{\"check_id\"")
		buf.Flush()
		conn.Close()
	})
	c := newTestClient(t, srv.URL)
	_, err := c.CreateCheck(context.Background(), CheckRequest{Amount: 100})
	if e := asError(t, err); e.Class != apiwire.Ambiguous || e.Status != 200 {
		t.Errorf("create cut off: %v, want Ambiguous with status 200", err)
	}
	_, err = c.GetCheck(context.Background(), testID)
	if apiwire.ClassOf(err) != apiwire.Retryable {
		t.Errorf("get cut off: %v, want Retryable", err)
	}
}

func TestUnreadableSuccess(t *testing.T) {
	cases := map[string]string{
		"not json":      `<html>ok</html>`,
		"empty":         ``,
		"no check":      `{"success":true,"message":"done"}`,
		"bad amount":    `{"success":true,"check":` + checkJSON(`"12,34"`, `"1"`) + `}`,
		"object number": `{"success":true,"check":` + checkJSON(`1`, `{"n":1}`) + `}`,
	}
	for name, body := range cases {
		srv, _ := fakeService(t, reply(200, body))
		c := newTestClient(t, srv.URL)
		_, err := c.CreateCheck(context.Background(), CheckRequest{Amount: 100})
		if e := asError(t, err); e.Class != apiwire.Ambiguous || e.Status != 200 {
			t.Errorf("%s: create: %v, want Ambiguous", name, err)
		}
		_, err = c.GetCheck(context.Background(), testID)
		if apiwire.ClassOf(err) != apiwire.Permanent {
			t.Errorf("%s: get: %v, want Permanent", name, err)
		}
	}
}

func TestOversizedBody(t *testing.T) {
	srv, _ := fakeService(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		io.WriteString(w, `{"check":{"memo":"`)
		chunk := strings.Repeat("x", 1<<16)
		for n := 0; n <= 1<<20; n += len(chunk) {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
		io.WriteString(w, `"}}`)
	})
	c := newTestClient(t, srv.URL)
	c.core.MaxBody = 1 << 20 // the production cap is 10 MiB; the logic is the same
	_, err := c.CreateCheck(context.Background(), CheckRequest{Amount: 100})
	if e := asError(t, err); e.Class != apiwire.Ambiguous || !strings.Contains(e.Error(), "exceeds") {
		t.Errorf("oversized create answer: %v, want Ambiguous", err)
	}
}

func TestErrorFlagInSuccess(t *testing.T) {
	cases := []struct {
		body string
		want apiwire.Class
		msg  string
	}{
		{`{"error":true,"message":"Invalid routing number"}`, apiwire.Permanent, "Invalid routing number"},
		{`{"success":false,"message":"Declined"}`, apiwire.Permanent, "Declined"},
		{`{"success":"0","error":"Account closed"}`, apiwire.Permanent, "Account closed"},
		{`{"error":true,"message":"odd","check":` + checkJSON("1", `"1"`) + `}`, apiwire.Ambiguous, "odd"},
	}
	for _, tc := range cases {
		srv, _ := fakeService(t, reply(200, tc.body))
		c := newTestClient(t, srv.URL)
		_, err := c.CreateCheck(context.Background(), CheckRequest{Amount: 100})
		if e := asError(t, err); e.Class != tc.want || e.Message != tc.msg || e.Status != 200 {
			t.Errorf("%s: %v, want %s %q", tc.body, err, tc.want, tc.msg)
		}
	}
	// Flags that say "no error" are not errors.
	for _, body := range []string{
		`{"success":true,"error":false,"check":` + checkJSON("1", `"1"`) + `}`,
		`{"success":1,"error":0,"check":` + checkJSON("1", `"1"`) + `}`,
		`{"success":null,"error":"","check":` + checkJSON("1", `"1"`) + `}`,
		`{"check":` + checkJSON("1", `"1"`) + `}`,
	} {
		srv, _ := fakeService(t, reply(200, body))
		c := newTestClient(t, srv.URL)
		if _, err := c.CreateCheck(context.Background(), CheckRequest{Amount: 100}); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
}

func TestNonJSONErrorBodyIsExcerpted(t *testing.T) {
	page := "<html>\n<head><title>502</title></head>\n<body>" + strings.Repeat("é gateway ", 100) + "</body></html>"
	srv, _ := fakeService(t, reply(502, page))
	c := newTestClient(t, srv.URL)
	_, err := c.ListChecks(context.Background(), ListParams{})
	e := asError(t, err)
	if !strings.HasPrefix(e.Message, "<html> <head><title>502</title></head>") || len(e.Message) > apiwire.MaxExcerpt+len("…") {
		t.Errorf("message = %q (%d bytes)", e.Message, len(e.Message))
	}
	if strings.ContainsAny(e.Message, "\n\r") || !strings.HasSuffix(e.Message, "…") {
		t.Errorf("message not one line ending in …: %q", e.Message)
	}
}

func TestSecretsNeverInErrors(t *testing.T) {
	echo := `{"error":true,"message":"key ` + testKey + ` may not debit account ` + testAccount + `","code":"` + testKey + `"}`
	answers := map[string]func(http.ResponseWriter, *http.Request, []byte){
		"400 echo":       reply(400, echo),
		"401 echo":       reply(401, echo),
		"500 text":       reply(500, "Authorization: Bearer "+testKey),
		"200 echo":       reply(200, echo),
		"hang up":        hangUp,
		"key at cut":     reply(503, strings.Repeat("x", apiwire.MaxExcerpt-14)+testKey),
		"account at cut": reply(400, strings.Repeat("x", apiwire.MaxExcerpt-5)+testAccount),
		"bad answer":     reply(200, `{"check":{"check_id":"x","amount":"`+testKey+`"}}`),
	}
	for name, answer := range answers {
		srv, _ := fakeService(t, answer)
		c := newTestClient(t, srv.URL)
		_, err := c.CreateCheck(context.Background(), CheckRequest{Amount: 100, BankAccount: testAccount, BankRouting: testRouting})
		if err == nil {
			t.Fatalf("%s: no error", name)
		}
		for _, text := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
			if strings.Contains(text, testKey[:12]) || strings.Contains(text, testAccount[:5]) {
				t.Errorf("%s: error shows a secret: %s", name, text)
			}
		}
	}
	c := newTestClient(t, closedAddr(t))
	_, err := c.CreateCheck(context.Background(), CheckRequest{Amount: 100})
	if strings.Contains(err.Error(), testKey) {
		t.Errorf("network error shows the key: %v", err)
	}
}

func TestClassOf(t *testing.T) {
	wrapped := fmt.Errorf("row 3: %w", &apiwire.Error{Op: OpCheckCreate, Class: apiwire.Fatal})
	cases := []struct {
		err  error
		want apiwire.Class
	}{
		{nil, 0},
		{wrapped, apiwire.Fatal},
		{context.Canceled, apiwire.Retryable},
		{fmt.Errorf("wait: %w", context.DeadlineExceeded), apiwire.Retryable},
		{errors.New("disk full"), apiwire.Ambiguous},
	}
	for _, c := range cases {
		if got := apiwire.ClassOf(c.err); got != c.want {
			t.Errorf("ClassOf(%v) = %s, want %s", c.err, got, c.want)
		}
	}
	if s := apiwire.Class(9).String(); s != "Class(9)" {
		t.Errorf("String = %q", s)
	}
}

// TestListWithoutAList: a 2xx answer to the list that holds no list (an
// empty body, or another call's answer) is an error naming it, not an
// empty page that would end the walk with every check unseen.
func TestListWithoutAList(t *testing.T) {
	for name, body := range map[string]string{"empty": ``, "empty object": `{}`, "a check": `{"success":true,"check":{"check_id":"a"}}`} {
		srv, _ := fakeService(t, reply(200, body))
		c := newTestClient(t, srv.URL)
		_, err := c.ListChecks(context.Background(), ListParams{Page: 1})
		if err == nil || !strings.Contains(err.Error(), `holds no list (neither "list" nor "data")`) {
			t.Errorf("%s: %v, want an error saying the answer holds no list", name, err)
		}
	}
	srv, _ := fakeService(t, reply(200, `{"list":{"current_page":1,"last_page":1,"per_page":100,"total":0,"data":[]}}`))
	if pg, err := newTestClient(t, srv.URL).ListChecks(context.Background(), ListParams{Page: 1}); err != nil || len(pg.Checks) != 0 {
		t.Errorf("an empty list: %+v %v, want an empty page", pg, err)
	}
}
