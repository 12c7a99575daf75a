// Package abi holds the constants of the plugin ABI
// (sdk/include/schedplug/plugin.h) that the shim uses: the status codes and
// the data, event and hint bits of PluginInfo. constants.go is generated
// from the header (gen/), and gen's test fails when the two differ.
package abi

//go:generate go run ./gen

// DataBits are SCHEDPLUG_DATA_* bits: the pod and node data beyond the
// basic view that a plugin declared it reads.
type DataBits = uint64

// EventBits are SCHEDPLUG_EVENT_* bits: the cluster events after which a
// pod a plugin rejected may fit.
type EventBits = uint64

// HintBits are SCHEDPLUG_HINT_* bits: promises a plugin makes about what
// its verdicts depend on.
type HintBits = uint64

// Code is a status code of plugin.h; the proto's Code has the same values.
type Code int32
