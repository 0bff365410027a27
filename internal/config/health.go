package config

import "time"

// DefaultFailingAfter is health.failing_after's default.
const DefaultFailingAfter = 2 * time.Minute

// MinFailingAfter is the shortest health.failing_after accepted: shorter,
// and one slow retry would turn /healthz red.
const MinFailingAfter = time.Second

// HealthConfig is the health section: when /healthz turns red during a run.
type HealthConfig struct {
	// FailingAfter is how long every call to the API has to fail, with no
	// success in between, before /healthz turns red with the cause while
	// the run goes on. A submit run stops trying (its circuit breaker)
	// after twice as long: the rows it has not sent stay pending for the
	// next run.
	FailingAfter Duration `yaml:"failing_after"`
}

func (c *Config) validateHealth(f *findings) {
	if d := c.Health.FailingAfter.Std(); d < MinFailingAfter {
		f.add(0, "health.failing_after", "health.failing_after: want at least %s (how long every API call must fail before /healthz turns red), got %s",
			MinFailingAfter, c.Health.FailingAfter)
	}
}
