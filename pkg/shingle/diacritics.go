package shingle

// latinA maps U+00C0..U+024F to the ASCII letter of its canonical
// decomposition, '.' where there is none (generated from the Unicode 14
// NFD data: the first rune of the decomposition when it is an ASCII letter
// and all the others are non-spacing marks).
const latinA = "AAAAAA.CEEEEIIII.NOOOOO..UUUUY..aaaaaa.ceeeeiiii.nooooo..uuuuy.y" +
	"AaAaAaCcCcCcCcDd..EeEeEeEeEeGgGgGgGgHh..IiIiIiIiI...JjKk.LlLlLl." +
	"...NnNnNn...OoOoOo..RrRrRrSsSsSsSsTtTt..UuUuUuUuUuUuWwYyYZzZzZz." +
	"................................Oo.............Uu..............." +
	".............AaIiOoUuUuUuUuUu.AaAa....GgKkOoOo..j...Gg..NnAa...." +
	"AaAaEeEeIiIiOoOoRrRrUuUuSsTt..Hh......AaEeOoOoOoOoYy............" +
	"................"

// latinB is the same table for U+1E00..U+1EFF (Latin Extended Additional).
const latinB = "AaBbBbBbCcDdDdDdDdDdEeEeEeEeEeFfGgHhHhHhHhHhIiIiKkKkKkLlLlLlLlMm" +
	"MmMmNnNnNnNnOoOoOoOoPpPpRrRrRrRrSsSsSsSsSsTtTtTtTtUuUuUuUuUuVvVv" +
	"WwWwWwWwWwXxXxYyZzZzZzhtwy......AaAaAaAaAaAaAaAaAaAaAaAaEeEeEeEe" +
	"EeEeEeEeIiIiOoOoOoOoOoOoOoOoOoOoOoOoUuUuUuUuUuUuUuYyYyYyYy......"

// stripLatin returns the base letter of a precomposed Latin letter, or r.
func stripLatin(r rune) rune {
	var c byte
	switch {
	case r >= 0xC0 && r < 0xC0+rune(len(latinA)):
		c = latinA[r-0xC0]
	case r >= 0x1E00 && r < 0x1E00+rune(len(latinB)):
		c = latinB[r-0x1E00]
	default:
		return r
	}
	if c == '.' {
		return r
	}
	return rune(c)
}

// isCombiningMark reports whether r is in one of the combining diacritical
// mark blocks.
func isCombiningMark(r rune) bool {
	switch {
	case r < 0x300:
		return false
	case r <= 0x36F:
		return true
	case r >= 0x1AB0 && r <= 0x1AFF, r >= 0x1DC0 && r <= 0x1DFF,
		r >= 0x20D0 && r <= 0x20FF, r >= 0xFE20 && r <= 0xFE2F:
		return true
	}
	return false
}
