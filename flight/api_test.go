package flight_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/thalweg/thalweg/flight"
)

// No exported field of the public structs has a type of an internal
// package: an importer outside thalweg could neither name nor set it.
func TestExportedFieldsHaveNoInternalType(t *testing.T) {
	for _, v := range []any{flight.Options{}, flight.TLSOptions{}, flight.Error{}, flight.Ticket{}, flight.Stored{}} {
		typ := reflect.TypeOf(v)
		for i := range typ.NumField() {
			f := typ.Field(i)
			if f.IsExported() {
				if p := internalType(f.Type, map[reflect.Type]bool{}); p != "" {
					t.Errorf("%s.%s has a type of the internal package %s", typ.Name(), f.Name, p)
				}
			}
		}
	}
}

// internalType returns the path of an internal package that typ is, or is
// built of (elements, keys, parameters and results), or "".
func internalType(typ reflect.Type, seen map[reflect.Type]bool) string {
	if seen[typ] {
		return ""
	}
	seen[typ] = true
	if p := typ.PkgPath(); strings.Contains(p, "/internal/") || strings.HasSuffix(p, "/internal") {
		return p
	}
	var parts []reflect.Type
	switch typ.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Chan:
		parts = append(parts, typ.Elem())
	case reflect.Map:
		parts = append(parts, typ.Key(), typ.Elem())
	case reflect.Func:
		for i := range typ.NumIn() {
			parts = append(parts, typ.In(i))
		}
		for i := range typ.NumOut() {
			parts = append(parts, typ.Out(i))
		}
	}
	for _, p := range parts {
		if s := internalType(p, seen); s != "" {
			return s
		}
	}
	return ""
}
