package webhook

import "testing"

func FuzzDecode(f *testing.F) {
	seeds := [][2]string{
		{jsonCT, changed},
		{jsonCT, `{"event":"check.created","data":` + checkObject + `}`},
		{jsonCT, `{"event":"transaction.status","check":{"check_id":"x","status":"processed"},"timestamp":1771516750}`},
		{jsonCT, `{"event":"funding-source.verified","funding_source_id":"s","status":"Verified","id":"evt"}`},
		{jsonCT, `{"event":"check.changed","data":"{\"check_id\":\"x\",\"data\":\"{}\"}"}`},
		{formCT, "event=check.changed&data[check_id]=x&data[status]=printed&data[a][b][c][d][e]=1"},
		{formCT, "event=check.deleted&data=%7B%22check_id%22%3A%22x%22%7D"},
		{formCT, "event=x&data=1&data[a]=2&a[=b&]=c&[x]=y"},
		{"", "event=user.created&id=u"},
		{"text/plain", `{"event":"endpoint.test"}`},
		{"multipart/form-data", "x"},
		{jsonCT, `{"event":"a","timestamp":"1e308"}`},
	}
	for _, s := range seeds {
		f.Add(s[0], []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, ct string, body []byte) {
		e, err := Decode(ct, body)
		if err != nil {
			return
		}
		if e.Name == "" || e.ID == "" {
			t.Fatalf("accepted event without Name or ID: %+v", e)
		}
		if len(e.Raw) > MaxRawBytes {
			t.Fatalf("Raw of %d bytes", len(e.Raw))
		}
		// Decoding is deterministic.
		again, err := Decode(ct, body)
		if err != nil || again.ID != e.ID {
			t.Fatalf("second Decode differs: %v, %s vs %s", err, again.ID, e.ID)
		}
	})
}
