package manifest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/storage"
)

// Encode returns m as manifest.json holds it: indented JSON ending in a
// newline.
func Encode(m *Manifest) ([]byte, error) {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", job.ManifestFile, err)
	}
	return append(data, '\n'), nil
}

// Write writes m to st as job.ManifestFile.
func Write(ctx context.Context, st storage.Creator, m *Manifest) error {
	data, err := Encode(m)
	if err != nil {
		return err
	}
	return storage.WriteFile(ctx, st, job.ManifestFile, data)
}

// Decode parses manifest.json, as written by this version or an earlier
// one: a field the JSON lacks keeps its zero value (params without a
// tokenizer read as words-only, see job.Params), an unknown one is
// ignored, except that CountList still lists unknown counts; the derived
// state that earlier versions wrote in params (params.first_chunk and
// params.against) is read into Derived. It fails on data that is not a
// JSON object of the manifest's shape, such as a count that is not an
// integer.
func Decode(data []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", job.ManifestFile, err)
	}
	if err := m.Derived.ReadParams(data); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", job.ManifestFile, err)
	}
	var raw struct {
		Counts json.RawMessage `json:"counts"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", job.ManifestFile, err)
	}
	written, err := parseCounts(raw.Counts)
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", job.ManifestFile, err)
	}
	m.written = written
	return &m, nil
}

// Read reads and decodes job.ManifestFile from st.
func Read(ctx context.Context, st storage.Opener) (*Manifest, error) {
	data, err := storage.ReadFile(ctx, st, job.ManifestFile)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", job.ManifestFile, err)
	}
	return Decode(data)
}

// Count is one count of a manifest: its JSON name in "counts" and its
// number.
type Count struct {
	Name  string
	Value json.Number
}

// CountList returns the manifest's counts by name. For a manifest from
// Decode or Read they are the ones its "counts" object held, in its order:
// without those an earlier version did not write, and with those of a
// later version that Counts has no field for (their numbers as written).
// For a manifest made in memory they are every field of Counts, in the
// order Encode writes them. A count Counts has a field for always has
// that field's value.
func (m *Manifest) CountList() []Count {
	typed := countsOf(m.Counts)
	if m.written == nil {
		return typed
	}
	value := make(map[string]json.Number, len(typed))
	for _, c := range typed {
		value[c.Name] = c.Value
	}
	out := make([]Count, len(m.written))
	for i, c := range m.written {
		if v, ok := value[c.Name]; ok {
			c.Value = v
		}
		out[i] = c
	}
	return out
}

// countsOf lists c's fields, all integers, by their JSON names in the
// order Encode writes them.
func countsOf(c Counts) []Count {
	v := reflect.ValueOf(c)
	out := make([]Count, v.NumField())
	for i := range out {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		out[i] = Count{Name: name, Value: json.Number(strconv.FormatInt(v.Field(i).Int(), 10))}
	}
	return out
}

// parseCounts reads a JSON object of numbers, keeping its order: an empty
// list for null or nothing.
func parseCounts(data []byte) ([]Count, error) {
	list := []Count{}
	if len(data) == 0 {
		return list, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("counts: %w", err)
	} else if t == nil {
		return list, nil
	} else if t != json.Delim('{') {
		return nil, fmt.Errorf("counts: %v is not an object", t)
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("counts: %w", err)
		}
		name, _ := t.(string)
		var v json.Number
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("counts: %s: %w", name, err)
		}
		list = append(list, Count{Name: name, Value: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("counts: %w", err)
	}
	return list, nil
}
