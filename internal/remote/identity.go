package remote

import (
	"errors"
	"fmt"

	"golang.org/x/crypto/ssh"

	"github.com/batchd/batchd/internal/config"
)

// maxIdentityBytes bounds the read of the private key: an RSA-8192 key in
// PEM is under 7 KiB, so anything larger is the wrong file.
const maxIdentityBytes = 64 << 10

// loadIdentity reads the private key through config.ReadSecretFile, the
// check every secret file goes through: a key that group or others may
// read is refused, as OpenSSH refuses it. Errors name the file and the
// key (sftp.identity_file) but never include its contents, and the bytes
// read are cleared once parsed.
func loadIdentity(path string) (ssh.Signer, error) {
	b, err := config.ReadSecretFile(path, maxIdentityBytes, config.OSEnv)
	if err != nil {
		return nil, fmt.Errorf("sftp.identity_file %s: %w", path, err)
	}
	defer clear(b)
	signer, err := ssh.ParsePrivateKey(b)
	var pe *ssh.PassphraseMissingError
	switch {
	case errors.As(err, &pe):
		return nil, fmt.Errorf("identity file %s is protected by a passphrase, and batchd cannot ask for one; "+
			"give batchd an unencrypted key that only it can read (for example a systemd credential)", path)
	case err != nil:
		// x/crypto's parse errors describe the format, not the key bytes.
		return nil, fmt.Errorf("identity file %s is not a usable private key: %v", path, err)
	}
	return signer, nil
}
