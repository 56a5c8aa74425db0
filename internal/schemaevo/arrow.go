package schemaevo

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// FromArrow converts an Arrow schema's fields to the neutral form. Schema
// and field metadata are dropped: they never count as changes.
func FromArrow(s *arrow.Schema) []Field {
	return fromArrowFields(s.Fields())
}

func fromArrowFields(fs []arrow.Field) []Field {
	out := make([]Field, len(fs))
	for i, f := range fs {
		out[i] = fromArrowField(f)
	}
	return out
}

func fromArrowField(f arrow.Field) Field {
	out := Field{Name: f.Name, Nullable: f.Nullable}
	switch t := f.Type.(type) {
	case *arrow.StructType:
		out.Type, out.Children = "struct", fromArrowFields(t.Fields())
	case *arrow.MapType:
		out.Type = "map"
		if t.KeysSorted {
			out.Type = "map[keys_sorted]"
		}
		out.Children = fromArrowFields([]arrow.Field{t.KeyField(), t.ItemField()})
	case *arrow.FixedSizeListType:
		out.Type, out.Children = fmt.Sprintf("fixed_size_list[%d]", t.Len()), []Field{fromArrowField(t.ElemField())}
	case arrow.ListLikeType: // list, large_list, list_view, large_list_view
		out.Type, out.Children = t.Name(), []Field{fromArrowField(t.ElemField())}
	default:
		out.Type = f.Type.String()
	}
	return out
}

// MergeArrow is Merge of two Arrow schemas' fields; merged nil starts a
// store.
func MergeArrow(merged []Field, next *arrow.Schema) ([]Field, error) {
	return Merge(merged, FromArrow(next))
}
