package conformance

import (
	"net/http"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/ach"
	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/sandbox"
)

// TestACHMicroDeposits walks spec 3.3's first transition: a source
// created Pending is verified by the two micro-deposits, and only then
// may be debited.
func TestACHMicroDeposits(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newACHEnv(t, m, sandbox.Options{})
		c := e.achClient(keyA)
		ctx := t.Context()
		u := newCustomer(t, c)
		s := newPending(t, c, u.ID, freshAccount())

		_, err := c.Verify(ctx, s.ID, 1, 2)
		achErr(t, err, http.StatusBadRequest, apiwire.Permanent, ach.ErrNotInitiated)
		r := e.achRaw(http.MethodGet, "/_sandbox/funding-source/"+s.ID+"/micro-deposits", keyA, nil)
		achRawErr(t, r, http.StatusBadRequest, "Verification has not been initiated for this funding source")

		v, err := c.InitiateVerification(ctx, s.ID)
		if err != nil {
			t.Fatalf("InitiateVerification: %v", err)
		}
		if v.SourceID != s.ID || v.Status != ach.StatusPending || v.Message != "Micro-deposits sent" {
			t.Errorf("initiation answer %+v", v)
		}
		d1, d2 := e.microDeposits(keyA, s.ID)
		wantSourceStatus(t, c, s.ID, ach.StatusPending)

		wrong := money.Cents(1)
		for wrong == d1 || wrong == d2 {
			wrong++
		}
		_, err = c.Verify(ctx, s.ID, wrong, d2)
		ae := achErr(t, err, http.StatusBadRequest, apiwire.Permanent, ach.ErrWrongAmounts)
		if ae.Message != "The amounts do not match the micro-deposits (2 attempts left)" {
			t.Errorf("wrong amounts: message %q", ae.Message)
		}
		wantSourceStatus(t, c, s.ID, ach.StatusPending)
		if _, err := c.Debit(ctx, ach.TransferRequest{SourceID: s.ID, Amount: 100}); apiwire.ClassOf(err) != apiwire.Permanent {
			t.Errorf("debit of a Pending source: %v, want refused", err)
		}

		v, err = c.Verify(ctx, s.ID, d2, d1) // either order matches
		if err != nil {
			t.Fatalf("Verify with the deposits: %v", err)
		}
		if v.SourceID != s.ID || v.Status != ach.StatusVerified || v.StatusText != e.statusWord("Verified") {
			t.Errorf("verify answer %+v, want Verified", v)
		}
		wantSourceStatus(t, c, s.ID, ach.StatusVerified)
		if _, err := c.Debit(ctx, ach.TransferRequest{SourceID: s.ID, Amount: 100}); err != nil {
			t.Errorf("debit of the verified source: %v", err)
		}

		t.Run("amounts as strings and amount1/amount2", func(t *testing.T) {
			for i, body := range []func(id string, a, b money.Cents) map[string]any{
				func(id string, a, b money.Cents) map[string]any {
					return map[string]any{"funding_source_id": id, "amounts": []string{a.String(), b.String()}}
				},
				func(id string, a, b money.Cents) map[string]any {
					return map[string]any{"source_id": id, "amount1": a.String(), "amount2": b.String()}
				},
			} {
				src := newPending(t, c, u.ID, freshAccount())
				ir := e.achRaw(http.MethodPost, "/funding-source/initiate/verification", keyA,
					map[string]any{"source_id": src.ID, "user_id": u.ID})
				if ir.status != http.StatusOK || ir.json["status"] != e.statusWord("Pending") {
					t.Fatalf("initiation by source_id and user_id: HTTP %d %s", ir.status, ir.body)
				}
				a, b := e.microDeposits(keyA, src.ID)
				vr := e.achRaw(http.MethodPost, "/funding-source/verify", keyA, body(src.ID, a, b))
				if vr.status != http.StatusOK || vr.json["status"] != e.statusWord("Verified") {
					t.Errorf("form %d: HTTP %d %s", i, vr.status, vr.body)
				}
			}
		})
	})
}

