package sandbox

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
)

// discardWriter is a minimal ResponseWriter for in-process calls.
type discardWriter struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func (w *discardWriter) Header() http.Header {
	if w.h == nil {
		w.h = http.Header{}
	}
	return w.h
}
func (w *discardWriter) WriteHeader(s int) { w.status = s }

// reset readies w for the next request.
func (w *discardWriter) reset() {
	clear(w.h)
	w.status = 0
	w.body.Reset()
}
func (w *discardWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(b)
}

// newRequest builds an in-process request.
func newRequest(method, path, key, ctype string, body []byte) *http.Request {
	r := httptest.NewRequest(method, path, bytes.NewReader(body))
	if key != "" {
		r.Header.Set("Authorization", "Bearer "+key)
	}
	if ctype != "" {
		r.Header.Set("Content-Type", ctype)
	}
	return r
}

func reportCreates(b *testing.B) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "creates/s")
}

// BenchmarkCreate measures check creates per second: through ServeHTTP in
// process (serial and parallel) and over loopback HTTP with parallel
// clients.
func BenchmarkCreate(b *testing.B) {
	body, _ := json.Marshal(with(map[string]any{"verify_before_save": true, "label": "bench"}))
	b.Run("inprocess", func(b *testing.B) {
		srv := New(Options{})
		b.ReportAllocs()
		req := newRequest(http.MethodPost, "/v1/check/create", "sk_test_bench", typeJSON, body)
		w := &discardWriter{}
		for b.Loop() {
			req.Body = io.NopCloser(bytes.NewReader(body))
			w.reset()
			srv.ServeHTTP(w, req)
			if w.status != http.StatusOK {
				b.Fatalf("status %d: %s", w.status, w.body.String())
			}
		}
		reportCreates(b)
	})
	b.Run("inprocess-parallel", func(b *testing.B) {
		srv := New(Options{})
		var n atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			key := "sk_test_bench" + strconv.FormatInt(n.Add(1)%8, 10)
			req := newRequest(http.MethodPost, "/v1/check/create", key, typeJSON, body)
			w := &discardWriter{}
			for pb.Next() {
				req.Body = io.NopCloser(bytes.NewReader(body))
				w.reset()
				srv.ServeHTTP(w, req)
				if w.status != http.StatusOK {
					b.Errorf("status %d", w.status)
					return
				}
			}
		})
		reportCreates(b)
	})
	b.Run("loopback-parallel", func(b *testing.B) {
		ts := httptest.NewServer(New(Options{}))
		defer ts.Close()
		tr := ts.Client().Transport.(*http.Transport)
		tr.MaxIdleConnsPerHost = 256
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				req, _ := http.NewRequest(http.MethodPost, ts.URL+"/v1/check/create", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer sk_test_bench")
				req.Header.Set("Content-Type", typeJSON)
				res, err := ts.Client().Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					b.Errorf("status %d", res.StatusCode)
					return
				}
			}
		})
		reportCreates(b)
	})
}

// BenchmarkListPage pages through 100,000 checks, 100 at a time, sorted by
// date ascending: the reconciler's access pattern.
func BenchmarkListPage(b *testing.B) {
	srv := New(Options{})
	body, _ := json.Marshal(validCheck())
	const total = 100_000
	for range total {
		w := &discardWriter{}
		srv.ServeHTTP(w, newRequest(http.MethodPost, "/v1/check/create", "sk_test_bench", typeJSON, body))
	}
	b.ResetTimer()
	page := 0
	for b.Loop() {
		page = page%(total/100) + 1
		w := &discardWriter{}
		srv.ServeHTTP(w, newRequest(http.MethodGet, "/v1/check/list?limit=100&sort=date&direction=ASC&page="+strconv.Itoa(page), "sk_test_bench", "", nil))
		if w.status != http.StatusOK {
			b.Fatalf("status %d", w.status)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
}
