// Package configfile reads a command's config file, YAML or TOML, as a
// flat list of keys, each with its values as the file wrote them and the
// line that holds it. It does not know the flags: a caller checks the keys
// and gives the values to its flag set.
//
// A YAML scalar is read from its source text, never from a value YAML
// typed on its own: `out: 012` is the text "012" (not 10), `job: no` is
// "no" (not false), `text-field: 0x1F` is "0x1F". A TOML value's type is
// its meaning, so a TOML number, boolean or date is reported with its
// type, and its text is its canonical form (0x1F is "31"): a caller that
// wants the text as written takes TOML strings only.
package configfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	toml "github.com/pelletier/go-toml"
	"go.yaml.in/yaml/v3"
)

// MaxBytes is the largest config file read: a config file sets a few
// dozen flags; a larger file is a mistake (a data file named by --config)
// that would otherwise be read and parsed whole before anything runs.
const MaxBytes = 1 << 20

// Value is one value of a key.
type Value struct {
	// Text is the value: a YAML scalar's text or a TOML string's
	// contents, as written; for a TOML value of another Type, its
	// canonical form (a decimal integer, a float, true or false, a date).
	Text string
	// Type is "" for text as written; "integer", "float", "boolean" or
	// "datetime" for a TOML value of that type.
	Type string
	// Line is the value's line in the file (a TOML array's element: the
	// line of its key).
	Line int
}

// Entry is a key of the file and its values.
type Entry struct {
	Key string
	// Line is the key's line in the file.
	Line int
	// List says the file gave a list (a YAML sequence, a TOML array),
	// of len(Values) values; otherwise Values holds one.
	List   bool
	Values []Value
}

// Error is a problem with a key or a value of the file, at a line.
type Error struct {
	Line int
	Key  string
	Msg  string
}

func (e *Error) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return fmt.Sprintf("line %d: key %q: %s", e.Line, e.Key, e.Msg)
}

// Read reads the config file at path, YAML (.yaml, .yml) or TOML (.toml)
// by its extension: its entries in the order of their lines. A file of
// more than MaxBytes is an error, found after reading MaxBytes+1 of it.
func Read(path string) ([]Entry, error) {
	parse, err := parser(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxBytes {
		return nil, fmt.Errorf("larger than %d bytes (1 MiB), the most a config file may hold", MaxBytes)
	}
	return parse(b)
}

// parser returns the parser of a config file, by its extension.
func parser(path string) (func([]byte) ([]Entry, error), error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		return ParseYAML, nil
	case ".toml":
		return ParseTOML, nil
	}
	return nil, errors.New("the file's extension says its format: .yaml, .yml or .toml")
}

// ParseYAML parses a YAML config file: one document, a map of keys to
// scalars or lists of scalars.
func ParseYAML(b []byte) ([]Entry, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil // empty, or only comments
		}
		return nil, fmt.Errorf("reading YAML: %w", err)
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, fmt.Errorf("reading YAML: %w", err)
		}
		return nil, &Error{Line: next.Line, Msg: "a second YAML document (after ---): a config file holds one"}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil, nil
		}
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, &Error{Line: root.Line, Msg: "the file is not a map of keys to values (key: value, one a line)"}
	}
	var entries []Entry
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], resolve(root.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			return nil, &Error{Line: k.Line, Msg: "a key must be a name, not a list or map"}
		}
		if first, dup := seen[k.Value]; dup {
			return nil, &Error{Line: k.Line, Key: k.Value, Msg: fmt.Sprintf("given twice (first at line %d)", first)}
		}
		seen[k.Value] = k.Line
		e := Entry{Key: k.Value, Line: k.Line}
		switch v.Kind {
		case yaml.ScalarNode:
			val, err := yamlScalar(k.Value, v)
			if err != nil {
				return nil, err
			}
			e.Values = []Value{val}
		case yaml.SequenceNode:
			e.List = true
			for _, el := range v.Content {
				el = resolve(el)
				if el.Kind != yaml.ScalarNode {
					return nil, &Error{Line: el.Line, Key: k.Value, Msg: "a list's element must be a single value, not a list or map"}
				}
				val, err := yamlScalar(k.Value, el)
				if err != nil {
					return nil, err
				}
				e.Values = append(e.Values, val)
			}
		default:
			return nil, &Error{Line: v.Line, Key: k.Value, Msg: "a map is not a flag's value (flags are top-level keys)"}
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// resolve returns the node an alias names, n itself if n is no alias.
func resolve(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

// yamlScalar is a scalar's value: its text as written (a quoted scalar's
// contents). A null (`key:`, `~`, `null`) is no value and an error.
func yamlScalar(key string, n *yaml.Node) (Value, error) {
	if n.Style == 0 && n.Tag == "!!null" {
		return Value{}, &Error{Line: n.Line, Key: key, Msg: fmt.Sprintf("no value (%q is YAML's null): write \"\" for empty text, or leave the key out for the default", n.Value)}
	}
	return Value{Text: n.Value, Line: n.Line}, nil
}

// ParseTOML parses a TOML config file: top-level keys whose values are
// strings, numbers, booleans, dates or arrays of them.
func ParseTOML(b []byte) ([]Entry, error) {
	tree, err := toml.LoadBytes(b)
	if err != nil {
		return nil, fmt.Errorf("reading TOML: %w", err)
	}
	var entries []Entry
	for _, key := range tree.Keys() {
		path := []string{key}
		line := tree.GetPositionPath(path).Line
		e := Entry{Key: key, Line: line}
		switch v := tree.GetPath(path).(type) {
		case *toml.Tree, []*toml.Tree:
			return nil, &Error{Line: line, Key: key, Msg: "a table is not a flag's value (flags are top-level keys)"}
		case []any:
			e.List = true
			for _, el := range v {
				val, err := tomlValue(key, line, el)
				if err != nil {
					return nil, err
				}
				e.Values = append(e.Values, val)
			}
		default:
			val, err := tomlValue(key, line, v)
			if err != nil {
				return nil, err
			}
			e.Values = []Value{val}
		}
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b Entry) int { return a.Line - b.Line })
	return entries, nil
}

// tomlValue is a TOML scalar's value, with its type.
func tomlValue(key string, line int, v any) (Value, error) {
	val := Value{Line: line}
	switch v := v.(type) {
	case string:
		val.Text = v
	case int64:
		val.Text, val.Type = strconv.FormatInt(v, 10), "integer"
	case uint64:
		val.Text, val.Type = strconv.FormatUint(v, 10), "integer"
	case float64:
		val.Text, val.Type = strconv.FormatFloat(v, 'g', -1, 64), "float"
	case bool:
		val.Text, val.Type = strconv.FormatBool(v), "boolean"
	case time.Time, toml.LocalDate, toml.LocalDateTime, toml.LocalTime:
		val.Text, val.Type = fmt.Sprint(v), "datetime"
	default:
		return Value{}, &Error{Line: line, Key: key, Msg: "a list's element must be a single value, not a list or table"}
	}
	return val, nil
}
