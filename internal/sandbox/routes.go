package sandbox

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"sort"
	"strings"
)

// handler serves one endpoint for an authenticated key. arg is the last
// path segment of parameterised paths ({check_id}, {checkout_token}). A
// returned error is written as the service's error envelope.
type handler func(w http.ResponseWriter, r *http.Request, ks *keyState, arg string) *apiError

// endpoint is one path with its handler per method.
type endpoint struct {
	methods map[string]handler
	handler handler // the method's handler, set by match
	sandbox bool    // a /_sandbox control endpoint: exempt from faults
}

// allow lists the endpoint's methods for the Allow header.
func (e endpoint) allow() string {
	ms := make([]string, 0, len(e.methods))
	for m := range e.methods {
		ms = append(ms, m)
	}
	sort.Strings(ms)
	return strings.Join(ms, ", ")
}

// routes maps paths to endpoints. Fixed paths win over parameterised ones,
// so that GET /v1/check/list is the list and never the check "list".
type routes struct {
	exact  map[string]endpoint
	prefix map[string]endpoint // "/v1/check/" serves "/v1/check/{id}"
}

// buildRoutes lists the endpoints of spec section 4.1 and the sandbox
// control endpoints. Every endpoint that changes state, and bank info,
// is lossy: DropRate may lose its answer (drop.go).
func (s *Server) buildRoutes() routes {
	v1 := func(m map[string]handler) endpoint { return endpoint{methods: m} }
	ctl := func(m map[string]handler) endpoint { return endpoint{methods: m, sandbox: true} }
	return routes{
		exact: map[string]endpoint{
			"/v1/check/create":          v1(map[string]handler{http.MethodPost: s.lossy(s.createCheck)}),
			"/v1/check/list":            v1(map[string]handler{http.MethodGet: s.listChecks}),
			"/v1/check/bankinfo":        v1(map[string]handler{http.MethodGet: s.lossy(s.bankInfo)}),
			"/v1/check/edit":            v1(map[string]handler{http.MethodPost: s.lossy(s.editCheck)}),
			"/v1/account/tokenization":  v1(map[string]handler{http.MethodPost: s.lossy(s.tokenize)}),
			"/v1/paymentlink/create":    v1(map[string]handler{http.MethodPost: s.lossy(s.createLink)}),
			"/v1/paymentlink/list":      v1(map[string]handler{http.MethodGet: s.listLinks}),
			"/_sandbox/clock":           ctl(map[string]handler{http.MethodGet: s.getClock, http.MethodPost: s.advanceClock}),
			"/_sandbox/deposit":         ctl(map[string]handler{http.MethodPost: s.deposit}),
			"/_sandbox/paymentlink/pay": ctl(map[string]handler{http.MethodPost: s.payLink}),
			"/_sandbox/webhooks/faults": ctl(map[string]handler{http.MethodPost: s.setWebhookFaults}),
		},
		prefix: map[string]endpoint{
			"/v1/check/":                    v1(map[string]handler{http.MethodGet: s.getCheck, http.MethodDelete: s.lossy(s.deleteCheck)}),
			"/v1/paymentlink/changestatus/": v1(map[string]handler{http.MethodDelete: s.lossy(s.changeLinkStatus)}),
		},
	}
}

// match finds the endpoint for a request: 404 for an unknown path, 405
// (the endpoint is returned for its Allow header) for a wrong method.
func (rs routes) match(method, path string) (endpoint, string, *apiError) {
	ep, ok := rs.exact[path]
	arg := ""
	if !ok {
		i := strings.LastIndexByte(path, '/')
		if i < 0 || i == len(path)-1 {
			return endpoint{}, "", errorf(http.StatusNotFound, "no such endpoint")
		}
		if ep, ok = rs.prefix[path[:i+1]]; !ok {
			return endpoint{}, "", errorf(http.StatusNotFound, "no such endpoint")
		}
		arg = path[i+1:]
	}
	h, ok := ep.methods[method]
	if !ok {
		return ep, "", errorf(http.StatusMethodNotAllowed, "method %s not allowed; use %s", method, ep.allow())
	}
	ep.handler = h
	return ep, arg, nil
}

// statusWriter records the status of an answer for the request log and
// still lets a handler take over the connection (DropRate).
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Hijack hands over the underlying connection when the server supports it.
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if hj, ok := w.ResponseWriter.(http.Hijacker); ok {
		return hj.Hijack()
	}
	return nil, nil, errors.New("connection cannot be hijacked")
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
