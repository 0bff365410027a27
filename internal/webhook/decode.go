package webhook

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
)

// Bounds of the fields Decode reads. A field over its bound, or holding a
// control character, makes the delivery undecodable rather than reaching a
// log line or the ledger's keys.
const (
	maxNameLen   = 128
	maxIDLen     = 256
	maxStatusLen = 64
	maxTimeLen   = 64
)

// Where Decode looks for each field: in the event's object first, then at
// the top level (flat bodies). The first non-empty one wins.
var (
	nameKeys     = []string{"event", "event_name", "event_type"}
	objectKeys   = []string{"data", "check", "funding_source", "payload"} // the envelope's object
	innerKeys    = []string{"check", "funding_source", "object"}          // an object inside the object
	checkIDKeys  = []string{"check_id", "transaction_id", "payment_id"}
	sourceIDKeys = []string{"funding_source_id", "source_id"}
	userIDKeys   = []string{"user_id", "customer_id"}
	statusKeys   = []string{"status"}
	timeKeys     = []string{"timestamp", "event_time", "occurred_at"} // top level only: data.date is the check's creation
	deliveryKeys = []string{"event_id", "delivery_id"}
)

// Decode reads one webhook delivery. contentType is the request's
// Content-Type: JSON and application/x-www-form-urlencoded are read as
// such, a missing or text/plain one by looking at the body, anything else
// refused. Unknown fields are ignored and numbers may come as strings.
//
// Accepted shapes (public-api-notes.md, "Webhook deliveries"):
//   - {"event": "check.changed", "data": <check>}
//   - {"event": "transaction.status", "check": {check_id, status, …}, "timestamp": …}
//   - {"event": "funding-source.verified", "data"|"funding_source": {…}}, or
//     with funding_source_id/source_id and status at the top level
//   - the same form-encoded: flat (event=…&check_id=…&status=…),
//     bracketed (data[check_id]=…), or data=/payload= holding JSON.
//
// An object's id is read from check_id (or funding_source_id, source_id,
// user_id), else from its "id" as the event's Kind says. Only a missing
// event name or an unreadable body is an error: an event without an
// object id is still returned, for the ledger to keep or drop. Errors
// quote at most a short excerpt of the body, with long digit runs masked.
func Decode(contentType string, body []byte) (Event, error) {
	root, err := parseBody(contentType, body)
	if err != nil {
		return Event{}, err
	}
	return fromNode(root, body)
}

func parseBody(contentType string, body []byte) (*node, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return nil, errors.New("webhook: empty body")
	}
	looksJSON := trimmed[0] == '{'
	mt := ""
	if strings.TrimSpace(contentType) != "" {
		t, _, err := mime.ParseMediaType(contentType)
		if err != nil {
			return nil, fmt.Errorf("webhook: unreadable Content-Type %s", excerpt([]byte(contentType)))
		}
		mt = t
	}
	var (
		n   *node
		err error
	)
	switch {
	case mt == "application/json" || mt == "text/json" || strings.HasSuffix(mt, "+json"):
		n, err = parseJSON(body)
	case mt == "application/x-www-form-urlencoded", mt == "" || mt == "text/plain" || mt == "application/octet-stream":
		// Some senders label JSON as form or send no type at all: a
		// body that opens with '{' is no meaningful form.
		if looksJSON {
			n, err = parseJSON(body)
		} else {
			n, err = parseForm(trimmed)
		}
	default:
		return nil, fmt.Errorf("webhook: unsupported Content-Type %s", excerpt([]byte(mt)))
	}
	if err != nil {
		return nil, fmt.Errorf("webhook: %w; body starts %s", err, excerpt(body))
	}
	return n, nil
}

