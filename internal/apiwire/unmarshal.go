package apiwire

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// lenient are the options that make encoding/json/v2 read what
// encoding/json reads: a repeated member name (the last one is kept) and
// invalid UTF-8 (which the lenient readers replace as encoding/json does).
// Member names match exactly, unlike encoding/json, so that "AMOUNT" is
// not read as the amount, as it never was.
var lenient = json.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

// Unmarshal decodes the valid JSON value b into v with
// github.com/go-json-experiment/json (encoding/json/v2 outside the
// standard library, until Go 1.27 makes it stable there).
func Unmarshal(b []byte, v any) error {
	return json.Unmarshal(b, v, lenient)
}
