package statetest

import (
	"testing"
	"time"

	"github.com/batchd/batchd/internal/payment"
)

// Link lines: the intent is recorded once, before the create leaves, and
// found again after a restart; a created line keeps its link.
var linkCases = []testCase{
	{"IntentThenCreated", testLinkLines},
}

func testLinkLines(t *testing.T, be Backend) {
	f := open(t, be)
	k := payment.LineKey{File: "cd34", Line: 2}
	req := payment.LinkRequest{Amount: 1250, Memo: payment.LinkMemo("invoice 7", payment.LinkRef("cd34", 2))}
	rec, fresh, err := f.LinkIntent(payment.Link{Key: k, Ref: payment.LinkRef("cd34", 2), Request: req, Invoice: "INV-7"})
	if err != nil || !fresh || rec.Outcome != payment.LinkSent || rec.Request.Memo != "invoice 7 [bdcd34-2]" {
		t.Fatalf("intent: %+v fresh=%v err=%v", rec, fresh, err)
	}
	if _, _, err := f.LinkIntent(payment.Link{Key: payment.LineKey{File: "cd34", Line: 3}}); err == nil {
		t.Fatal("a link line without its reference was recorded")
	}
	f.reopen()
	again, fresh, err := f.LinkIntent(payment.Link{Key: k, Ref: "other"})
	if err != nil || fresh || again.Outcome != payment.LinkSent || again.Ref != "bdcd34-2" {
		t.Fatalf("the line again: %+v fresh=%v err=%v", again, fresh, err)
	}
	f.clock.Add(time.Hour)
	link := &payment.PaymentLink{Token: "tok", URL: "https://pay.example/tok", Amount: 1250}
	got, err := f.LinkSettled(k, payment.LinkCreated, link, "")
	if err != nil || got.Outcome != payment.LinkCreated || got.Token != "tok" || !got.Settled.Equal(Epoch.Add(time.Hour)) {
		t.Fatalf("created: %+v %v", got, err)
	}
	if got, _ := f.LinkSettled(k, payment.LinkRefused, nil, "late"); got.Outcome != payment.LinkCreated || got.Token != "tok" {
		t.Fatalf("a created line changed: %+v", got)
	}
	all, err := f.Links("")
	if err != nil || len(all) != 1 || all[0].Invoice != "INV-7" {
		t.Fatalf("links: %+v %v", all, err)
	}
	f.invariants()
}