// fromNode reads an Event out of a parsed body.
func fromNode(top *node, body []byte) (Event, error) {
	name, err := field("event name", maxNameLen, first(top, nil, nameKeys))
	if err != nil {
		return Event{}, err
	}
	if name == "" {
		return Event{}, fmt.Errorf("webhook: no event name (field \"event\"); body starts %s", excerpt(body))
	}
	obj := object(top)
	e := Event{Name: name, Kind: kindOf(name)}

	// A bare "id" is the object's: inside the object, or at the top level
	// of a flat body. Which object it names depends on the event.
	bareID := ""
	if obj != nil {
		bareID = obj.vals["id"]
	} else {
		bareID = top.vals["id"]
	}
	checkID := first(obj, top, checkIDKeys)
	sourceID := first(obj, top, sourceIDKeys)
	userID := first(obj, top, userIDKeys)
	switch {
	case e.Kind == KindCheck && checkID == "":
		checkID, bareID = bareID, ""
	case e.Kind == KindSource && sourceID == "":
		sourceID, bareID = bareID, ""
	case isUserEvent(name) && userID == "":
		userID, bareID = bareID, ""
	}
	// A top-level id beside an envelope's object, or one a flat body's
	// event did not claim, is taken as the delivery's own id; so a
	// delivery id reads the same from an envelope and from a flat body.
	delivery := first(top, nil, deliveryKeys)
	switch {
	case delivery != "":
	case obj != nil:
		delivery = top.vals["id"]
	default:
		delivery, bareID = bareID, ""
	}
	status := first(obj, top, statusKeys)
	stamp := first(top, nil, timeKeys)

	for _, f := range []struct {
		what string
		max  int
		v    *string
	}{
		{"check id", maxIDLen, &checkID},
		{"funding source id", maxIDLen, &sourceID},
		{"user id", maxIDLen, &userID},
		{"delivery id", maxIDLen, &delivery},
		{"object id", maxIDLen, &bareID},
		{"status", maxStatusLen, &status},
		{"timestamp", maxTimeLen, &stamp},
	} {
		if *f.v, err = field(f.what, f.max, *f.v); err != nil {
			return Event{}, err
		}
	}
	e.CheckID, e.SourceID, e.UserID = checkID, sourceID, userID
	switch e.Kind {
	case KindCheck:
		if e.CheckStatus = payment.ParseStatus(status); e.CheckStatus == "" {
			e.CheckStatus = checkStatusFromName(name)
		}
		status = string(e.CheckStatus)
	case KindSource:
		if e.SourceStatus = funding.ParseStatus(status); e.SourceStatus == "" {
			e.SourceStatus = sourceStatusFromName(name)
		}
		status = string(e.SourceStatus)
	default:
		status = strings.ToLower(status)
	}
	e.At = parseTime(stamp)
	e.ID = eventID(e, bareID, status, stamp, delivery)
	e.Raw = bytes.Clone(body[:min(len(body), MaxRawBytes)])
	return e, nil
}

// object finds the envelope's object (data, check, funding_source or
// payload), and inside it an object that holds the ids if it does not
// itself; nil for a flat body.
func object(top *node) *node {
	obj := firstKid(top, objectKeys)
	if obj == nil {
		return nil
	}
	if first(obj, nil, checkIDKeys) == "" && first(obj, nil, sourceIDKeys) == "" && obj.vals["id"] == "" {
		if inner := firstKid(obj, innerKeys); inner != nil {
			return inner
		}
	}
	return obj
}

func firstKid(n *node, keys []string) *node {
	for _, k := range keys {
		if kid := n.kids[k]; kid != nil {
			return kid
		}
	}
	return nil
}

// first returns the first non-empty value of keys in a, then in b.
func first(a, b *node, keys []string) string {
	for _, n := range []*node{a, b} {
		if n == nil {
			continue
		}
		for _, k := range keys {
			if v := n.vals[k]; v != "" {
				return v
			}
		}
	}
	return ""
}

// field checks one value read from the body: bounded, valid UTF-8, no
// control characters. These values reach log lines and ledger keys.
func field(what string, max int, v string) (string, error) {
	v = strings.TrimSpace(v)
	if len(v) > max {
		return "", fmt.Errorf("webhook: %s longer than %d bytes", what, max)
	}
	if !utf8.ValidString(v) || strings.ContainsFunc(v, unicode.IsControl) {
		return "", fmt.Errorf("webhook: %s holds invalid or control characters", what)
	}
	return v, nil
}

// eventID is the dedupe key: the SHA-256 of a canonical form of what makes
// an event this event: its name, the ids of its objects, the status it
// reports, when it happened, and the delivery's own id when it carries one.
// other is a bare "id" the event's kind did not claim (the object of a
// subscription.created, say), so that two such events of different
// objects do not collapse into one.
// Every part is read the same way from JSON and form bodies (numbers as
// their text, timestamps normalised to UTC), so one event sent both ways
// has one ID; two changes of one check differ in status or time.
//
// The delivery id is part of the hash rather than the whole key: the
// service documents no such field, and a field batchd takes for one but
// that is constant across deliveries (a webhook registration id) would
// otherwise make every event after the first a "duplicate", acknowledged
// and lost. Folding it in can only make two keys differ, never collide.
func eventID(e Event, other, status, stamp, delivery string) string {
	when := stamp // unreadable: its text still tells two events apart
	if !e.At.IsZero() {
		when = e.At.UTC().Format(time.RFC3339Nano)
	}
	canon, _ := json.Marshal([]string{"batchd.webhook.v1", e.Name, e.CheckID, e.SourceID, e.UserID, other, status, when, delivery})
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}

// excerpt quotes the start of b for an error message: at most 40 bytes,
// with runs of five or more digits masked, and a run cut off at the end
// masked whatever its length, so that an account number cannot reach a log
// line through an error.
func excerpt(b []byte) string {
	const n = 40
	cut := b[:min(len(b), n)]
	out := make([]byte, 0, len(cut))
	for i := 0; i < len(cut); {
		if cut[i] < '0' || cut[i] > '9' {
			out = append(out, cut[i])
			i++
			continue
		}
		j := i
		for j < len(cut) && cut[j] >= '0' && cut[j] <= '9' {
			j++
		}
		if j-i >= 5 || (j == len(cut) && len(b) > n) {
			out = append(out, bytes.Repeat([]byte{'#'}, j-i)...)
		} else {
			out = append(out, cut[i:j]...)
		}
		i = j
	}
	q := strconv.Quote(string(out))
	if len(b) > n {
		q += "…"
	}
	return q
}
