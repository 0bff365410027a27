package tokenize

import "sync"

// keyLocks are mutexes by key, made when first wanted and forgotten when
// no one holds or waits for them, so that rows of one payee and account
// tokenize once while other payees' go on.
type keyLocks struct {
	mu   sync.Mutex
	held map[string]*keyLock
}

type keyLock struct {
	sync.Mutex
	users int // holding or waiting
}

// lock locks key and returns its unlock.
func (l *keyLocks) lock(key string) (unlock func()) {
	l.mu.Lock()
	if l.held == nil {
		l.held = map[string]*keyLock{}
	}
	k := l.held[key]
	if k == nil {
		k = &keyLock{}
		l.held[key] = k
	}
	k.users++
	l.mu.Unlock()
	k.Lock()
	return func() {
		k.Unlock()
		l.mu.Lock()
		if k.users--; k.users == 0 {
			delete(l.held, key)
		}
		l.mu.Unlock()
	}
}
