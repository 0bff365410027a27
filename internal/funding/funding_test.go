package funding

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/payment"
)

func TestParseStatus(t *testing.T) {
	for in, want := range map[string]Status{
		"Pending": StatusPending, "pending_verification": StatusPending, "added": StatusPending,
		"Unverified": StatusUnverified, "Verified": StatusVerified, " verified ": StatusVerified,
		"verification-failed": StatusVerificationFailed, "verification_expired": StatusVerificationFailed,
		"deleted": StatusDeleted, "login_required": Status("login_required"),
	} {
		if got := ParseStatus(in); got != want {
			t.Errorf("ParseStatus(%q) = %q, want %q", in, got, want)
		}
	}
	if Status("login_required").Known() || !StatusVerified.Known() {
		t.Error("Known")
	}
	if !StatusPending.Tracked() || StatusUnverified.Tracked() || StatusVerified.Tracked() {
		t.Error("only Pending is tracked")
	}
}

func TestParseMethod(t *testing.T) {
	for in, want := range map[string]Method{"On-Demand": OnDemand, "on_demand": OnDemand, "micro-deposits": MicroDeposits,
		"MICRO": MicroDeposits, "processor": Processor} {
		if got, ok := ParseMethod(in); !ok || got != want {
			t.Errorf("ParseMethod(%q) = %q %v", in, got, ok)
		}
	}
	if _, ok := ParseMethod("verify"); ok {
		t.Error("verify is a file kind, not a column value")
	}
}

func TestDeprecatedFromTheEighthOfJune(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	for _, c := range []struct {
		at   time.Time
		want bool
	}{
		{time.Date(2026, 6, 7, 23, 59, 59, 0, time.UTC), false},
		{time.Date(2026, 6, 8, 0, 0, 0, 0, time.UTC), true},
		{time.Date(2026, 6, 7, 21, 0, 0, 0, ny), true}, // 01:00 UTC on the 8th
	} {
		if got := Deprecated(c.at); got != c.want {
			t.Errorf("Deprecated(%s) = %v", c.at, got)
		}
	}
}

func TestBelongs(t *testing.T) {
	k := payment.RowKey{Batch: 1, Line: 2}
	acct := &Row{Key: k, UserID: "u1", Request: Request{Method: OnDemand, Routing: "999900001", Account: "1111000016"}}
	src := &Source{ID: "s1", UserID: "u1", Routing: "999900001", LastFour: "0016", Status: StatusVerified}
	if !Belongs(acct, src, Owner{}) || !Belongs(acct, src, Owner{Key: k, Owned: true}) {
		t.Fatal("the row's own source")
	}
	for name, s := range map[string]*Source{
		"other customer": {ID: "s1", UserID: "u2", Routing: "999900001", LastFour: "0016"},
		"other routing":  {ID: "s1", UserID: "u1", Routing: "011000015", LastFour: "0016"},
		"other account":  {ID: "s1", UserID: "u1", Routing: "999900001", LastFour: "0017"},
		"deleted":        {ID: "s1", UserID: "u1", Routing: "999900001", LastFour: "0016", Status: StatusDeleted},
		"no id":          {UserID: "u1", Routing: "999900001", LastFour: "0016"},
	} {
		if Belongs(acct, s, Owner{}) {
			t.Errorf("%s: belongs", name)
		}
	}
	if Belongs(acct, src, Owner{Key: payment.RowKey{Batch: 1, Line: 3}, Owned: true}) {
		t.Error("a source another row owns")
	}
	tok := &Row{Key: k, UserID: "u1", Request: Request{Method: Processor, ProcessorToken: "t"}, SourcesBefore: []string{"old"}}
	if !Belongs(tok, &Source{ID: "new", UserID: "u1", Status: StatusVerified}, Owner{}) {
		t.Error("a new verified source after a token exchange")
	}
	if Belongs(tok, &Source{ID: "old", UserID: "u1", Status: StatusVerified}, Owner{}) ||
		Belongs(tok, &Source{ID: "new", UserID: "u1", Status: StatusPending}, Owner{}) {
		t.Error("a source from before the exchange, or not verified")
	}
	short := &Row{Key: k, UserID: "u1", Request: Request{Method: OnDemand, Routing: "999900001", Account: "7770001"}}
	if !Belongs(short, &Source{ID: "s2", UserID: "u1", Routing: "999900001", LastFour: "001"}, Owner{}) ||
		Belongs(short, &Source{ID: "s2", UserID: "u1", Routing: "999900001", LastFour: "01"}, Owner{}) {
		t.Error("a short account shows its last half")
	}
	if Belongs(&Row{Key: k, Request: Request{Method: OnDemand, Routing: "999900001", Account: "1111000016"}}, src, Owner{}) {
		t.Error("a row without a customer owns nothing yet")
	}
}

func TestRequestHidesSecrets(t *testing.T) {
	r := Request{Method: Processor, UserID: "u1", ProcessorToken: "processor-sandbox-secret", Routing: "999900001", Account: "1111000016"}
	for _, s := range []string{r.String(), fmt.Sprintf("%v %+v %#v", r, r, r)} {
		if strings.Contains(s, "secret") || strings.Contains(s, "1111000016") || !strings.Contains(s, "****0016") {
			t.Errorf("%q", s)
		}
	}
}
