package doctor

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path"
	"time"

	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/remote"
)

// folder is one SFTP folder batchd uses and what it does there.
type folder struct {
	key      string // the config key, "sftp.outbox"
	dir      string
	writable bool // batchd writes there (else it only reads)
}

func folders(c *config.Config) []folder {
	s := c.SFTP
	fs := []folder{{"sftp.inbox", s.Inbox, false}, {"sftp.archive", s.Archive, true},
		{"sftp.failed", s.Failed, true}, {"sftp.outbox", s.Outbox, true}}
	if c.Backup.Upload && s.Backups != "" {
		fs = append(fs, folder{"sftp.backups", s.Backups, true})
	}
	return fs
}

// SFTP connects to the configured server, its host key verified against
// sftp.known_hosts as every job does, and checks each folder: the inbox
// by a listing, the folders batchd writes to (archive, failed, outbox,
// backups when uploaded) by a listing and a tiny probe file uploaded the
// way batchd uploads (sftp.temp_upload) and removed.
func SFTP(ctx context.Context, cfg *config.Config, timeout time.Duration) []Result {
	s := cfg.SFTP
	if s.Address == "" {
		return []Result{ok("sftp", "not configured (sftp.address is empty)")}
	}
	if _, err := os.Stat(s.KnownHosts); err != nil {
		host, port := hostPort(s.Address)
		return []Result{fail("sftp.known_hosts", s.KnownHosts+": "+describe(err),
			fmt.Sprintf("pin the server's host key: ssh-keyscan -p %s %s > %s, after comparing its fingerprint with the server operator's", port, host, s.KnownHosts))}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := remote.Dial(ctx, remote.Options{
		Address: s.Address, User: s.User, IdentityFile: s.IdentityFile, KnownHosts: s.KnownHosts,
		DialTimeout: s.DialTimeout.Std(), Keepalive: s.Keepalive.Std(), TempUpload: s.TempUpload,
	})
	if err != nil {
		return []Result{dialFailure(s, err)}
	}
	defer c.Close()
	res := []Result{ok("sftp", fmt.Sprintf("%s reached as %s, host key verified against %s", s.Address, s.User, s.KnownHosts))}
	for _, f := range folders(cfg) {
		res = append(res, checkFolder(ctx, c, f))
	}
	return res
}

func dialFailure(s config.SFTPConfig, err error) Result {
	var hk *remote.HostKeyError
	if errors.As(err, &hk) {
		host, port := hostPort(s.Address)
		fix := fmt.Sprintf("ask the server's operator for its %s fingerprint; if it is %s, replace the host's line in %s with the output of: ssh-keyscan -p %s -t %s %s",
			hk.KeyType, hk.Fingerprint, s.KnownHosts, port, keyscanType(hk.KeyType), host)
		if hk.Unknown() {
			fix = fmt.Sprintf("ask the server's operator for its %s fingerprint; if it is %s, add the output of ssh-keyscan -p %s -t %s %s to %s",
				hk.KeyType, hk.Fingerprint, port, keyscanType(hk.KeyType), host, s.KnownHosts)
		}
		return fail("sftp.known_hosts", hk.Error(), fix)
	}
	return fail("sftp", err.Error(),
		"check sftp.address and the network path to it (firewall), sftp.user, and that the server accepts the public key of sftp.identity_file")
}

// hostPort splits an sftp.address; the port defaults to 22, as the
// connection's does.
func hostPort(addr string) (host, port string) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, "22"
	}
	return host, port
}

// describe is a local file error without its path (the caller names it).
func describe(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "the file does not exist"
	case errors.Is(err, fs.ErrPermission):
		return "this user cannot read it"
	}
	return err.Error()
}

// keyscanType is ssh-keyscan's -t word for an SSH key type.
func keyscanType(t string) string {
	switch t {
	case "ssh-ed25519":
		return "ed25519"
	case "ssh-rsa", "rsa-sha2-256", "rsa-sha2-512":
		return "rsa"
	case "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521":
		return "ecdsa"
	}
	return t
}

func checkFolder(ctx context.Context, c *remote.Client, f folder) Result {
	if f.dir == "" {
		return fail(f.key, "not set", "set "+f.key+" to the folder's absolute path on the server")
	}
	list, err := c.List(ctx, f.dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fail(f.key, f.dir+" does not exist on the server", "create "+f.dir+" on the server, or correct "+f.key)
	case errors.Is(err, fs.ErrPermission):
		return fail(f.key, f.dir+" cannot be listed: permission denied", "let the SFTP user read "+f.dir)
	case err != nil:
		return fail(f.key, err.Error(), "check "+f.key+" and the folder's permissions on the server")
	}
	if !f.writable {
		return ok(f.key, fmt.Sprintf("%s readable (%d entries)", f.dir, len(list)))
	}
	if err := probeWrite(ctx, c, f.dir); err != nil {
		return fail(f.key, f.dir+" is not writable: "+err.Error(),
			"let the SFTP user create, rename and delete files in "+f.dir)
	}
	return ok(f.key, f.dir+" readable and writable")
}

// probeWrite uploads a tiny file to dir and removes it (and the marker
// an upload leaves under sftp.temp_upload: none).
func probeWrite(ctx context.Context, c *remote.Client, dir string) error {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	name := "batchd-doctor-" + hex.EncodeToString(b[:]) + ".probe"
	if err := c.Upload(ctx, dir, name, bytes.NewReader([]byte("batchd doctor write test\n"))); err != nil {
		return err
	}
	p := path.Join(dir, name)
	if err := c.Remove(ctx, p+".done"); err != nil {
		return err
	}
	return c.Remove(ctx, p)
}
