package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// decodeResp reads an answer as harness.try does.
func decodeResp(res *http.Response) (resp, error) {
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return resp{}, err
	}
	out := resp{status: res.StatusCode, header: res.Header, raw: raw}
	if len(raw) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&out.body); err != nil {
			return resp{}, err
		}
	}
	return out, nil
}

// ach is the path of an ACH endpoint.
func ach(path string) string { return achPrefix + path }

// day parses a YYYY-MM-DD test date.
func day(t testing.TB, s string) time.Time {
	t.Helper()
	d, err := time.Parse(dateLayout, s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// obj is a JSON object field of m.
func obj(m map[string]any, name string) map[string]any {
	o, _ := m[name].(map[string]any)
	return o
}

// str is a string field of m.
func str(m map[string]any, name string) string {
	s, _ := m[name].(string)
	return s
}

// arr is an array field of m.
func arr(m map[string]any, name string) []any {
	a, _ := m[name].([]any)
	return a
}

// wantACHError fails unless r is the ACH error envelope with status and
// message.
func wantACHError(t testing.TB, r resp, status int, msg string) {
	t.Helper()
	wantStatus(t, r, status)
	if r.body["success"] != false || r.body["error"] != true || r.msg() != msg {
		t.Fatalf("want ACH error %q, got %s", msg, r.raw)
	}
}

// wantACHField fails unless r is a 400 whose message begins with field
// followed by a space, the ACH wording of a field error.
func wantACHField(t testing.TB, r resp, field string) {
	t.Helper()
	wantStatus(t, r, http.StatusBadRequest)
	if r.body["success"] != false || !strings.HasPrefix(r.msg(), field+" ") {
		t.Fatalf("want a field error naming %q, got %s", field, r.raw)
	}
}

// counter makes distinct e-mail addresses and account numbers.
var counter atomic.Int64

// newUser creates a customer for key and returns its user_id.
func (h *harness) newUser(key string) string {
	h.t.Helper()
	r := h.post(ach("/user"), key, map[string]any{
		"firstName": "Ada", "lastName": "Lovelace", "email": fmt.Sprintf("ada%d@example.com", counter.Add(1)), "phone": "555-0100",
	})
	wantStatus(h.t, r, http.StatusOK)
	id := str(obj(r.body, "user"), "user_id")
	if id == "" || str(r.body, "user_id") != id {
		h.t.Fatalf("create user: no user_id in %s", r.raw)
	}
	return id
}

// newAccount returns an account number no test used before.
func newAccount() string {
	return fmt.Sprintf("42%08d", counter.Add(1))
}

// newSource links a Pending source and returns its id.
func (h *harness) newSource(key, userID, account string) string {
	h.t.Helper()
	r := h.post(ach("/funding-source"), key, map[string]any{
		"user_id": userID, "routing_number": FixtureRouting, "account_number": account, "account_type": "checking",
	})
	wantStatus(h.t, r, http.StatusOK)
	return str(r.body, "funding_source_id")
}

// source fetches a funding source object.
func (h *harness) source(key, id string) map[string]any {
	h.t.Helper()
	r := h.get(ach("/funding-source/:"+id), key)
	wantStatus(h.t, r, http.StatusOK)
	return obj(r.body, "funding_source")
}

// token issues a processor token; changes override the defaults
// (svcach, sandbox, checking) and a nil value deletes a field.
func (h *harness) token(key, account string, changes map[string]any) string {
	h.t.Helper()
	body := map[string]any{"processor": "svcach", "routing_number": FixtureRouting, "account_number": account}
	for k, v := range changes {
		if v == nil {
			delete(body, k)
		} else {
			body[k] = v
		}
	}
	r := h.post(ach("/_sandbox/processor/token"), key, body)
	wantStatus(h.t, r, http.StatusOK)
	return str(r.body, "processor_token")
}

// exchange posts a processor token for userID.
func (h *harness) exchange(key, userID, tok string) resp {
	h.t.Helper()
	return h.post(ach("/funding-source/processor/plaid"), key, map[string]any{"user_id": userID, "processor_token": tok})
}

// initiate starts micro-deposit verification of a source.
func (h *harness) initiate(key, id string) resp {
	h.t.Helper()
	return h.post(ach("/funding-source/initiate/verification"), key, map[string]any{"funding_source_id": id})
}

// deposits reads a source's micro-deposits as the JSON numbers written.
func (h *harness) deposits(key, id string) [2]string {
	h.t.Helper()
	r := h.get(ach("/_sandbox/funding-source/"+id+"/micro-deposits"), key)
	wantStatus(h.t, r, http.StatusOK)
	a := arr(r.body, "amounts")
	if len(a) != 2 {
		h.t.Fatalf("micro-deposits: %s", r.raw)
	}
	return [2]string{a[0].(json.Number).String(), a[1].(json.Number).String()}
}

// verify posts amounts for a source.
func (h *harness) verify(key, id string, amounts ...any) resp {
	h.t.Helper()
	return h.post(ach("/funding-source/verify"), key, map[string]any{"funding_source_id": id, "amounts": amounts})
}

// setDay sets key's sandbox day.
func (h *harness) setDay(key, date string) {
	h.t.Helper()
	r := h.post("/_sandbox/clock", key, map[string]any{"date": date})
	wantStatus(h.t, r, http.StatusOK)
	if !strings.HasPrefix(str(r.body, "now"), date+" ") {
		h.t.Fatalf("clock set to %s answered %s", date, r.raw)
	}
}
