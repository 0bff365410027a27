package sandbox

import (
	"net/http"

	"github.com/google/uuid"
)

// availability answers GET /accounts. The owner is named only when it is
// the caller's customer, so that no key learns another's customers.
type availability struct {
	achOK
	Available achBool `json:"available"`
	UserID    string  `json:"user_id,omitempty"`
}

// accountAvailable serves GET /ach/v2/accounts?routing_number=R&
// account_number=A: whether the account may be linked to a new customer.
func (s *Server) accountAvailable(w http.ResponseWriter, r *http.Request, ks *keyState, _ string) *apiError {
	f := queryFields(r)
	routing, account := f.bankAccount()
	if aerr := f.failed(); aerr != nil {
		return aerr
	}
	s.ach.mu.Lock()
	held := s.ach.accounts[bankKey(routing, account)]
	out := availability{achOK: succeeded(), Available: achBool{held == nil, s.opts.Quirks}}
	if held != nil && held.cust.owner == ks {
		out.UserID = held.cust.id
	}
	s.ach.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
	return nil
}

// deleteAccount serves POST /ach/v2/accounts/delete: the account leaves
// its customer's profile (the source becomes deleted) and is free. Only
// the caller's customers' accounts can be deleted; any other is 404.
func (s *Server) deleteAccount(w http.ResponseWriter, r *http.Request, ks *keyState, _ string) *apiError {
	f := s.readFields(w, r)
	routing, account := f.bankAccount()
	if aerr := f.failed(); aerr != nil {
		return aerr
	}
	a := s.ach
	a.mu.Lock()
	defer a.mu.Unlock()
	held := a.accounts[bankKey(routing, account)]
	if held == nil || held.cust.owner != ks {
		return errorf(http.StatusNotFound, "Bank account not found")
	}
	s.deleteSource(held)
	writeJSON(w, http.StatusOK, succeeded())
	return nil
}

// Kinds of transfer.
const (
	kindDebit  = "debit"
	kindCredit = "credit"
)

// transferAnswer answers a direct debit or credit.
type transferAnswer struct {
	achOK
	CheckID string `json:"check_id"`
}

// achDebit serves POST /ach/v2/ach-debit {sender, name, amount,
// description, label}: only a Verified source may be debited (402).
func (s *Server) achDebit(w http.ResponseWriter, r *http.Request, ks *keyState, _ string) *apiError {
	return s.transfer(w, r, ks, "sender", kindDebit)
}

// achCredit serves POST /ach/v2/check/send {recipient, …}: Unverified and
// Verified sources may receive credits; others are 402 (decided).
func (s *Server) achCredit(w http.ResponseWriter, r *http.Request, ks *keyState, _ string) *apiError {
	return s.transfer(w, r, ks, "recipient", kindCredit)
}

// transfer validates and keeps a direct debit or credit drawn on the
// source named by the field party.
func (s *Server) transfer(w http.ResponseWriter, r *http.Request, ks *keyState, party, kind string) *apiError {
	f := s.readFields(w, r)
	id := f.text(party, true, maxACHID)
	f.text("name", false, maxName)
	cents, _ := f.amount("amount", true)
	f.text("description", false, maxDescription)
	f.text("label", false, maxLabel)
	if aerr := f.failed(); aerr != nil {
		return aerr
	}
	return s.onSource(ks, "", id, func(src *fundingSource) *apiError {
		if aerr := usableFor(src, kind); aerr != nil {
			return aerr
		}
		t := transfer{id: uuid.NewString(), source: src.id, kind: kind, cents: int64(cents)}
		ks.ach.transfers = append(ks.ach.transfers, t)
		writeJSON(w, http.StatusOK, transferAnswer{succeeded(), t.id})
		return nil
	})
}

// usableFor applies the specification's rule (§3.3, §4.2) that an
// unverified account takes credits only: debits need a verified source,
// credits a verified or Unverified one.
func usableFor(src *fundingSource, kind string) *apiError {
	switch {
	case src.verified():
		return nil
	case kind == kindDebit:
		return errorf(http.StatusPaymentRequired, "Funding source is not verified for debits")
	case src.status == srcUnverified:
		return nil
	}
	return errorf(http.StatusPaymentRequired, "Funding source cannot receive credits while it is %s", src.status)
}

// webhookAnswer answers both webhook endpoints.
type webhookAnswer struct {
	achOK
	WebhookURL string `json:"webhook_url"`
}

// setWebhook serves POST /ach/v2/webhooks {url}: the key's one webhook
// URL, replacing the previous one (spec §2.6), enabled even when
// failures had disabled the previous registration.
func (s *Server) setWebhook(w http.ResponseWriter, r *http.Request, ks *keyState, _ string) *apiError {
	f := s.readFields(w, r)
	u := f.webURL("url")
	if u == "" && f.err == nil {
		f.fail("url", "required")
	} else if len(u) > maxWebhookURL {
		f.fail("url", "must be at most %d characters", maxWebhookURL)
	}
	if aerr := f.failed(); aerr != nil {
		return aerr
	}
	s.register(ks, u)
	writeJSON(w, http.StatusOK, webhookAnswer{succeeded(), u})
	return nil
}

// getWebhook serves GET /ach/v2/webhooks (decided): the registered URL or
// "", so that batchd can tell whether its URL is registered, and
// whether failed deliveries disabled it.
func (s *Server) getWebhook(w http.ResponseWriter, _ *http.Request, ks *keyState, _ string) *apiError {
	u, off := ks.endpoint()
	writeJSON(w, http.StatusOK, hookAnswer{succeeded(), u, off})
	return nil
}
