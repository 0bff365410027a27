package tokenize

import (
	"strings"

	"github.com/batchd/batchd/internal/payment"
)

// Names are the first and last names a tokenization asks for (spec
// §2.3, both required): the row's first_name and last_name cells when
// it gives them, else split from its name, companies alike, by one rule
// (README "Tokenized accounts"): the last word is the last name and the
// words before it the first name, so that "first last" gives back the
// name; a name of one word is both.
func Names(p *payment.Payment) (first, last string) {
	if p.FirstName != "" && p.LastName != "" {
		return p.FirstName, p.LastName
	}
	words := strings.Fields(p.Name)
	switch len(words) {
	case 0:
		return "", ""
	case 1:
		return words[0], words[0]
	}
	n := len(words) - 1
	return strings.Join(words[:n], " "), words[n]
}
