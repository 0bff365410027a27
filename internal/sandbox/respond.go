package sandbox

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// apiError is a failed request as the service reports it: an HTTP status and
// a reason. Messages name the offending field but never carry a submitted
// value, so that no account number or key can leak into a client's logs.
type apiError struct {
	status int
	msg    string
	code   string // ACH error code such as INVALID_PROCESSOR_TOKEN; "" for none
}

func (e *apiError) Error() string { return fmt.Sprintf("%d: %s", e.status, e.msg) }

// errorf returns an apiError with the given status.
func errorf(status int, format string, args ...any) *apiError {
	return &apiError{status: status, msg: fmt.Sprintf(format, args...)}
}

// badField returns the 400 answer for one field: "field: reason".
func badField(field, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, msg: field + ": " + fmt.Sprintf(format, args...)}
}

// errorBody is the service's error envelope.
type errorBody struct {
	Error   bool   `json:"error"`
	Message string `json:"message"`
}

// okBody is the common head of success envelopes.
type okBody struct {
	Success bool   `json:"success"`
	Error   bool   `json:"error"`
	Message string `json:"message"`
}

func ok(msg string) okBody { return okBody{Success: true, Message: msg} }

// writeJSON answers with status and v encoded as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Every answer is built from plain structs; failing here is a bug.
		status = http.StatusInternalServerError
		b = []byte(`{"error":true,"message":"sandbox: encoding the answer failed"}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeError answers with the error envelope of e.
func writeError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.status, errorBody{Error: true, Message: e.msg})
}
