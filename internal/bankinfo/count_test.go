package bankinfo_test

import "net/http"

// countRequests counts the bank-directory requests h serves.
func countRequests(h http.Handler, n *int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/check/bankinfo" {
			*n++
		}
		h.ServeHTTP(w, r)
	})
}
