package zerobus

// The Zerobus wire types in zerobuspb are generated from
// zerobus_service.proto and committed; CI regenerates them and fails on any
// difference. The plugins are the versions pinned in go.mod.
//go:generate ../scripts/protoc-gen.sh zerobus/zerobus_service.proto
