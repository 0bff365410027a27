// Package sendgate carries, in a request's context, a last check that the
// HTTP plumbing (internal/apiwire) makes after the rate limiter let the
// request go and immediately before it is written. It is a package of its
// own so that the jobs, which never depend on HTTP, and apiwire, which
// knows no job, share only this.
package sendgate

import "context"

type key struct{}

// With returns ctx carrying gate. A request sent under it is not written
// when gate returns an error: the client's error wraps it and says the
// request was not sent.
func With(ctx context.Context, gate func() error) context.Context {
	return context.WithValue(ctx, key{}, gate)
}

// Check runs ctx's gate, if any.
func Check(ctx context.Context) error {
	if gate, ok := ctx.Value(key{}).(func() error); ok && gate != nil {
		return gate()
	}
	return nil
}
