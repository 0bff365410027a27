package echeck

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"

	"github.com/batchd/batchd/internal/apiwire"
)

// BankInfo describes the bank of a routing number. The spec does not show
// this answer. The client assumes the check envelope's habits: the fields
// under one of "bank_info", "bankinfo", "bank" or "data", or at the top
// level, spelled as on a check ("bank_name", "bank_address", ...) or bare
// ("name", "address", ...). Raw keeps the object the fields were read
// from, so a caller can reach a field the client does not know.
type BankInfo struct {
	Routing string
	Name    string
	Address string
	City    string
	State   string
	Zip     string
	Raw     map[string]json.RawMessage
}

// BankInfo looks up the bank of a 9-digit routing number.
func (c *Client) BankInfo(ctx context.Context, routing string) (*BankInfo, error) {
	k := apiwire.Call{Op: OpCheckBankInfo, Method: "GET", Path: "/v1/check/bankinfo",
		Query: url.Values{"bank_routing": {routing}}}
	if len(routing) != 9 || !apiwire.IsDigits(routing) {
		return nil, c.core.Refuse(k, "not sent", errors.New("routing number is not 9 digits"))
	}
	a, err := c.core.Do(ctx, k)
	if err != nil {
		return nil, err
	}
	m := a.Object
	for _, key := range []string{"bank_info", "bankinfo", "bank", "data"} {
		if v, ok := apiwire.ObjectOf(a.Object[key]); ok {
			m = v
			break
		}
	}
	info := &BankInfo{
		Routing: firstText(m, "bank_routing", "routing", "routing_number"),
		Name:    firstText(m, "bank_name", "name", "bank"),
		Address: firstText(m, "bank_address", "address"),
		City:    firstText(m, "bank_city", "city"),
		State:   firstText(m, "bank_state", "state"),
		Zip:     firstText(m, "bank_zip", "zip"),
		Raw:     m,
	}
	if info.Routing == "" {
		info.Routing = routing
	}
	return info, nil
}
