package apiwire

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Unmarshal decodes the valid JSON value b into v with
// github.com/go-json-experiment/json, which is encoding/json/v2 outside
// the standard library (Go 1.27 makes it stable there; the import path is
// then the only change). Its options make it read what encoding/json
// reads: a repeated member name (the last one is kept) and invalid UTF-8
// (replaced, as encoding/json does). Member names match exactly, unlike
// encoding/json's struct decoding, so "AMOUNT" is not read as the amount.
func Unmarshal(b []byte, v any) error {
	return json.Unmarshal(b, v, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
}
