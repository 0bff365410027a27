package webhook

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
)

const (
	jsonCT = "application/json"
	formCT = "application/x-www-form-urlencoded"
	chk    = "0b6f7c2e-1d2a-4c1b-9a43-6f0e5a1d2b3c"
	src    = "5f3d2a1b-7c6e-4d8f-9b0a-1e2f3a4b5c6d"
	usr    = "u_123"
)

var at = time.Date(2026, 2, 19, 15, 59, 10, 0, time.UTC)

// checkObject is a check as the eCheck API writes it, with fields Decode
// must ignore (numbers, nested objects, a masked account).
const checkObject = `{"check_id":"` + chk + `","date":"2026-02-18 10:00:00","number":"1001","amount":25.5,
 "memo":"rent","name":"Ann","status":"printed","bank_account":"1..........876","bank_routing":"999900001",
 "recurring":0,"basic_verification":{"risk_bv":"Pass","pass_bv":1,"code_bv":"RT01"},
 "funds_confirmation":{"verification_fc":"SufficientFunds","pass_fc":"1"}}`

func TestDecodeShapes(t *testing.T) {
	tests := []struct {
		name, ct, body string
		want           Event // ID and Raw not compared
	}{
		// eCheck, JSON
		{"echeck created", jsonCT, `{"event":"check.created","data":` + strings.Replace(checkObject, "printed", "in_process", 1) + `}`,
			Event{Name: "check.created", Kind: KindCheck, CheckID: chk, CheckStatus: payment.StatusInProcess}},
		{"echeck changed", jsonCT, `{"event":"check.changed","data":` + checkObject + `}`,
			Event{Name: "check.changed", Kind: KindCheck, CheckID: chk, CheckStatus: payment.StatusPrinted}},
		{"echeck status spelled loosely", jsonCT, `{"event":"check.changed","data":{"check_id":"` + chk + `","status":" In Process "}}`,
			Event{Name: "check.changed", Kind: KindCheck, CheckID: chk, CheckStatus: payment.StatusInProcess}},
		{"echeck deleted, no status", jsonCT, `{"event":"check.deleted","data":{"check_id":"` + chk + `"}}`,
			Event{Name: "check.deleted", Kind: KindCheck, CheckID: chk, CheckStatus: payment.StatusDeleted}},
		{"echeck deleted, body status wins", jsonCT, `{"event":"check.deleted","data":{"check_id":"` + chk + `","status":"void"}}`,
			Event{Name: "check.deleted", Kind: KindCheck, CheckID: chk, CheckStatus: payment.StatusVoid}},
		{"echeck fund confirmation", jsonCT, `{"event":"check.fund_confirmation","data":` + checkObject + `}`,
			Event{Name: "check.fund_confirmation", Kind: KindCheck, CheckID: chk, CheckStatus: payment.StatusPrinted}},
		{"echeck id under id", jsonCT, `{"event":"check.changed","data":{"id":"` + chk + `","status":"deposited"}}`,
			Event{Name: "check.changed", Kind: KindCheck, CheckID: chk, CheckStatus: payment.StatusDeposited}},
		{"numeric id", jsonCT, `{"event":"check.changed","data":{"check_id":12345,"status":"failed"}}`,
			Event{Name: "check.changed", Kind: KindCheck, CheckID: "12345", CheckStatus: payment.StatusFailed}},
		{"data as a JSON string", jsonCT, `{"event":"check.changed","data":"{\"check_id\":\"` + chk + `\",\"status\":\"printed\"}"}`,
			Event{Name: "check.changed", Kind: KindCheck, CheckID: chk, CheckStatus: payment.StatusPrinted}},
		{"unknown fields, case of keys", "application/json; charset=utf-8", `{"Event":"check.changed","extra":[1,2,{"a":null}],"Data":{"Check_ID":"` + chk + `","Status":"PRINTED","x":true}}`,
			Event{Name: "check.changed", Kind: KindCheck, CheckID: chk, CheckStatus: payment.StatusPrinted}},
		{"no content type, JSON body", "", ` {"event":"check.changed","data":{"check_id":"` + chk + `","status":"printed"}}`,
			Event{Name: "check.changed", Kind: KindCheck, CheckID: chk, CheckStatus: payment.StatusPrinted}},
		{"JSON labelled as form", formCT, `{"event":"check.changed","data":{"check_id":"` + chk + `","status":"printed"}}`,
			Event{Name: "check.changed", Kind: KindCheck, CheckID: chk, CheckStatus: payment.StatusPrinted}},
		{"check event without an id", jsonCT, `{"event":"check.changed","data":{"status":"printed"}}`,
			Event{Name: "check.changed", Kind: KindCheck, CheckStatus: payment.StatusPrinted}},

		// ACH transactions and payments, JSON
		{"ach transaction.status", jsonCT, `{"event":"transaction.status","check":{"check_id":"` + chk + `","status":"declined","error_explanation":"R01","error_description":"Insufficient funds"},"timestamp":"2026-02-19 15:59:10"}`,
			Event{Name: "transaction.status", Kind: KindCheck, CheckID: chk, CheckStatus: "declined", At: at}},
		{"ach transaction.status, epoch number", jsonCT, `{"event":"transaction.status","check":{"check_id":"` + chk + `","status":"processed"},"timestamp":1771516750}`,
			Event{Name: "transaction.status", Kind: KindCheck, CheckID: chk, CheckStatus: "processed", At: at}},
		{"ach transaction.status, RFC 3339", jsonCT, `{"event":"transaction.status","check":{"check_id":"` + chk + `","status":"pending"},"timestamp":"2026-02-19T10:59:10-05:00"}`,
			Event{Name: "transaction.status", Kind: KindCheck, CheckID: chk, CheckStatus: "pending", At: at}},
		{"ach transaction.status, unreadable time", jsonCT, `{"event":"transaction.status","check":{"check_id":"` + chk + `","status":"expired"},"timestamp":"yesterday"}`,
			Event{Name: "transaction.status", Kind: KindCheck, CheckID: chk, CheckStatus: "expired"}},
		{"payment.success", jsonCT, `{"event":"payment.success","data":{"check_id":"` + chk + `","amount":"25.00"}}`,
			Event{Name: "payment.success", Kind: KindCheck, CheckID: chk}},
		{"payment.failed", jsonCT, `{"event":"payment.failed","data":{"id":"` + chk + `","status":"failed"}}`,
			Event{Name: "payment.failed", Kind: KindCheck, CheckID: chk, CheckStatus: payment.StatusFailed}},

		// ACH funding sources, JSON
		{"spec funding_source.verified", jsonCT, `{"event":"funding_source.verified","data":{"funding_source_id":"` + src + `","status":"Verified"}}`,
			Event{Name: "funding_source.verified", Kind: KindSource, SourceID: src, SourceStatus: funding.StatusVerified}},
		{"funding_source object", jsonCT, `{"event":"funding-source.updated","funding_source":{"source_id":"` + src + `","user_id":"` + usr + `","is_primary":true,"status":"verified","routing":"999900001","lbacc":"6789"}}`,
			Event{Name: "funding-source.updated", Kind: KindSource, SourceID: src, UserID: usr, SourceStatus: funding.StatusVerified}},
		{"top-level source_id, no status", jsonCT, `{"event":"funding-source.verified","source_id":"` + src + `","timestamp":"2026-02-19 15:59:10"}`,
			Event{Name: "funding-source.verified", Kind: KindSource, SourceID: src, SourceStatus: funding.StatusVerified, At: at}},
		{"top-level funding_source_id and status", jsonCT, `{"event":"funding-source.verification-failed","funding_source_id":"` + src + `","status":"verification_failed"}`,
			Event{Name: "funding-source.verification-failed", Kind: KindSource, SourceID: src, SourceStatus: funding.StatusVerificationFailed}},
		{"verification-failed from name", jsonCT, `{"event":"funding-source.verification-failed","data":{"id":"` + src + `"}}`,
			Event{Name: "funding-source.verification-failed", Kind: KindSource, SourceID: src, SourceStatus: funding.StatusVerificationFailed}},
		{"added from name", jsonCT, `{"event":"funding-source.added","data":{"source_id":"` + src + `","user_id":"` + usr + `"}}`,
			Event{Name: "funding-source.added", Kind: KindSource, SourceID: src, UserID: usr, SourceStatus: funding.StatusPending}},
		{"updated implies no status", jsonCT, `{"event":"funding-source.updated","data":{"source_id":"` + src + `"}}`,
			Event{Name: "funding-source.updated", Kind: KindSource, SourceID: src}},
		{"pending-verification from name", jsonCT, `{"event":"funding-source.pending-verification","data":{"source_id":"` + src + `"}}`,
			Event{Name: "funding-source.pending-verification", Kind: KindSource, SourceID: src, SourceStatus: funding.StatusPending}},
		{"verification-expired from name", jsonCT, `{"event":"funding-source.verification-expired","data":{"source_id":"` + src + `"}}`,
			Event{Name: "funding-source.verification-expired", Kind: KindSource, SourceID: src, SourceStatus: funding.StatusVerificationFailed}},
		{"deleted from name", jsonCT, `{"event":"funding-source.deleted","data":{"source_id":"` + src + `"}}`,
			Event{Name: "funding-source.deleted", Kind: KindSource, SourceID: src, SourceStatus: funding.StatusDeleted}},
		{"made-primary implies no status", jsonCT, `{"event":"funding-source.made-primary","data":{"source_id":"` + src + `","user_id":"` + usr + `"}}`,
			Event{Name: "funding-source.made-primary", Kind: KindSource, SourceID: src, UserID: usr}},
		{"status word batchd does not know", jsonCT, `{"event":"funding-source.updated","data":{"source_id":"` + src + `","status":"login_required"}}`,
			Event{Name: "funding-source.updated", Kind: KindSource, SourceID: src, SourceStatus: "login_required"}},

		// Other events, JSON
		{"subscription.created", jsonCT, `{"event":"subscription.created","data":{"subscription_id":"s1","user_id":"` + usr + `"}}`,
			Event{Name: "subscription.created", Kind: KindOther, UserID: usr}},
		{"user.created", jsonCT, `{"event":"user.created","data":{"id":"` + usr + `","email":"a@b.c"}}`,
			Event{Name: "user.created", Kind: KindOther, UserID: usr}},
		{"endpoint.test", jsonCT, `{"event":"endpoint.test","id":"evt_9"}`,
			Event{Name: "endpoint.test", Kind: KindOther}},
		{"bank login required", jsonCT, `{"event":"bank.account.login.required","data":{"source_id":"` + src + `","user_id":"` + usr + `"}}`,
			Event{Name: "bank.account.login.required", Kind: KindOther, SourceID: src, UserID: usr}},
		{"unknown name kept", jsonCT, `{"event":"  Something.New ","data":{"check_id":"` + chk + `","status":"printed"}}`,
			Event{Name: "Something.New", Kind: KindOther, CheckID: chk}},
		{"unknown check.* name", jsonCT, `{"event":"check.reviewed","data":{"check_id":"` + chk + `","status":"in_review"}}`,
			Event{Name: "check.reviewed", Kind: KindCheck, CheckID: chk, CheckStatus: payment.StatusInReview}},

		// Form-encoded
		{"form flat", formCT, "event=check.changed&check_id=" + chk + "&status=printed&amount=25.50&bank_account=1..........876",
			Event{Name: "check.changed", Kind: KindCheck, CheckID: chk, CheckStatus: payment.StatusPrinted}},
		{"form flat, bare id", formCT, "event=check.changed&id=" + chk + "&status=printed",
			Event{Name: "check.changed", Kind: KindCheck, CheckID: chk, CheckStatus: payment.StatusPrinted}},
		{"form bracketed", formCT + "; charset=UTF-8", "event=check.changed&data%5Bcheck_id%5D=" + chk + "&data[status]=printed&data[basic_verification][risk_bv]=Pass",
			Event{Name: "check.changed", Kind: KindCheck, CheckID: chk, CheckStatus: payment.StatusPrinted}},
		{"form data holds JSON", formCT, "event=check.deleted&data=%7B%22check_id%22%3A%22" + chk + "%22%7D",
			Event{Name: "check.deleted", Kind: KindCheck, CheckID: chk, CheckStatus: payment.StatusDeleted}},
		{"form payload holds JSON", formCT, "event=check.changed&payload=%7B%22check_id%22%3A%22" + chk + "%22%2C%22status%22%3A%22void%22%7D",
			Event{Name: "check.changed", Kind: KindCheck, CheckID: chk, CheckStatus: payment.StatusVoid}},
		{"form ach transaction", formCT, "event=transaction.status&check[check_id]=" + chk + "&check[status]=cancelled&check[error_description]=x&timestamp=2026-02-19+15%3A59%3A10",
			Event{Name: "transaction.status", Kind: KindCheck, CheckID: chk, CheckStatus: "cancelled", At: at}},
		{"form source flat, no status", formCT, "event=funding-source.verified&funding_source_id=" + src,
			Event{Name: "funding-source.verified", Kind: KindSource, SourceID: src, SourceStatus: funding.StatusVerified}},
		{"form source bracketed", formCT, "event=funding-source.deleted&data[source_id]=" + src + "&data[user_id]=" + usr + "&timestamp=1771516750",
			Event{Name: "funding-source.deleted", Kind: KindSource, SourceID: src, UserID: usr, SourceStatus: funding.StatusDeleted, At: at}},
		{"form unknown name", formCT, "event=widget.spun&foo=bar",
			Event{Name: "widget.spun", Kind: KindOther}},
		{"form without content type", "", "event=user.created&user_id=" + usr,
			Event{Name: "user.created", Kind: KindOther, UserID: usr}},
		{"form first of repeated field", formCT, "event=check.changed&check_id=" + chk + "&status=printed&status=void",
			Event{Name: "check.changed", Kind: KindCheck, CheckID: chk, CheckStatus: payment.StatusPrinted}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decode(tt.ct, []byte(tt.body))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if len(got.ID) != 64 {
				t.Errorf("ID = %q, want a SHA-256 in hex", got.ID)
			}
			if string(got.Raw) != tt.body {
				t.Errorf("Raw = %q, want the body", got.Raw)
			}
			got.ID, got.Raw = "", nil
			if !got.At.Equal(tt.want.At) {
				t.Errorf("At = %v, want %v", got.At, tt.want.At)
			}
			got.At, tt.want.At = time.Time{}, time.Time{}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Decode =\n %+v\nwant\n %+v", got, tt.want)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, ct, body, want string
	}{
		{"empty", jsonCT, "  \n", "empty body"},
		{"not JSON", jsonCT, `{"event":`, "truncated"},
		{"syntax", jsonCT, `{"event" "x"}`, "invalid character"},
		{"array", jsonCT, `[{"event":"check.changed"}]`, "not an object"},
		{"trailing data", jsonCT, `{"event":"check.changed"} {}`, "data after"},
		{"no event", jsonCT, `{"data":{"check_id":"x"}}`, "no event name"},
		{"event not a string", jsonCT, `{"event":{"name":"x"}}`, "no event name"},
		{"form no event", formCT, "check_id=x&status=printed", "no event name"},
		{"form bad escape", formCT, "event=check.changed&status=%zz", "invalid encoding"},
		{"multipart", "multipart/form-data; boundary=x", "--x--", "unsupported Content-Type"},
		{"bad content type", "application/json; =", `{"event":"x"}`, "unreadable Content-Type"},
		{"long name", jsonCT, `{"event":"` + strings.Repeat("a", maxNameLen+1) + `"}`, "event name longer"},
		{"control in id", jsonCT, `{"event":"check.changed","data":{"check_id":"a\nb"}}`, "check id holds invalid"},
		{"long status", jsonCT, `{"event":"check.changed","data":{"check_id":"a","status":"` + strings.Repeat("s", 65) + `"}}`, "status longer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.ct, []byte(tt.body))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Decode error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// An error shows a short excerpt at most, and never an account number.
func TestDecodeErrorExcerpt(t *testing.T) {
	body := `{"bank_account":"123456789012","x":"` + strings.Repeat("y", 500) + `"}`
	_, err := Decode(jsonCT, []byte(body))
	if err == nil {
		t.Fatal("no error for a body without event")
	}
	msg := err.Error()
	if strings.Contains(msg, "123456789012") || strings.Contains(msg, "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy") || len(msg) > 200 {
		t.Errorf("error echoes too much: %s", msg)
	}
	// A digit run cut off at the excerpt's end is masked whatever its length.
	if got := excerpt([]byte(strings.Repeat("a", 38) + "1234567")); strings.Contains(got, "12") {
		t.Errorf("excerpt = %s, shows a cut digit run", got)
	}
	if got := excerpt([]byte("id 1234 acct 98765")); got != `"id 1234 acct #####"` {
		t.Errorf("excerpt = %s", got)
	}
}

func TestDecodeRawBounded(t *testing.T) {
	body := `{"event":"check.changed","pad":"` + strings.Repeat("p", 2*MaxRawBytes) + `"}`
	e, err := Decode(jsonCT, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Raw) != MaxRawBytes {
		t.Errorf("len(Raw) = %d, want %d", len(e.Raw), MaxRawBytes)
	}
	b := []byte(`{"event":"check.changed"}`)
	e, _ = Decode(jsonCT, b)
	b[2] = 'X'
	if e.Raw[2] == 'X' {
		t.Error("Raw shares the caller's buffer")
	}
}

func mustID(t *testing.T, ct, body string) string {
	t.Helper()
	e, err := Decode(ct, []byte(body))
	if err != nil {
		t.Fatalf("Decode(%q): %v", body, err)
	}
	return e.ID
}

// One event sent in any of the shapes has one ID.
func TestIDSameEventAnyShape(t *testing.T) {
	groups := [][][2]string{
		{
			{jsonCT, `{"event":"check.changed","data":` + checkObject + `}`},
			{jsonCT, `{ "data": {"status":"printed", "check_id": "` + chk + `"}, "event": "check.changed" }`},
			{jsonCT, `{"event":"check.changed","data":"{\"check_id\":\"` + chk + `\",\"status\":\"printed\"}"}`},
			{formCT, "event=check.changed&check_id=" + chk + "&status=printed"},
			{formCT, "event=check.changed&data[check_id]=" + chk + "&data[status]=Printed&data[amount]=25.5"},
			{formCT, "data=%7B%22status%22%3A%22printed%22%2C%22check_id%22%3A%22" + chk + "%22%7D&event=check.changed"},
			{"", "event=check.changed&payload=%7B%22check_id%22%3A%22" + chk + "%22%2C%22status%22%3A%22printed%22%7D"},
		},
		{
			{jsonCT, `{"event":"transaction.status","check":{"check_id":"` + chk + `","status":"processed"},"timestamp":"2026-02-19 15:59:10"}`},
			{jsonCT, `{"event":"transaction.status","check":{"check_id":"` + chk + `","status":"processed"},"timestamp":1771516750}`},
			{jsonCT, `{"event":"transaction.status","check":{"check_id":"` + chk + `","status":"processed"},"timestamp":"2026-02-19T15:59:10Z"}`},
			{formCT, "event=transaction.status&check[check_id]=" + chk + "&check[status]=processed&timestamp=1771516750"},
			{formCT, "event=transaction.status&check_id=" + chk + "&status=processed&timestamp=2026-02-19+15:59:10"},
		},
		{
			{jsonCT, `{"event":"funding-source.verified","data":{"source_id":"` + src + `"}}`},
			{jsonCT, `{"event":"funding-source.verified","funding_source":{"source_id":"` + src + `","status":"verified"}}`},
			{jsonCT, `{"event":"funding-source.verified","funding_source_id":"` + src + `","status":"Verified"}`},
			{formCT, "event=funding-source.verified&source_id=" + src},
			{formCT, "event=funding-source.verified&data[funding_source_id]=" + src + "&data[status]=VERIFIED"},
		},
		{
			{jsonCT, `{"event":"check.changed","id":"evt_1","data":{"check_id":"` + chk + `","status":"printed"}}`},
			{formCT, "event=check.changed&id=evt_1&data[check_id]=" + chk + "&data[status]=printed"},
			{formCT, "event=check.changed&event_id=evt_1&check_id=" + chk + "&status=printed"},
			{formCT, "event=check.changed&id=evt_1&check_id=" + chk + "&status=printed"},
			{jsonCT, `{"event":"check.changed","delivery_id":"evt_1","check":{"check_id":"` + chk + `","status":"printed"}}`},
		},
	}
	seen := map[string]int{}
	for g, group := range groups {
		want := mustID(t, group[0][0], group[0][1])
		for _, d := range group[1:] {
			if got := mustID(t, d[0], d[1]); got != want {
				t.Errorf("group %d: %s %q has ID %s, want %s", g, d[0], d[1], got, want)
			}
		}
		if prev, ok := seen[want]; ok {
			t.Errorf("groups %d and %d share an ID", prev, g)
		}
		seen[want] = g
	}
}

// Two different events never share an ID: status, time, object, name and
// delivery id each tell them apart.
func TestIDDiffers(t *testing.T) {
	bodies := []string{
		`{"event":"check.changed","data":{"check_id":"` + chk + `","status":"in_process"}}`,
		`{"event":"check.changed","data":{"check_id":"` + chk + `","status":"printed"}}`,
		`{"event":"check.changed","data":{"check_id":"` + chk + `","status":"deposited"}}`,
		`{"event":"check.changed","data":{"check_id":"other","status":"printed"}}`,
		`{"event":"check.created","data":{"check_id":"` + chk + `","status":"printed"}}`,
		`{"event":"transaction.status","check":{"check_id":"` + chk + `","status":"pending"},"timestamp":"2026-02-19 15:59:10"}`,
		`{"event":"transaction.status","check":{"check_id":"` + chk + `","status":"pending"},"timestamp":"2026-02-19 15:59:11"}`,
		`{"event":"transaction.status","check":{"check_id":"` + chk + `","status":"pending"},"timestamp":"soon"}`,
		`{"event":"transaction.status","check":{"check_id":"` + chk + `","status":"pending"}}`,
		`{"event":"check.changed","id":"evt_1","data":{"check_id":"` + chk + `","status":"printed"}}`,
		`{"event":"check.changed","id":"evt_2","data":{"check_id":"` + chk + `","status":"printed"}}`,
		`{"event":"funding-source.verified","data":{"source_id":"` + src + `"}}`,
		`{"event":"funding-source.verification-failed","data":{"source_id":"` + src + `"}}`,
		`{"event":"funding-source.verification-expired","data":{"source_id":"` + src + `"}}`,
		`{"event":"user.created","data":{"id":"u1"}}`,
		`{"event":"user.created","data":{"id":"u2"}}`,
		`{"event":"subscription.created","data":{"id":"sub_1"}}`,
		`{"event":"subscription.created","data":{"id":"sub_2"}}`,
	}
	seen := map[string]string{}
	for _, b := range bodies {
		id := mustID(t, jsonCT, b)
		if prev, ok := seen[id]; ok {
			t.Errorf("same ID for\n %s\n %s", prev, b)
		}
		seen[id] = b
	}
}

func TestKindOf(t *testing.T) {
	for name, want := range map[string]Kind{
		"check.created": KindCheck, "CHECK.changed": KindCheck, "payment.success": KindCheck,
		"payment.failed": KindCheck, "transaction.status": KindCheck,
		"funding_source.verified": KindSource, "funding-source.made-primary": KindSource,
		"subscription.created": KindOther, "user.created": KindOther, "endpoint.test": KindOther,
		"bank.account.login.required": KindOther, "checks": KindOther, "": KindOther,
	} {
		if got := kindOf(name); got != want {
			t.Errorf("kindOf(%q) = %s, want %s", name, got, want)
		}
	}
}

func TestParseTime(t *testing.T) {
	for in, want := range map[string]time.Time{
		"2026-02-19 15:59:10":       at,
		"2026-02-19T15:59:10Z":      at,
		"2026-02-19T16:59:10+01:00": at,
		"2026-02-19T15:59:10":       at,
		"1771516750":                at,
		"1771516750.5":              at.Add(500 * time.Millisecond),
		"1771516750000":             {}, // milliseconds: not guessed
		"12":                        {},
		"NaN":                       {},
		"":                          {},
		"19/02/2026":                {},
	} {
		if got := parseTime(in); !got.Equal(want) {
			t.Errorf("parseTime(%q) = %v, want %v", in, got, want)
		}
	}
}
