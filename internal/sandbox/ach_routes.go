package sandbox

import (
	"net/http"
	"strings"
)

// achPrefix is the ACH API's path prefix (spec §9).
const achPrefix = "/ach/v2"

// microDepositsSuffix ends the one ACH path whose id is not its last
// segment: /ach/v2/_sandbox/funding-source/{id}/micro-deposits.
const (
	microDepositsPrefix = achPrefix + "/_sandbox/funding-source/"
	microDepositsSuffix = "/micro-deposits"
)

// isACHPath reports whether path belongs to the ACH API, so that even its
// unknown paths are answered in the ACH error envelope.
func isACHPath(path string) bool {
	return path == achPrefix || strings.HasPrefix(path, achPrefix+"/")
}

// buildACHRoutes lists the endpoints of docs/ach-wire.md. The processor
// path names its provider: only "plaid" exists, so any other provider is
// an unknown path. /ach/v2/_sandbox/clock is the key's one sandbox clock,
// the same as /_sandbox/clock, for clients that keep to the ACH prefix.
// The creates of customers and funding sources are lossy (drop.go).
func (s *Server) buildACHRoutes() routes {
	api := func(m map[string]handler) endpoint { return endpoint{methods: m} }
	ctl := func(m map[string]handler) endpoint { return endpoint{methods: m, sandbox: true} }
	post := func(h handler) map[string]handler { return map[string]handler{http.MethodPost: h} }
	get := func(h handler) map[string]handler { return map[string]handler{http.MethodGet: h} }
	p := achPrefix
	return routes{
		exact: map[string]endpoint{
			p + "/user":                                 api(map[string]handler{http.MethodPost: s.lossy(s.createUser), http.MethodGet: s.listUsers}),
			p + "/funding-source":                       api(post(s.lossy(s.createSource))),
			p + "/on-demand/funding-source":             api(post(s.lossy(s.createOnDemand))),
			p + "/funding-source/processor/plaid":       api(post(s.lossy(s.exchangeToken))),
			p + "/funding-source/remove":                api(post(s.removeSource)),
			p + "/funding-source/initiate/verification": api(post(s.initiateVerification)),
			p + "/funding-source/verify":                api(post(s.verifySource)),
			p + "/accounts":                             api(get(s.accountAvailable)),
			p + "/accounts/delete":                      api(post(s.deleteAccount)),
			p + "/ach-debit":                            api(post(s.achDebit)),
			p + "/check/send":                           api(post(s.achCredit)),
			p + "/webhooks":                             api(map[string]handler{http.MethodPost: s.setWebhook, http.MethodGet: s.getWebhook}),
			p + "/_sandbox/processor/token":             ctl(post(s.issueToken)),
			p + "/_sandbox/processor/token/revoke":      ctl(post(s.revokeToken)),
			p + "/_sandbox/clock":                       ctl(map[string]handler{http.MethodGet: s.getClock, http.MethodPost: s.advanceClock}),
		},
		prefix: map[string]endpoint{
			p + "/user/":                api(get(s.getUserPath)),
			p + "/funding-source/user/": api(get(s.listSources)),
			p + "/funding-source/":      api(get(s.getSource)),
		},
	}
}

// matchACH finds the ACH endpoint for a request; the micro-deposits path
// is matched first because its id sits before its last segment.
func (s *Server) matchACH(method, path string) (endpoint, string, *apiError) {
	if id, ok := strings.CutPrefix(path, microDepositsPrefix); ok {
		if id, ok = strings.CutSuffix(id, microDepositsSuffix); ok && id != "" && !strings.Contains(id, "/") {
			ep := endpoint{methods: map[string]handler{http.MethodGet: s.microDeposits}, sandbox: true}
			h, found := ep.methods[method]
			if !found {
				return ep, "", errorf(http.StatusMethodNotAllowed, "method %s not allowed; use %s", method, ep.allow())
			}
			ep.handler = h
			return ep, id, nil
		}
	}
	return s.achRoutes.match(method, path)
}

// serveACH answers one /ach/v2 request after Latency: routing (404,
// 405), the ACH authentication (403), for API endpoints the rate limit
// and injected errors, then the endpoint. It returns the key for the
// request log, redacted.
func (s *Server) serveACH(w *statusWriter, r *http.Request) string {
	ep, arg, aerr := s.matchACH(r.Method, r.URL.Path)
	if aerr != nil {
		if aerr.status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", ep.allow())
		}
		writeACHError(w, aerr)
		return "-"
	}
	ks, aerr := s.authenticateACH(r)
	if aerr != nil {
		writeACHError(w, aerr)
		return "-"
	}
	if !ep.sandbox && !s.admitAs(w, ks, r, achFaults) {
		return redactKey(ks)
	}
	if ep.sandbox {
		r = controlRequest(r)
	}
	if aerr := ep.handler(w, r, ks, arg); aerr != nil {
		writeACHError(w, aerr)
	}
	return redactKey(ks)
}