// TestACHWrongAmountsBounded: wrong amounts are allowed three times
// (decided); the third wrong try fails the source, and from then on even
// the right amounts are refused.
func TestACHWrongAmountsBounded(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newACHEnv(t, m, sandbox.Options{})
		c := e.achClient(keyA)
		ctx := t.Context()
		u := newCustomer(t, c)
		s := newPending(t, c, u.ID, freshAccount())
		if _, err := c.InitiateVerification(ctx, s.ID); err != nil {
			t.Fatalf("InitiateVerification: %v", err)
		}
		d1, d2 := e.microDeposits(keyA, s.ID)
		wrong := money.Cents(1)
		for wrong == d1 || wrong == d2 {
			wrong++
		}
		for try, left := range []string{"2", "1"} {
			_, err := c.Verify(ctx, s.ID, wrong, wrong+100)
			ae := achErr(t, err, http.StatusBadRequest, apiwire.Permanent, ach.ErrWrongAmounts)
			if want := "(" + left + " attempts left)"; !strings.Contains(ae.Message, want) {
				t.Errorf("try %d: message %q lacks %s", try+1, ae.Message, want)
			}
			wantSourceStatus(t, c, s.ID, ach.StatusPending)
		}
		_, err := c.Verify(ctx, s.ID, wrong, wrong+100)
		// The third wrong try spends the last attempt: the client reads
		// it as ErrTooManyAttempts whichever of the two wordings the
		// contract's table allows the service uses.
		achErr(t, err, http.StatusBadRequest, apiwire.Permanent, ach.ErrTooManyAttempts)
		wantSourceStatus(t, c, s.ID, ach.StatusVerificationFailed)
		_, err = c.Verify(ctx, s.ID, d1, d2)
		ae := achErr(t, err, http.StatusBadRequest, apiwire.Permanent, ach.ErrTooManyAttempts)
		if ae.Message != "Too many failed verification attempts" {
			t.Errorf("verify after three wrong tries: message %q", ae.Message)
		}
		wantSourceStatus(t, c, s.ID, ach.StatusVerificationFailed)
		if l := listSources(t, c, u.ID); len(l) != 1 || l[0].StatusText != "verification_failed" {
			t.Errorf("list shows %+v, want status verification_failed", l)
		}
	})
}

// TestACHOnDemandRule checks the decided rule of spec 3.3's on-demand
// rows: an account of the fixture table is enabled for third-party
// verification and Verified; any other account is Unverified.
func TestACHOnDemandRule(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newACHEnv(t, m, sandbox.Options{})
		c := e.achClient(keyA)
		cases := []struct {
			routing, acct string
			want          ach.Status
		}{
			{fixtureRouting, account(1), ach.StatusVerified},
			{fixtureRouting, account(16), ach.StatusVerified},
			{fixtureRouting, account(22), ach.StatusVerified},
			{fixtureRouting, "1111000023", ach.StatusUnverified},
			{fixtureRouting, "1111000000", ach.StatusUnverified},
			{fixtureRouting, "01111000016", ach.StatusUnverified},
			{"021000021", "1111000002", ach.StatusUnverified},
		}
		for _, tc := range cases {
			u := newCustomer(t, c)
			s, err := c.CreateOnDemandFundingSource(t.Context(), ach.FundingSourceRequest{UserID: u.ID, Routing: tc.routing, Account: tc.acct})
			if err != nil {
				t.Errorf("%s/%s: %v", tc.routing, tc.acct, err)
				continue
			}
			if s.Status != tc.want {
				t.Errorf("%s/%s: status %v, want %v", tc.routing, tc.acct, s.Status, tc.want)
			}
			wantSourceStatus(t, c, s.ID, tc.want)
		}
	})
}

// TestACHProcessorPrimary checks spec 3.3's processor row: a valid token
// gives a verified source that becomes the customer's primary, replacing
// the previous primary; a second token replaces the first in turn.
func TestACHProcessorPrimary(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newACHEnv(t, m, sandbox.Options{})
		c := e.achClient(keyA)
		ctx := t.Context()
		u := newCustomer(t, c)
		first := newPending(t, c, u.ID, freshAccount())
		before := primaries(listSources(t, c, u.ID))
		if len(before) > 1 {
			t.Fatalf("primaries before any token: %v", before)
		}

		acct := freshAccount()
		p1, err := c.CreateProcessorFundingSource(ctx, "plaid", u.ID, e.issueToken(keyA, "", "", acct, ""))
		if err != nil {
			t.Fatalf("CreateProcessorFundingSource: %v", err)
		}
		if p1.Status != ach.StatusVerified || p1.StatusText != "verified" || !p1.Primary || p1.UserID != u.ID ||
			p1.Last4 != acct[len(acct)-4:] || p1.Routing != fixtureRouting || p1.Type != ach.Checking {
			t.Errorf("processor source %+v: want verified (lowercase), primary, the token's account", p1)
		}
		l := listSources(t, c, u.ID)
		if got := primaries(l); len(got) != 1 || got[0] != p1.ID {
			t.Errorf("primaries %v, want only %s", got, p1.ID)
		}
		if got, _ := c.GetFundingSource(ctx, first.ID); got == nil || got.Primary || got.Status != ach.StatusPending {
			t.Errorf("earlier source after the token: %+v, want Pending and not primary", got)
		}

		p2, err := c.CreateProcessorFundingSource(ctx, "plaid", u.ID, e.issueToken(keyA, "", "", freshAccount(), "savings"))
		if err != nil {
			t.Fatalf("second CreateProcessorFundingSource: %v", err)
		}
		if !p2.Primary || p2.Type != ach.Savings {
			t.Errorf("second processor source %+v: want primary savings", p2)
		}
		if got := primaries(listSources(t, c, u.ID)); len(got) != 1 || got[0] != p2.ID {
			t.Errorf("primaries %v, want only %s", got, p2.ID)
		}
		if got, err := c.GetUser(ctx, u.ID); err != nil || len(got.Sources) != 3 || !got.Sources[2].Primary || got.Sources[1].Primary {
			t.Errorf("customer's source summary: %+v %v", got, err)
		}
		if _, err := c.Debit(ctx, ach.TransferRequest{SourceID: p2.ID, Amount: 2500}); err != nil {
			t.Errorf("debit of the processor source: %v", err)
		}
	})
}

