package webhook

import (
	"net/http"
	"time"
)

// NewServer returns an http.Server for h with every timeout set, so that a
// slow or idle client holds a connection for a bounded time: headers in
// 5s, the whole request in 20s (over the Handler's 10s body deadline, so
// that the Handler's 408 is what the client sees), the answer in 30s (the
// Store's Record included). MaxHeaderBytes is 16 KiB: a delivery's
// headers are small.
func NewServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       20 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
}
