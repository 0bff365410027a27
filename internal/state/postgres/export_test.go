package postgres

import "context"

// OpenBefore opens the database of dsn as a batchd from before the typed
// tables did: the schema up to migration 3, keys only.
func OpenBefore(ctx context.Context, dsn string, opts Options) (*Store, error) {
	s, err := openTo(ctx, dsn, opts, tablesVersion-1)
	if err != nil {
		return nil, err
	}
	s.proj = nil
	return s, nil
}
