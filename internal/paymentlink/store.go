package paymentlink

import (
	"time"

	"github.com/batchd/batchd/internal/payment"
)

// Outcome is what became of one link line. Sent is the intent: the
// create may have left, nothing is known of its answer.
type Outcome string

const (
	Sent    Outcome = "sent"
	Created Outcome = "created"
	Refused Outcome = "refused"
)

// Settled reports whether o is final: created or refused.
func (o Outcome) Settled() bool { return o == Created || o == Refused }

// Line is the ledger's record of one link line (payment.LineStore, in
// the bucket payment.KindLinks.Lines names).
type Line struct {
	Key payment.LineKey `json:"key"`
	Ref string          `json:"ref"`
	// NoRef: the memo was sent without the reference (memo_reference
	// off), so the memo and amount find the link.
	NoRef   bool    `json:"no_ref,omitempty"`
	Request Request `json:"request"`
	// Kept by batchd, never sent.
	Invoice    string `json:"invoice,omitempty"`
	PayerEmail string `json:"payer_email,omitempty"`
	PayerName  string `json:"payer_name,omitempty"`

	Outcome Outcome   `json:"outcome"`
	Token   string    `json:"token,omitempty"`
	URL     string    `json:"url,omitempty"`
	Note    string    `json:"note,omitempty"`
	Sent    time.Time `json:"sent"`
	Settled time.Time `json:"settled,omitzero"`
}

// lines are the link lines in the ledger.
var lines = payment.LineStore[Line]{
	Bucket: payment.KindLinks.Lines(), Noun: "link line",
	Key:   func(l *Line) payment.LineKey { return l.Key },
	Final: func(l *Line) bool { return l.Outcome.Settled() },
	Valid: func(l *Line) string {
		if l.Ref == "" {
			return " and its reference"
		}
		return ""
	},
}

// Lines lists the recorded lines of the link file whose content hash is
// file (every file's for ""), in file and line order.
func Lines(db payment.LineLedger, file string) ([]Line, error) { return lines.List(db, file) }

// intent records l as sent at now unless its line has a record already,
// which it returns with fresh false.
func intent(db payment.LineLedger, l Line, now time.Time) (Line, bool, error) {
	l.Outcome, l.Sent, l.Settled = Sent, now.UTC(), time.Time{}
	return lines.Intent(db, l)
}

// settle records what became of a link line at now; a line created or
// refused keeps that outcome.
func settle(db payment.LineLedger, k payment.LineKey, outcome Outcome, link *Link, note string, now time.Time) (Line, error) {
	return lines.Settle(db, k, func(l *Line) {
		l.Outcome, l.Note, l.Settled = outcome, note, now.UTC()
		if link != nil {
			l.Token, l.URL = link.Token, link.URL
		}
	})
}
