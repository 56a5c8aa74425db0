package receiver

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// DatasetInfo is the JSON app_metadata of a FlightInfo.
type DatasetInfo struct {
	Batches  int `json:"batches"`
	Segments int `json:"segments"`
	// Schemas counts the distinct schemas the dataset's segments have.
	Schemas    int             `json:"schemas"`
	Partitions []PartitionInfo `json:"partitions"`
}

// PartitionInfo is the stored seq range of one partition: the smallest
// First and largest Last of the stored spans, and how many spans there are.
type PartitionInfo struct {
	Partition string `json:"partition"`
	MinSeq    uint64 `json:"min_seq"`
	MaxSeq    uint64 `json:"max_seq"`
	Spans     int    `json:"spans"`
}

// flightInfo describes ds. Its schema is the dataset's latest; a dataset
// that holds batches of more than one schema gets one endpoint per run of
// positions with one schema, in stored order, each with a position-range
// ticket whose DoGet serves that run with its own schema.
func (s *Server) flightInfo(ds *dataset) (*flight.FlightInfo, error) {
	entries, segs, schemas := ds.snapshot()
	info := &flight.FlightInfo{
		FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: ds.path},
		Endpoint:         schemaEndpoints(ds.path, entries, segs),
		TotalRecords:     0,
		TotalBytes:       0,
		Ordered:          true,
	}
	// The latest schema a batch is stored with (a stream may have claimed
	// a newer one and stored nothing yet).
	schema := arrow.NewSchema(nil, nil)
	if n := len(segs); n > 0 && segs[n-1].schema < len(schemas) {
		schema = schemas[segs[n-1].schema].schema
	} else if n := len(schemas); n > 0 {
		schema = schemas[n-1].schema
	}
	info.Schema = flight.SerializeSchema(schema, memory.DefaultAllocator)
	parts := map[string]*PartitionInfo{}
	for i := range entries {
		e := &entries[i]
		info.TotalRecords += e.rows
		info.TotalBytes += e.bodyLen
		for _, sp := range e.spans {
			p, ok := parts[sp.Partition]
			if !ok {
				p = &PartitionInfo{Partition: sp.Partition, MinSeq: sp.First, MaxSeq: sp.Last}
				parts[sp.Partition] = p
			}
			p.MinSeq, p.MaxSeq = min(p.MinSeq, sp.First), max(p.MaxSeq, sp.Last)
			p.Spans++
		}
	}
	di := DatasetInfo{Batches: len(entries), Segments: len(segs), Schemas: len(schemas), Partitions: []PartitionInfo{}}
	for _, p := range parts {
		di.Partitions = append(di.Partitions, *p)
	}
	sort.Slice(di.Partitions, func(i, j int) bool { return di.Partitions[i].Partition < di.Partitions[j].Partition })
	md, err := json.Marshal(di)
	if err != nil {
		return nil, err
	}
	info.AppMetadata = md
	return info, nil
}

// schemaEndpoints is one endpoint for the whole dataset when its batches
// share one schema, and one per run of positions with one schema otherwise.
func schemaEndpoints(path []string, entries []entry, segs []*segment) []*flight.FlightEndpoint {
	endpoint := func(t ticket) *flight.FlightEndpoint {
		return &flight.FlightEndpoint{Ticket: &flight.Ticket{Ticket: t.Bytes()}}
	}
	var eps []*flight.FlightEndpoint
	from := 0
	for i := 1; i <= len(entries); i++ {
		if i < len(entries) && segs[entries[i].seg].schema == segs[entries[from].seg].schema {
			continue
		}
		lo, hi := uint64(from), uint64(i)
		eps = append(eps, endpoint(ticket{Path: path, From: &lo, To: &hi}))
		from = i
	}
	if len(eps) <= 1 {
		return []*flight.FlightEndpoint{endpoint(ticket{Path: path})}
	}
	return eps
}

// GetFlightInfo describes the dataset named by a PATH descriptor.
func (s *Server) GetFlightInfo(_ context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	if desc.GetType() != flight.DescriptorPATH {
		return nil, status.Error(codes.InvalidArgument, "only PATH descriptors name datasets")
	}
	ds, err := s.dataset(desc.Path, false)
	if err != nil {
		return nil, err
	}
	return s.flightInfo(ds)
}

// ListFlights describes every dataset, in path order. Criteria are ignored.
func (s *Server) ListFlights(_ *flight.Criteria, stream flight.FlightService_ListFlightsServer) error {
	s.mu.Lock()
	ds := slices.Collect(maps.Values(s.mu.datasets))
	s.mu.Unlock()
	sort.Slice(ds, func(i, j int) bool { return ds[i].name < ds[j].name })
	for _, d := range ds {
		info, err := s.flightInfo(d)
		if err != nil {
			return status.Errorf(codes.Internal, "%v", err)
		}
		if err := stream.Send(info); err != nil {
			return err
		}
	}
	return nil
}
