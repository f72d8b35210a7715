package formats

import (
	"strconv"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// ValueKind is the kind of a record's value of Options.Field (Doc.Value).
type ValueKind uint8

// The kinds of Value.
const (
	// ValueNone: the record has no such field, or its value is null.
	ValueNone ValueKind = iota
	// ValueNumber: a JSON number; a Parquet integer or floating-point
	// column (Num).
	ValueNumber
	// ValueString: a JSON string; a Parquet string (byte array) column;
	// a WARC or WET record header (Str).
	ValueString
	// ValueTime: a Parquet TIMESTAMP or DATE column, or an INT96
	// timestamp (Time, in UTC).
	ValueTime
	// ValueOther: a value of another type (a JSON boolean, object or
	// array; a Parquet boolean, fixed-length or repeated column), which
	// Str describes.
	ValueOther
)

// Value is the value of Options.Field in one record, as its format
// types it.
type Value struct {
	Kind ValueKind
	Num  float64
	Str  string
	Time time.Time
}

// jsonValue is the Value of the raw (valid) JSON value raw: ValueNone
// for a member the line does not have (raw nil) or null.
func jsonValue(raw []byte) Value {
	switch {
	case len(raw) == 0 || raw[0] == 'n':
		return Value{}
	case raw[0] == '"':
		return Value{Kind: ValueString, Str: string(appendJSONString(nil, raw))}
	case raw[0] == '-' || isDigit(raw[0]):
		// Valid JSON syntax: ParseFloat fails only out of range, giving
		// the infinity of its sign, which still orders.
		f, _ := strconv.ParseFloat(string(raw), 64)
		return Value{Kind: ValueNumber, Num: f}
	}
	return Value{Kind: ValueOther, Str: jsonType(raw)}
}

// parquetValuer turns the values of one Parquet column into Values.
type parquetValuer func(v parquet.Value) Value

// newParquetValuer returns how the values of col become Values, or
// describes why they cannot (every value is then ValueOther).
func newParquetValuer(col parquet.LeafColumn) parquetValuer {
	typ := col.Node.Type()
	other := func(what string) parquetValuer {
		return func(v parquet.Value) Value {
			if v.IsNull() {
				return Value{}
			}
			return Value{Kind: ValueOther, Str: what}
		}
	}
	var unit time.Duration // of a timestamp; 24h for a date
	if lt := typ.LogicalType(); lt != nil {
		switch t := lt.Value.(type) {
		case *format.TimestampType:
			if t.Unit.Value != nil {
				unit = t.Unit.Value.Duration()
			}
		case *format.DateType:
			unit = 24 * time.Hour
		}
	}
	valuer := func(f func(v parquet.Value) Value) parquetValuer {
		return func(v parquet.Value) Value {
			if v.IsNull() {
				return Value{}
			}
			return f(v)
		}
	}
	at := func(n int64) Value {
		if unit >= time.Second {
			return Value{Kind: ValueTime, Time: time.Unix(n*int64(unit/time.Second), 0).UTC()}
		}
		return Value{Kind: ValueTime, Time: time.Unix(0, n*int64(unit)).UTC()}
	}
	switch kind := typ.Kind(); {
	case kind == parquet.Int32 && unit != 0:
		return valuer(func(v parquet.Value) Value { return at(int64(v.Int32())) })
	case kind == parquet.Int64 && unit != 0:
		return valuer(func(v parquet.Value) Value { return at(v.Int64()) })
	case kind == parquet.Int32:
		return valuer(func(v parquet.Value) Value { return Value{Kind: ValueNumber, Num: float64(v.Int32())} })
	case kind == parquet.Int64:
		return valuer(func(v parquet.Value) Value { return Value{Kind: ValueNumber, Num: float64(v.Int64())} })
	case kind == parquet.Float:
		return valuer(func(v parquet.Value) Value { return Value{Kind: ValueNumber, Num: float64(v.Float())} })
	case kind == parquet.Double:
		return valuer(func(v parquet.Value) Value { return Value{Kind: ValueNumber, Num: v.Double()} })
	case kind == parquet.ByteArray:
		return valuer(func(v parquet.Value) Value { return Value{Kind: ValueString, Str: string(v.ByteArray())} })
	case kind == parquet.Int96:
		// Impala's and Spark's legacy timestamps: nanoseconds of the day,
		// then the Julian day, little-endian.
		return valuer(func(v parquet.Value) Value {
			i := v.Int96()
			nanos := int64(i[1])<<32 | int64(i[0])
			const unixJulianDay = 2440588
			day := int64(i[2]) - unixJulianDay
			return Value{Kind: ValueTime, Time: time.Unix(day*86400, nanos).UTC()}
		})
	default:
		return other("a " + kind.String() + " column")
	}
}
