// Package suggest finds the name a person most likely meant, for "did you
// mean …?" hints on unknown configuration keys and CSV columns.
package suggest

// Closest returns the candidate nearest to name by edit distance, if it is
// within maxDist; otherwise "". Ties go to the earlier candidate.
func Closest(name string, candidates []string, maxDist int) string {
	best, bestD := "", maxDist+1
	for _, c := range candidates {
		if d := Distance(name, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// Distance is the Levenshtein distance between a and b, counted in bytes
// (the names it compares are ASCII).
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
