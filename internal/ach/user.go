package ach

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
)

// UserRequest creates a customer. The service requires FirstName,
// LastName and Email (unique per key, in any case); the client leaves the
// field rules to it, so that one place, the service, words them.
type UserRequest struct {
	FirstName string `json:"firstName"`
	LastName  string `json:"lastName"`
	Email     string `json:"email"`
	Phone     string `json:"phone,omitempty"`
}

// User is a customer of the ACH API: the owner of funding sources. ID is
// read from user_id, customer_id or id, because public clients see all
// three.
type User struct {
	ID        string
	FirstName string
	LastName  string
	Email     string
	Phone     string
	Created   time.Time // zero when the service sent none or an unknown form
	// Sources are the customer's funding sources as a customer answer
	// lists them: only ID, Status and Primary are filled in.
	Sources []FundingSource
}

// Paging is the position of a page in a list. The service sends these
// numbers as strings or as numbers; both are read. A field the service
// leaves out is 0.
type Paging struct {
	CurrentPage int
	LastPage    int
	PerPage     int
	Total       int
}

// UserPage is one page of the customer list, oldest first.
type UserPage struct {
	Paging
	Users []User
}

// CreateUser creates a customer. An Ambiguous error means it may exist:
// create it again and, on ErrEmailTaken, take UserIDOf the error (or find it in
// ListUsers by email).
func (c *Client) CreateUser(ctx context.Context, r UserRequest) (*User, error) {
	k := apiwire.Call{Op: OpUserCreate, Method: "POST", Path: "/user", Body: r, Effect: true, Result: "user"}
	a, err := c.core.Do(ctx, k)
	if err != nil {
		return nil, err
	}
	u, err := userOf(a.Object)
	if err == nil && u.ID == "" {
		err = errors.New("no user_id in the answer")
	}
	if err != nil {
		return nil, c.core.BadAnswer(k, a.Status, err)
	}
	return &u, nil
}

// GetUser fetches one customer. The path is /user/:{id}, with the colon
// public clients send: the one form known to work at the real service.
func (c *Client) GetUser(ctx context.Context, id string) (*User, error) {
	k := apiwire.Call{Op: OpUserGet, Method: "GET", Path: "/user/:" + url.PathEscape(id), Result: "user"}
	if err := validID("user id", id); err != nil {
		return nil, c.core.Refuse(k, "not sent", err)
	}
	a, err := c.core.Do(ctx, k)
	if err != nil {
		return nil, err
	}
	u, err := userOf(a.Object)
	switch {
	case err != nil:
	case u.ID == "":
		err = errors.New("no user_id in the answer")
	case !strings.EqualFold(u.ID, id):
		err = fmt.Errorf("answer is about customer %q, not %q", apiwire.Excerpt(u.ID), id)
	}
	if err != nil {
		return nil, c.core.BadAnswer(k, a.Status, err)
	}
	return &u, nil
}

// ListUsers returns one page of the key's customers, oldest first. A zero
// page or limit is not sent, so the service's default applies (page 1, 15
// per page). It does not follow pages: ask for Page+1 while CurrentPage <
// LastPage, and stop at an empty page whatever the numbers say.
func (c *Client) ListUsers(ctx context.Context, page, limit int) (*UserPage, error) {
	k := apiwire.Call{Op: OpUserList, Method: "GET", Path: "/user"}
	if page < 0 || limit < 0 {
		return nil, c.core.Refuse(k, "not sent", fmt.Errorf("negative page %d or limit %d", page, limit))
	}
	q := url.Values{}
	if page > 0 {
		q.Set("page", strconv.Itoa(page))
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	k.Query = q
	a, err := c.core.Do(ctx, k)
	if err != nil {
		return nil, err
	}
	pg, items, err := pageOf(a.Object)
	var users []User
	if err == nil {
		users, err = entries(items, userFrom, func(u *User) error {
			if u.ID == "" {
				return errors.New("no user_id")
			}
			return nil
		})
	}
	if err != nil {
		return nil, c.core.BadAnswer(k, a.Status, err)
	}
	return &UserPage{Paging: pg, Users: users}, nil
}

// userOf reads the customer of an answer: under "user" (the contract),
// "customer" or "data", or the top level itself; its id falls back to the
// top level's user_id, customer_id or id.
func userOf(top object) (User, error) {
	u, err := userFrom(inner(top, "user", "customer", "data"))
	if err != nil {
		return u, err
	}
	if u.ID == "" {
		f := fields{m: top}
		u.ID = f.strictStr("user_id", "customer_id", "id")
		return u, f.err
	}
	return u, nil
}

// userFrom reads one customer object.
func userFrom(m object) (User, error) {
	f := fields{m: m}
	u := User{
		ID:        f.strictStr("user_id", "customer_id", "id"),
		FirstName: f.str("firstName", "first_name"),
		LastName:  f.str("lastName", "last_name"),
		Email:     f.str("email"),
		Phone:     f.str("phone"),
		Created:   dateOf(f.str("created_at", "created")),
	}
	if f.err != nil {
		return User{}, f.err
	}
	items, err := apiwire.ListOf(m["sources"])
	if err != nil {
		return User{}, fmt.Errorf("field \"sources\": %w", err)
	}
	for i, it := range items {
		o, ok := apiwire.ObjectOf(it)
		if !ok {
			return User{}, fmt.Errorf("source %d is not an object", i)
		}
		s, err := sourceFrom(o)
		if err != nil {
			return User{}, fmt.Errorf("source %d: %w", i, err)
		}
		if s.UserID == "" {
			s.UserID = u.ID
		}
		u.Sources = append(u.Sources, s)
	}
	return u, nil
}

// pageOf finds the paging numbers and the entries of a list answer. The
// contract's shape is {"list": {"current_page": ..., "data": [...]}}; the
// paging fields and "data" are also accepted at the top level, and "list"
// may itself be the array of entries.
func pageOf(m object) (Paging, []json.RawMessage, error) {
	src, data := m, m["data"]
	if l, ok := apiwire.ObjectOf(m["list"]); ok && numericKeys(l) {
		data = m["list"] // a PHP array: {"0": entry, "1": entry}
	} else if ok {
		src, data = l, l["data"]
	} else if raw := m["list"]; bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
		data = raw
	}
	f := fields{m: src}
	pg := Paging{
		CurrentPage: f.strictInt("current_page"),
		LastPage:    f.strictInt("last_page"),
		PerPage:     f.strictInt("per_page"),
		Total:       f.strictInt("total"),
	}
	if f.err != nil {
		return Paging{}, nil, f.err
	}
	items, err := apiwire.ListOf(data)
	if err != nil {
		return Paging{}, nil, fmt.Errorf("field \"data\": %w", err)
	}
	return pg, items, nil
}

// entries decodes the entries of a list answer with from, then check
// (which may also fill in what an entry left out). The first entry that
// is not an object or fails either is the error, naming its index.
func entries[T any](items []json.RawMessage, from func(object) (T, error), check func(*T) error) ([]T, error) {
	out := make([]T, 0, len(items))
	for i, it := range items {
		o, ok := apiwire.ObjectOf(it)
		if !ok {
			return nil, fmt.Errorf("entry %d is not an object", i)
		}
		v, err := from(o)
		if err == nil {
			err = check(&v)
		}
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// numericKeys reports an object whose keys are all decimal numbers: how
// PHP encodes an array with gaps.
func numericKeys(m object) bool {
	for k := range m {
		if !apiwire.IsDigits(k) {
			return false
		}
	}
	return len(m) > 0
}