// TestACHDeprecation checks spec 9's deprecation by the key's sandbox
// clock: on 2026-06-07 an initiation works; from 2026-06-08 a new one is
// 410, while the one initiated before still verifies (and may be
// initiated again); setting the clock back, or another key's clock,
// still before the day, initiates again.
func TestACHDeprecation(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newACHEnv(t, m, sandbox.Options{Date: day(t, "2026-06-07")})
		c := e.achClient(keyA)
		ctx := t.Context()
		if got := e.today(keyA); !got.Equal(day(t, "2026-06-07")) {
			t.Fatalf("sandbox day %s, want 2026-06-07", got)
		}
		u := newCustomer(t, c)
		early := newPending(t, c, u.ID, freshAccount())
		late := newPending(t, c, u.ID, freshAccount())
		if _, err := c.InitiateVerification(ctx, early.ID); err != nil {
			t.Fatalf("initiation on 2026-06-07: %v", err)
		}

		e.setDate(keyA, deprecationDay)
		_, err := c.InitiateVerification(ctx, late.ID)
		ae := achErr(t, err, http.StatusGone, apiwire.Permanent, funding.ErrDeprecated)
		if !strings.Contains(ae.Message, "deprecated") || !strings.Contains(ae.Message, "processor token") {
			t.Errorf("410 message %q: want deprecated, with the processor token as the way", ae.Message)
		}
		wantSourceStatus(t, c, late.ID, ach.StatusPending)
		if _, err := c.InitiateVerification(ctx, early.ID); err != nil {
			t.Errorf("re-initiating a verification begun before the day: %v", err)
		}
		d1, d2 := e.microDeposits(keyA, early.ID)
		if v, err := c.Verify(ctx, early.ID, d1, d2); err != nil || v.Status != ach.StatusVerified {
			t.Errorf("verify after the day of a verification begun before: %+v %v", v, err)
		}

		e.setDate(keyA, "2026-07-01")
		_, err = c.InitiateVerification(ctx, late.ID)
		achErr(t, err, http.StatusGone, apiwire.Permanent, funding.ErrDeprecated)

		b := e.achClient(keyB)
		ub := newCustomer(t, b)
		sb := newPending(t, b, ub.ID, freshAccount())
		if _, err := b.InitiateVerification(ctx, sb.ID); err != nil {
			t.Errorf("keyB, still on 2026-06-07: %v", err)
		}

		e.setDate(keyA, "2026-06-07")
		if _, err := c.InitiateVerification(ctx, late.ID); err != nil {
			t.Errorf("clock set back to 2026-06-07: %v", err)
		}

		// The way forward after the day: the processor token.
		e.setDate(keyA, deprecationDay)
		if s, err := c.CreateProcessorFundingSource(ctx, "plaid", u.ID, e.issueToken(keyA, "", "", freshAccount(), "")); err != nil || s.Status != ach.StatusVerified {
			t.Errorf("processor link on the deprecation day: %+v %v", s, err)
		}
	})
}

// TestACHLegacyProcessor checks spec 9's processor rename: svcach is
// always accepted; the legacy name only while Options.LegacyProcessor
// names it.
func TestACHLegacyProcessor(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		for _, legacy := range []string{"", legacyProcessor} {
			e := newACHEnv(t, m, sandbox.Options{LegacyProcessor: legacy})
			c := e.achClient(keyA)
			u := newCustomer(t, c)
			if _, err := c.CreateProcessorFundingSource(t.Context(), "plaid", u.ID, e.issueToken(keyA, "svcach", "", freshAccount(), "")); err != nil {
				t.Errorf("legacy %q: svcach token: %v", legacy, err)
			}
			_, err := c.CreateProcessorFundingSource(t.Context(), "plaid", u.ID, e.issueToken(keyA, legacyProcessor, "", freshAccount(), ""))
			if legacy == "" {
				achErr(t, err, http.StatusBadRequest, apiwire.Permanent, funding.ErrInvalidToken)
			} else if err != nil {
				t.Errorf("legacy name accepted by Options.LegacyProcessor: %v", err)
			}
		}
	})
}
