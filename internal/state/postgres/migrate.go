package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// The SQL files are versions 1 to 3 and 5 on; version 4 is the Go
// migration of the typed tables (tables.go).
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLockID is the session advisory lock held while migrations run,
// so instances starting together apply each version once. It differs from
// goose's default, so another goose-managed schema in the same database
// does not wait on batchd's.
const migrationLockID int64 = 0x62617463_68640001 // "batchd" 0001

// migrate brings the schema up to date, or to version to when it is not
// zero (tests): the embedded, versioned SQL files and the Go migration
// of the typed tables (tables.go, filled through proj), applied by goose
// under a session advisory lock, recorded in batchd_schema_version.
func migrate(ctx context.Context, pool *pgxpool.Pool, proj *projector, to int64) error {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return err
	}
	// Retry the lock every second for five minutes: a peer's migration is
	// short, and goose's default interval (5 s) would slow a joint start.
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(migrationLockID), lock.WithLockTimeout(1, 300))
	if err != nil {
		return err
	}
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, sub,
		goose.WithSessionLocker(locker),
		goose.WithTableName("batchd_schema_version"),
		goose.WithDisableGlobalRegistry(true),
		goose.WithGoMigrations(tablesMigration(proj)))
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	up := p.Up
	if to > 0 {
		up = func(ctx context.Context) ([]*goose.MigrationResult, error) { return p.UpTo(ctx, to) }
	}
	if _, err := up(ctx); err != nil {
		return fmt.Errorf("migrate schema: %w", err)
	}
	return nil
}
