package sandbox

import (
	"net/http"
	"strconv"
	"time"
)

// deprecationDay is the day micro-deposit verification stops taking new
// initiations (spec §9), compared with the UTC day of the key's clock.
var deprecationDay = time.Date(2026, time.June, 8, 0, 0, 0, 0, time.UTC)

// deprecatedMessage is the 410's message (docs/ach-wire.md).
const deprecatedMessage = "Micro-deposit verification is deprecated since 2026-06-08; " +
	"use the bank-linking provider's verification (processor token) instead"

// maxVerifyTries is how many wrong verifications a source survives
// (decided): the third wrong try leaves 0 attempts and fails the source.
const maxVerifyTries = 3

// notInitiated is the 400 for a verify, or a look at the deposits, of a
// source whose verification was never initiated.
func notInitiated() *apiError {
	return errorf(http.StatusBadRequest, "Verification has not been initiated for this funding source")
}

// initiateAnswer answers an initiation; verifyAnswer a verification.
type (
	initiateAnswer struct {
		achOK
		FundingSourceID string `json:"funding_source_id"`
		Status          string `json:"status"`
		Message         string `json:"message"`
	}
	verifyAnswer struct {
		achOK
		FundingSourceID string `json:"funding_source_id"`
		Status          string `json:"status"`
	}
)

// onRefSource serves a verification request: it reads the source id,
// the user_id (checked only when sent) and, by more, the request's other
// fields, then resolves the source under a.mu and runs do on it there.
func (s *Server) onRefSource(w http.ResponseWriter, r *http.Request, ks *keyState,
	more func(*fields), do func(*fundingSource) *apiError) *apiError {
	f := s.readFields(w, r)
	id := f.sourceID(true)
	userID := f.text("user_id", false, maxACHID)
	more(f)
	if aerr := f.failed(); aerr != nil {
		return aerr
	}
	return s.onSource(ks, userID, id, do)
}

// onSource runs do on the key's source id under a.mu, resolved by
// refSource (within the customer userID when not ""): the one way the
// handlers that act on a named source reach it.
func (s *Server) onSource(ks *keyState, userID, id string, do func(*fundingSource) *apiError) *apiError {
	a := s.ach
	a.mu.Lock()
	defer a.mu.Unlock()
	src, aerr := a.refSource(ks, userID, id)
	if aerr != nil {
		return aerr
	}
	return do(src)
}

// refSource resolves the source of a verification request under a.mu.
func (a *achState) refSource(ks *keyState, userID, id string) (*fundingSource, *apiError) {
	if userID != "" {
		return a.ownSource(ks, userID, id)
	}
	return a.sourceOf(ks, id)
}

// initiateVerification serves POST /ach/v2/funding-source/initiate/
// verification. Deposits "arrive" at once in the sandbox (decided). A
// repeated initiation of a Pending source answers the same again without
// new deposits (decided), on any day; a new one is 410 from the
// deprecation day on; a source not Pending is 400.
func (s *Server) initiateVerification(w http.ResponseWriter, r *http.Request, ks *keyState, _ string) *apiError {
	return s.onRefSource(w, r, ks, func(*fields) {}, func(src *fundingSource) *apiError {
		switch {
		case src.status != srcPending:
			return errorf(http.StatusBadRequest, "Micro-deposits are only sent to a Pending funding source; this one is %s", src.status)
		case !src.initiated && !s.keyNow(ks).Before(deprecationDay):
			return errorf(http.StatusGone, "%s", deprecatedMessage)
		case !src.initiated:
			src.deposits = s.ach.drawDeposits()
			src.initiated = true
		}
		writeJSON(w, http.StatusOK, initiateAnswer{succeeded(), src.id, s.srcStatus(src.status), "Micro-deposits sent"})
		return nil
	})
}

// drawDeposits draws two distinct amounts of 1 to 99 cents, under a.mu.
func (a *achState) drawDeposits() [2]int64 {
	d1 := 1 + a.rng.Int64N(99)
	d2 := 1 + a.rng.Int64N(98)
	if d2 >= d1 {
		d2++
	}
	return [2]int64{d1, d2}
}

// verifySource serves POST /ach/v2/funding-source/verify. It works on
// any day once the verification was initiated. Amounts match in either
// order. A verified source answers Verified again (decided).
func (s *Server) verifySource(w http.ResponseWriter, r *http.Request, ks *keyState, _ string) *apiError {
	var a1, a2 int64
	amounts := func(f *fields) { a1, a2 = f.depositAmounts() }
	return s.onRefSource(w, r, ks, amounts, func(src *fundingSource) *apiError {
		was := src.status
		aerr := src.verify(a1, a2)
		switch {
		case src.status == was:
		case src.status == srcVerified:
			s.emitSource(src, eventSourceVerified)
		case src.status == srcVerificationFailed:
			s.emitSource(src, eventSourceVerifyFailed)
		}
		if aerr != nil {
			return aerr
		}
		writeJSON(w, http.StatusOK, verifyAnswer{succeeded(), src.id, s.srcStatus(src.status)})
		return nil
	})
}

// verify checks the amounts a1, a2 against the source's deposits and
// moves it to Verified, or counts a wrong try; the third wrong try makes
// it verification_failed, and every later verify is refused.
func (src *fundingSource) verify(a1, a2 int64) *apiError {
	switch {
	case !src.initiated:
		return notInitiated()
	case src.status == srcVerified:
		return nil
	case src.status == srcVerificationFailed:
		return errorf(http.StatusBadRequest, "Too many failed verification attempts")
	case src.status != srcPending:
		return errorf(http.StatusBadRequest, "Funding source is %s and cannot be verified", src.status)
	}
	d := src.deposits
	if (a1 == d[0] && a2 == d[1]) || (a1 == d[1] && a2 == d[0]) {
		src.status = srcVerified
		return nil
	}
	src.failures++
	left := maxVerifyTries - src.failures
	if left <= 0 {
		src.status = srcVerificationFailed
	}
	return errorf(http.StatusBadRequest, "The amounts do not match the micro-deposits (%d attempts left)", max(left, 0))
}

// centsJSON is an amount of cents written as a JSON number of dollars
// ("0.07"), from its digits, without float arithmetic.
type centsJSON int64

// MarshalJSON writes c as dollars with two decimals.
func (c centsJSON) MarshalJSON() ([]byte, error) {
	b := strconv.AppendInt(nil, int64(c)/100, 10)
	b = append(b, '.', byte('0'+c%100/10), byte('0'+c%10))
	return b, nil
}

// microDeposits serves GET /ach/v2/_sandbox/funding-source/{id}/
// micro-deposits: the customer's bank statement, for tests.
func (s *Server) microDeposits(w http.ResponseWriter, _ *http.Request, ks *keyState, id string) *apiError {
	return s.onSource(ks, "", id, func(src *fundingSource) *apiError {
		if !src.initiated {
			return notInitiated()
		}
		writeJSON(w, http.StatusOK, struct {
			achOK
			Amounts []centsJSON `json:"amounts"`
		}{succeeded(), []centsJSON{centsJSON(src.deposits[0]), centsJSON(src.deposits[1])}})
		return nil
	})
}
