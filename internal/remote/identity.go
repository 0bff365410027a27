package remote

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/crypto/ssh"
)

// loadIdentity reads the private key. Errors name the file but never
// include its contents, and the bytes read are cleared once parsed.
func loadIdentity(path string) (ssh.Signer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read identity file: %w", err)
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
