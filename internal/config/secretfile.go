package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// EnvCredentialsDir is the variable systemd sets to the directory of the
// service's credentials (LoadCredential=).
const EnvCredentialsDir = "CREDENTIALS_DIRECTORY"

// SecretModeError is a secret file that others than its owner may read or
// write. batchd refuses it, as OpenSSH refuses such a private key: anyone
// who can read the file can move money or log in as batchd. Its message
// names the file, the mode found and the fix, never the contents.
type SecretModeError struct {
	Path string      // the file, as configured
	Mode fs.FileMode // its permission bits
}

func (e *SecretModeError) Error() string {
	who := "group or others"
	switch {
	case e.Mode&0o070 == 0:
		who = "others"
	case e.Mode&0o007 == 0:
		who = "its group"
	}
	return fmt.Sprintf("the file is readable or writable by %s (mode %04o); a secret file must be private to its owner, "+
		"as OpenSSH requires of private keys; fix: chmod 600 %s", who, e.Mode.Perm(), shellQuote(e.Path))
}

// ReadSecretFile reads the secret file at path: at most limit bytes (more
// is an error), refused unless it is a regular file that neither its
// group nor others may read or write (see SecretModeError). It is the one
// check every secret file goes through: api.key_file,
// webhook.secret_file, admin.token_file and sftp.identity_file.
//
// A file under $CREDENTIALS_DIRECTORY (looked up in env) may be readable
// by its group: systemd hands credentials to a service's dynamic user
// through an ACL, which shows as mode 0440, in a directory only the
// service can enter. Writable or world-readable is refused there too.
//
// Errors name the problem, never the contents; the caller names the key
// and the path.
func ReadSecretFile(path string, limit int64, env Env) ([]byte, error) {
	fh, err := openSecretFile(path, env)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		clear(b)
		return nil, describeFileErr("cannot read the file", err)
	}
	if int64(len(b)) > limit {
		clear(b)
		return nil, fmt.Errorf("the file is larger than %d bytes; it should hold only the secret", limit)
	}
	return b, nil
}

// CheckSecretFile applies ReadSecretFile's checks to path without
// reading it, for a secret another package reads later (the SSH identity,
// read when the SFTP connection is made), so that its mode is refused at
// start.
func CheckSecretFile(path string, env Env) error {
	fh, err := openSecretFile(path, env)
	if err != nil {
		return err
	}
	return fh.Close()
}

// openSecretFile opens path and refuses it unless it is a regular file
// private to its owner (see ReadSecretFile). The mode is that of the
// opened file, so that what is checked is what is read.
func openSecretFile(path string, env Env) (*os.File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, describeFileErr("cannot open the file", err)
	}
	fi, err := fh.Stat()
	switch {
	case err != nil:
		fh.Close()
		return nil, describeFileErr("cannot stat the file", err)
	case !fi.Mode().IsRegular():
		fh.Close()
		return nil, fmt.Errorf("not a regular file (%s); name the file that holds the secret", fi.Mode().Type())
	case fi.Mode().Perm()&forbiddenBits(path, env) != 0:
		fh.Close()
		return nil, &SecretModeError{Path: path, Mode: fi.Mode().Perm()}
	}
	return fh, nil
}

// forbiddenBits are the permission bits a secret file at path must not
// have: any of group's or others', except group read under systemd's
// credentials directory.
func forbiddenBits(path string, env Env) fs.FileMode {
	if dir, ok := env.lookup(EnvCredentialsDir); ok && dir != "" && within(dir, path) {
		return 0o037
	}
	return 0o077
}

// within reports whether path lies inside dir (lexically, both made
// absolute and clean).
func within(dir, path string) bool {
	d, err1 := filepath.Abs(dir)
	p, err2 := filepath.Abs(path)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(d, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// shellSafe is a path that can be pasted into a shell as it is.
var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellQuote quotes path for the chmod fix, so that it can be pasted.
func shellQuote(path string) string {
	if shellSafe.MatchString(path) {
		return path
	}
	return "'" + strings.ReplaceAll(path, "'", `'\''`) + "'"
}

// IsSecretModeError reports whether err is (or wraps) a SecretModeError.
func IsSecretModeError(err error) bool {
	var me *SecretModeError
	return errors.As(err, &me)
}

// checkIdentityMode refuses at load an sftp.identity_file that exists and
// is not private to its owner, so that batchd stops at start rather than
// at its first SFTP connection. A file that is missing or unreadable is
// left to the connection, which says so with the server's address.
func (c *Config) checkIdentityMode(env Env) *FieldError {
	p := c.SFTP.IdentityFile
	if p == "" || !filepath.IsAbs(p) {
		return nil
	}
	return c.checkSecretMode("sftp.identity_file", p, env)
}

// checkSecretMode is CheckSecretFile's finding on the file p named by
// key, if any; a file missing or unreadable here is left to its reader.
func (c *Config) checkSecretMode(key, p string, env Env) *FieldError {
	err := CheckSecretFile(p, env)
	if err == nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return nil
	}
	return fileFinding(key, p, err)
}
