package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// groupDigits formats n with commas between groups of three digits.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// plural formats n with the singular or plural noun.
func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return groupDigits(n) + " " + many
}

// bytesText formats a size in decimal units, like the MB/s of the logs.
func bytesText(n int64) string {
	v := float64(n)
	for _, u := range []string{"B", "kB", "MB", "GB", "TB"} {
		if math.Abs(v) < 1000 || u == "TB" {
			if u == "B" {
				return fmt.Sprintf("%d B", n)
			}
			return fmt.Sprintf("%.1f %s", v, u)
		}
		v /= 1000
	}
	return ""
}

// rate formats bytes per second in MB/s.
func rate(n int64, seconds float64) string {
	if !(seconds > 0) {
		return "– MB/s"
	}
	return fmt.Sprintf("%.1f MB/s", float64(n)/seconds/1e6)
}

// secondsText formats a duration in seconds with three significant
// decimals below ten seconds.
func secondsText(s float64) string {
	switch {
	case s < 10:
		return strconv.FormatFloat(s, 'f', 3, 64)
	case s < 1000:
		return strconv.FormatFloat(s, 'f', 1, 64)
	}
	return strconv.FormatFloat(s, 'f', 0, 64)
}

// floatText formats a parameter with as few digits as it needs.
func floatText(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// roundedText formats a computed value, such as a bin edge, rounded to
// four decimals, with as few digits as it then needs: 0.15, not the
// 0.15000000000000002 of 3 × 0.05.
func roundedText(v float64) string {
	return strconv.FormatFloat(math.Round(v*1e4)/1e4, 'f', -1, 64)
}

// percent formats n/of as a percentage.
func percent(n, of int64) string {
	if of == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(of))
}

// share formats v/total as a percentage.
func share(v, total float64) string {
	if !(total > 0) {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", 100*v/total)
}

func sum(v []int64) int64 {
	var s int64
	for _, x := range v {
		s += x
	}
	return s
}

// timeText formats a time in UTC, or a dash for the zero time.
func timeText(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}
