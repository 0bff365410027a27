package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
)

// Media types the service accepts for request bodies.
const (
	typeJSON = "application/json"
	typeForm = "application/x-www-form-urlencoded"
)

// params holds the fields of one request, read from a JSON object or from
// form-encoded text (a body or a query string). Exactly one of js and form
// is used.
type params struct {
	js   map[string]json.RawMessage
	form url.Values
}

// value is one submitted field: raw JSON (never null) or form text.
type value struct {
	raw    json.RawMessage
	text   string
	isJSON bool
}

// get returns the field called name. A JSON null counts as absent, so that
// clients that serialise every optional field still pass.
func (p params) get(name string) (value, bool) {
	if p.js != nil {
		raw, ok := p.js[name]
		if !ok || string(raw) == "null" {
			return value{}, false
		}
		return value{raw: raw, isJSON: true}, true
	}
	vs := p.form[name]
	if len(vs) == 0 {
		return value{}, false
	}
	return value{text: vs[0]}, true
}

// mediaType returns the media type of the request's Content-Type without
// parameters, "" when the header is absent, and an error when it is present
// but neither JSON nor form encoding.
func mediaType(r *http.Request) (string, *apiError) {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return "", nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || (mt != typeJSON && mt != typeForm) {
		return "", errorf(http.StatusBadRequest, "Content-Type: must be %s or %s", typeJSON, typeForm)
	}
	return mt, nil
}

// readBody reads a request body of at most limit bytes and decodes it by its
// Content-Type. Without a Content-Type the body is tried as JSON, then as a
// form, because public clients differ in what they send. Every failure is a
// 400: a malformed body is the client's fault, never the server's.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) (params, *apiError) {
	mt, aerr := mediaType(r)
	if aerr != nil {
		return params{}, aerr
	}
	var body []byte
	var err error
	if pre, ok := r.Body.(*preloaded); ok {
		body, err = pre.body, pre.err
	} else {
		body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	}
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return params{}, errorf(http.StatusBadRequest, "body: larger than %d bytes", limit)
		}
		return params{}, errorf(http.StatusBadRequest, "body: could not be read")
	}
	switch mt {
	case typeJSON:
		return decodeJSON(body)
	case typeForm:
		return decodeForm(body)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return params{form: url.Values{}}, nil
	}
	if p, aerr := decodeJSON(body); aerr == nil {
		return p, nil
	}
	return decodeForm(body)
}

// controlRequest is r as a /_sandbox control endpoint reads it: without
// its Content-Type, so that readBody takes the body as JSON if it is a JSON
// object, else as a form. These endpoints stand in for the dashboard and
// are typed by hand: curl -d '{"advance_days": 5}' labels the JSON a form
// (and -H is easy to forget), which read as a form said "advance_days:
// required". The service's own endpoints keep its rules.
func controlRequest(r *http.Request) *http.Request {
	r = r.Clone(r.Context())
	r.Header.Del("Content-Type")
	return r
}

// decodeJSON reads a body that must be one JSON object.
func decodeJSON(body []byte) (params, *apiError) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil || m == nil {
		return params{}, errorf(http.StatusBadRequest, "body: not a JSON object")
	}
	return params{js: m}, nil
}

// decodeForm reads form-encoded text.
func decodeForm(body []byte) (params, *apiError) {
	v, err := url.ParseQuery(string(body))
	if err != nil {
		return params{}, errorf(http.StatusBadRequest, "body: malformed form encoding")
	}
	return params{form: v}, nil
}

// readQuery decodes the query string of r. Malformed escapes are a 400
// rather than silently dropped pairs, so that a filter is never ignored.
func readQuery(r *http.Request) (params, *apiError) {
	v, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return params{}, errorf(http.StatusBadRequest, "query: malformed encoding")
	}
	return params{form: v}, nil
}

// requireContentType enforces the specification's rule that DELETE of a
// check or a payment link carries a Content-Type, although it has no body.
func requireContentType(r *http.Request) *apiError {
	if strings.TrimSpace(r.Header.Get("Content-Type")) == "" {
		return errorf(http.StatusBadRequest, "Content-Type: header required")
	}
	_, aerr := mediaType(r)
	return aerr
}

// readFields reads a request body (readBody) for field-by-field reading.
// A body that cannot be read is the first error of the fields: every read
// then does nothing, and the handler's one check of f.err (f.failed on
// the ACH API) answers it.
func (s *Server) readFields(w http.ResponseWriter, r *http.Request) *fields {
	p, aerr := readBody(w, r, s.opts.MaxBodyBytes)
	return &fields{p: p, err: aerr}
}

// queryFields is readFields for a query string (readQuery).
func queryFields(r *http.Request) *fields {
	q, aerr := readQuery(r)
	return &fields{p: q, err: aerr}
}
