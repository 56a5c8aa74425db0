package batch

import "github.com/apache/arrow-go/v18/arrow"

// JSONDecodeFunc exposes phase 1 of the ModeJSON path (tokenize, validate,
// fill the tape; no builders) to the decoder benchmarks.
func JSONDecodeFunc(s *arrow.Schema) (func([]byte) error, error) {
	root, err := compileJSONSchema(s, JSONBinaryBase64)
	if err != nil {
		return nil, err
	}
	d := &jsonDecoder{root: root}
	return func(p []byte) error {
		if e := d.decode(p); e != nil {
			return e
		}
		return nil
	}, nil
}
