package daemon

import (
	"context"
	"log/slog"
)

// cronLogger adapts slog to robfig/cron's Logger. cron logs every wake-up
// and schedule computation; those go to debug level. batchd logs runs,
// skips and panics itself, with the job name cron does not know.
type cronLogger struct{ log *slog.Logger }

func (l cronLogger) Info(msg string, keysAndValues ...any) {
	l.log.Log(context.Background(), slog.LevelDebug, "cron: "+msg, keysAndValues...)
}

func (l cronLogger) Error(err error, msg string, keysAndValues ...any) {
	l.log.Log(context.Background(), slog.LevelError, "cron: "+msg, append(keysAndValues, "error", err)...)
}
