package storage

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/neardup/neardup/internal/redact"
)

// ErrScheme is returned for a location that looks like a URL (scheme://)
// whose scheme is not a storage neardup knows: it is a usage error, never
// a local folder named "foo:".
var ErrScheme = errors.New("unknown storage scheme")

// objectScheme tells whether scheme is that of an object store neardup
// reaches: S3 (and S3-compatible stores) in every build, Google Cloud
// Storage and Azure Blob Storage in builds with the tags gcs and azure.
func objectScheme(scheme string) bool {
	return scheme == "s3" || scheme == "gs" || scheme == "azblob"
}

// Location is where a job's files or an input lives: a local path, or an
// object-store prefix.
type Location struct {
	// Path is the local path (absolute or relative as given) when the
	// location is local.
	Path string
	// Scheme, Bucket, Key and Query describe an object-store location:
	// s3://Bucket/Key?Query. Key has no leading slash; Query holds the
	// bucket's options (endpoint, region ...).
	Scheme, Bucket, Key, Query string
}

// IsURL reports whether s has the form scheme://...
func IsURL(s string) bool {
	i := strings.Index(s, "://")
	if i <= 0 {
		return false
	}
	for _, c := range s[:i] {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// ParseLocation parses a local path, a file:// URL or an s3://, gs:// or
// azblob:// URL. Any other scheme:// gives an error wrapping ErrScheme; an
// s3:// URL's options are checked (see s3Options), a gs:// or azblob://
// one's when its bucket is opened.
//
// A URL's user part (user:password@, a token@), here or in a URL among
// its options (?endpoint=http://key:secret@host), is refused: the stores'
// credentials come from their SDKs' usual places, never from a location,
// which neardup prints. Errors show the location with such secrets hidden.
func ParseLocation(s string) (Location, error) {
	if !IsURL(s) {
		return Location{Path: s}, nil
	}
	shown := redact.URL(s)
	u, err := redact.ParseURL(s)
	if err != nil {
		return Location{}, fmt.Errorf("location: %w", err)
	}
	if hasUser(u) {
		return Location{}, fmt.Errorf("location %s: %w", shown, ErrCredentials)
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme == "file":
		if u.Host != "" && u.Host != "localhost" {
			return Location{}, fmt.Errorf("location %s: a file:// URL names a path on this machine (file:///path)", shown)
		}
		return Location{Path: u.Path}, nil
	case objectScheme(scheme):
		if u.Host == "" {
			return Location{}, fmt.Errorf("location %s: no bucket", shown)
		}
		if tag := leftOut(scheme); tag != "" {
			return Location{}, fmt.Errorf("location %s: %w", shown, &LeftOutError{Scheme: scheme, Tag: tag})
		}
		if scheme == "s3" {
			if _, err := parseS3Options(u.RawQuery); err != nil {
				return Location{}, fmt.Errorf("location %s: %w", shown, err)
			}
		}
		return Location{Scheme: scheme, Bucket: u.Host, Key: strings.Trim(path.Clean("/"+u.Path), "/"), Query: u.RawQuery}, nil
	}
	return Location{}, fmt.Errorf("location %s: %w %q (known: s3, gs, azblob, file, or a local path)", shown, ErrScheme, u.Scheme)
}

// ErrCredentials is the error of a location URL that carries a user or
// password.
var ErrCredentials = errors.New("credentials do not go in a location (a user or password, there or in an option's URL): " +
	"give them to the store's SDK (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, GOOGLE_APPLICATION_CREDENTIALS, AZURE_STORAGE_KEY..., or its credentials file)")

// hasUser tells whether u, or a URL among its query's values, has a user
// part. A query or fragment that holds an "@" where no URL can be read
// counts as one.
func hasUser(u *url.URL) bool {
	if u.User != nil || strings.Contains(u.Fragment, "@") {
		return true
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil && strings.Contains(u.RawQuery, "@") {
		return true
	}
	for _, vs := range q {
		for _, v := range vs {
			if o, err := url.Parse(v); err == nil && o.User != nil || err != nil && strings.Contains(v, "@") {
				return true
			}
		}
	}
	return false
}

// Local reports whether l is a local path.
func (l Location) Local() bool { return l.Scheme == "" }

// String is the location as a path or URL; an object-store URL keeps its
// query, which names the bucket's options.
func (l Location) String() string {
	if l.Local() {
		return l.Path
	}
	s := l.Scheme + "://" + l.Bucket
	if l.Key != "" {
		s += "/" + l.Key
	}
	if l.Query != "" {
		s += "?" + l.Query
	}
	return s
}

// Join returns the location of name (slash-separated) under l.
func (l Location) Join(name string) Location {
	if l.Local() {
		l.Path = strings.TrimSuffix(l.Path, "/") + "/" + name
		return l
	}
	l.Key = strings.Trim(path.Join(l.Key, name), "/")
	return l
}

// LeftOutError is the error for the location of an object store whose
// driver this build does not have: its build tag (gcs, azure) adds it.
type LeftOutError struct {
	// Scheme is the location's scheme, Tag the build tag that adds its
	// driver.
	Scheme, Tag string
}

func (e *LeftOutError) Error() string {
	return fmt.Sprintf("%s:// support was left out of this build (build with -tags %s to add it)", e.Scheme, e.Tag)
}

// leftOut returns the build tag that adds the driver of scheme ("gcs",
// "azure"), when this build does not have it, or "".
func leftOut(scheme string) string {
	switch {
	case scheme == "gs" && !withGCS:
		return "gcs"
	case scheme == "azblob" && !withAzure:
		return "azure"
	}
	return ""
}

// Holds tells whether the object-store location l is root or lies under
// it: the same store, bucket and options, and a key under root's by whole
// elements (keys are cleaned when parsed, so ".." cannot climb out).
func (root Location) Holds(l Location) bool {
	if root.Scheme != l.Scheme || root.Bucket != l.Bucket || root.Query != l.Query {
		return false
	}
	return root.Key == "" || l.Key == root.Key || strings.HasPrefix(l.Key, root.Key+"/")
}
