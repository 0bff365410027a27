package echeck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
)

// ListParams selects a page of a list. Only non-zero fields are sent, so
// the service's defaults apply (15 per page, first page, newest first).
type ListParams struct {
	Limit     int    // 1 to 100
	Page      int    // from 1
	Sort      string // date, number or name
	Direction string // ASC or DESC
	// FromDate and ToDate (YYYY-MM-DD, as time.DateOnly formats them),
	// Label and LinkID filter the check list. The payment link list has
	// no such filters; setting them there is an error.
	FromDate string
	ToDate   string
	Label    string
	LinkID   string
	// Search is the payment link list's search (by memo, amount or
	// creation date; the spec does not show the parameter's name, and
	// batchd assumes "search", as docs/sandbox-assumptions.md says). The
	// check list has none.
	Search string
}

// query encodes p; withFilters allows the check list's filters.
func (p ListParams) query(withFilters bool) (url.Values, error) {
	q := url.Values{}
	if p.Limit != 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.Page != 0 {
		q.Set("page", strconv.Itoa(p.Page))
	}
	set := func(key, v string) {
		if v != "" {
			q.Set(key, v)
		}
	}
	set("sort", p.Sort)
	set("direction", p.Direction)
	if !withFilters {
		if p.FromDate != "" || p.ToDate != "" || p.Label != "" || p.LinkID != "" {
			return nil, errors.New("the payment link list takes no date, label or link filter")
		}
		set("search", p.Search)
		return q, nil
	}
	if p.Search != "" {
		return nil, errors.New("the check list takes no search")
	}
	for _, d := range []string{p.FromDate, p.ToDate} {
		if _, err := time.Parse(time.DateOnly, d); d != "" && err != nil {
			return nil, fmt.Errorf("date %q is not YYYY-MM-DD", apiwire.Excerpt(d))
		}
	}
	set("from_date", p.FromDate)
	set("to_date", p.ToDate)
	set("label", p.Label)
	set("link_id", p.LinkID)
	return q, nil
}

// Paging is the position of a page in a list (spec 2.7). The service sends
// these numbers as strings or as numbers; both are read. A field the
// service leaves out is 0.
type Paging struct {
	CurrentPage int
	LastPage    int
	PerPage     int
	Total       int
}

// CheckPage is one page of the check list.
type CheckPage struct {
	Paging
	Checks []Check
}

// ListChecks returns one page of checks. It does not follow pages: the
// caller asks for Page+1 while CurrentPage < LastPage, and should also stop
// at a page with no checks, whatever the paging numbers say (a field the
// service leaves out reads as 0).
func (c *Client) ListChecks(ctx context.Context, p ListParams) (*CheckPage, error) {
	k := apiwire.Call{Op: OpCheckList, Method: "GET", Path: "/v1/check/list"}
	pg, checks, err := list(ctx, c, k, p, true, (*checkWire).check)
	if err != nil {
		return nil, err
	}
	return &CheckPage{Paging: pg, Checks: checks}, nil
}

// list sends the list call k with the parameters of p (dated: its dates
// and label apply) and decodes the page's entries with from.
func list[W, T any](ctx context.Context, c *Client, k apiwire.Call, p ListParams, dated bool,
	from func(*W) (T, error)) (Paging, []T, error) {
	q, err := p.query(dated)
	if err != nil {
		return Paging{}, nil, c.core.Refuse(k, "not sent", err)
	}
	k.Query = q
	a, err := c.core.Do(ctx, k)
	if err != nil {
		return Paging{}, nil, err
	}
	pg, out, err := entries(a, from)
	if err != nil {
		return Paging{}, nil, c.core.BadAnswer(k, a.Status, err)
	}
	return pg, out, nil
}

// pageWire is a list answer's page: its paging numbers and entries, each
// entry decoded into W when it is a non-empty object.
type pageWire[W any] struct {
	CurrentPage apiwire.Val[int]             `json:"current_page"`
	LastPage    apiwire.Val[int]             `json:"last_page"`
	PerPage     apiwire.Val[int]             `json:"per_page"`
	Total       apiwire.Val[int]             `json:"total"`
	Data        apiwire.List[apiwire.Obj[W]] `json:"data"`
}

// entries decodes a list answer's paging numbers and each entry with
// from. The documented shape is {"list": {"current_page": ..., "data":
// [...]}}; the paging numbers and "data" are also read at the top level,
// and "list" may itself be the list of entries. The paging numbers are
// strict, in their order, then the entry list, then each entry: the
// first error found is returned.
func entries[W, T any](a apiwire.Answer, from func(*W) (T, error)) (Paging, []T, error) {
	var p pageWire[W]
	var err error
	if _, hasList := a.Object["list"]; !hasList {
		if _, hasData := a.Object["data"]; !hasData {
			// An empty answer, or one of another call: read as an empty
			// page it would end a listing, and a walk would take every
			// check as absent from the list.
			return Paging{}, nil, errors.New(`the answer holds no list (neither "list" nor "data")`)
		}
	}
	if raw := a.Object["list"]; apiwire.IsObject(raw) {
		err = apiwire.Unmarshal(raw, &p)
	} else if err = apiwire.Unmarshal(a.Body, &p); bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) && err == nil {
		err = apiwire.Unmarshal(raw, &p.Data)
	}
	pg := Paging{CurrentPage: p.CurrentPage.Strict("current_page", &err), LastPage: p.LastPage.Strict("last_page", &err),
		PerPage: p.PerPage.Strict("per_page", &err), Total: p.Total.Strict("total", &err)}
	if err != nil {
		return Paging{}, nil, err
	}
	if p.Data.Err != nil {
		return Paging{}, nil, apiwire.FieldError("data", p.Data.Err)
	}
	out := make([]T, 0, len(p.Data.V))
	for i := range p.Data.V {
		if !p.Data.V[i].OK {
			return pg, nil, fmt.Errorf("entry %d is not an object", i)
		}
		v, err := from(&p.Data.V[i].V)
		if err != nil {
			return pg, nil, fmt.Errorf("entry %d: %w", i, err)
		}
		out = append(out, v)
	}
	return pg, out, nil
}
