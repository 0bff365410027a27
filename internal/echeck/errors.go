package echeck

import (
	"net/http"
	"strings"

	"github.com/batchd/batchd/internal/payment"

	"github.com/batchd/batchd/internal/apiwire"
)

// conditions names what a refusal says beyond its class: to the domain,
// a 404 is payment.ErrNotFound (the check does not exist).
func conditions(status int, _, _ string) (conds, outcomes []error) {
	if status == http.StatusNotFound {
		return nil, []error{payment.ErrNotFound}
	}
	return nil, nil
}

// apiMessage reads the "message" and "code" of an error body. A body that
// is not a JSON object, or has no message, is quoted instead. Laravel-style
// validation details ("errors": {"field": ["reason"]}) are appended, since
// the bare message ("The given data was invalid.") does not name the field.
func apiMessage(body []byte, status int) (msg, code string) {
	msg, code, _ = refusalMessage(body, status)
	return msg, code
}

// refusalMessage is apiMessage for apiwire.Options.Message.
func refusalMessage(body []byte, status int) (msg, code string, m object) {
	return apiwire.Message(body, status, func(m object) string {
		msg := apiwire.LooseText(m["message"])
		if msg == "" {
			if s := apiwire.LooseText(m["error"]); s != "" {
				if _, isBool := apiwire.BoolText(s); !isBool {
					msg = s
				}
			}
		}
		if detail := validationDetail(m); detail != "" {
			msg = strings.TrimSpace(msg + " (" + detail + ")")
		}
		return msg
	})
}

// validationDetail returns "field: reason" for the first field (in name
// order) of a Laravel-style "errors" object.
func validationDetail(m object) string {
	errs, ok := apiwire.ObjectOf(m["errors"])
	if !ok {
		return ""
	}
	var first string
	for k := range errs {
		if first == "" || k < first {
			first = k
		}
	}
	var reason string
	if l, err := apiwire.ListOf(errs[first]); err == nil && len(l) > 0 {
		reason, _ = apiwire.Text(l[0])
	} else {
		reason, _ = apiwire.Text(errs[first])
	}
	if reason == "" {
		return first
	}
	return first + ": " + reason
}

// errorFlagged reports whether a 2xx body says it failed: "error" is true
// (or a non-empty message string), or "success" is false, which a string
// of blanks also says.
func errorFlagged(m object) bool { return apiwire.ErrorFlagged(m, true) }
