package shim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
)

// ArgsKey is the key in a native plugin's pluginConfig args that configures
// the shim. schedplug-host removes it before the args reach the plugin's
// create(), so plugins never see it.
//
//	pluginConfig:
//	- name: HwEncrypt
//	  args:
//	    schedplug:
//	      failurePolicy: Ignore   # or Fail (default)
//	      timeout: 100ms          # per call (default 100ms)
//	      simulatorAnnotations: true  # the profile's (default false)
//	    ...the plugin's own args...
const ArgsKey = "schedplug"

// FailurePolicy says what a plugin's verdict is when the host cannot answer.
type FailurePolicy string

const (
	// FailurePolicyFail rejects the node (Filter) or fails the cycle
	// (Score) so that no pod is placed without the plugin's say.
	FailurePolicyFail FailurePolicy = "Fail"
	// FailurePolicyIgnore lets the plugin pass: Filter accepts, Score skips.
	FailurePolicyIgnore FailurePolicy = "Ignore"
)

const (
	// DefaultFailurePolicy never places a pod that a native plugin might
	// have rejected.
	DefaultFailurePolicy = FailurePolicyFail
	// DefaultTimeout bounds each PreFilter, PreScore and single-node Filter
	// call. A healthy host answers in about a millisecond even at 5000
	// nodes; 100ms leaves room for CPU starvation and GC on a busy control
	// plane node while capping what a hung host can add to a cycle.
	DefaultTimeout = 100 * time.Millisecond
	// maxTimeout keeps a typo ("100s") from stalling the scheduler.
	maxTimeout = 30 * time.Second
)

// Policy is one plugin's shim settings.
type Policy struct {
	FailurePolicy FailurePolicy
	Timeout       time.Duration
	// SimulatorAnnotations is the plugin's simulatorAnnotations key: a
	// setting of its whole profile (docs/simulator-annotations.md), which
	// any one native plugin of the profile may carry.
	SimulatorAnnotations Toggle
}

// Toggle is a boolean setting that may be left out.
type Toggle uint8

const (
	// Unset: the key is not there.
	Unset Toggle = iota
	On
	Off
)

// DefaultPolicy is what a plugin without a schedplug key gets.
func DefaultPolicy() Policy {
	return Policy{FailurePolicy: DefaultFailurePolicy, Timeout: DefaultTimeout}
}

// rawArgs is the args' JSON text; nil when there are none (no
// pluginConfig, or null).
func rawArgs(plugin string, args runtime.Object) ([]byte, error) {
	if args == nil {
		return nil, nil
	}
	var raw []byte
	switch a := args.(type) {
	case *runtime.Unknown:
		raw = a.Raw
	default:
		data, err := json.Marshal(a)
		if err != nil {
			return nil, fmt.Errorf("plugin %q: cannot read pluginConfig args of type %T: %w", plugin, args, err)
		}
		raw = data
	}
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, nil
	}
	return raw, nil
}

type rawPolicy struct {
	FailurePolicy        *string         `json:"failurePolicy"`
	Timeout              *string         `json:"timeout"`
	SimulatorAnnotations json.RawMessage `json:"simulatorAnnotations"`
}

// ParseArgs reads the schedplug key from a native plugin's args. Out-of-tree
// args reach the factory as *runtime.Unknown holding JSON (or nil when the
// profile has no pluginConfig for the plugin).
func ParseArgs(plugin string, args runtime.Object) (Policy, error) {
	pol := DefaultPolicy()
	raw, err := rawArgs(plugin, args)
	if err != nil || raw == nil {
		return pol, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return pol, fmt.Errorf("plugin %q: pluginConfig args must be an object: %w", plugin, err)
	}
	section, ok := top[ArgsKey]
	if !ok {
		return pol, nil
	}
	// Keys are matched exactly (encoding/json alone would accept any case),
	// so a misspelt key is an error instead of a silently ignored setting.
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(section, &keys); err != nil {
		return pol, fmt.Errorf("plugin %q: pluginConfig args.%s must be an object with failurePolicy, timeout and/or simulatorAnnotations: %v", plugin, ArgsKey, err)
	}
	for k := range keys {
		// sha256 pins the plugin's file and shadow names a candidate build
		// to run beside it; only schedplug-host reads them.
		if k != "failurePolicy" && k != "timeout" && k != "sha256" && k != "shadow" && k != "simulatorAnnotations" {
			return pol, fmt.Errorf("plugin %q: pluginConfig args.%s has unknown key %q (allowed keys: failurePolicy, timeout, sha256, shadow, simulatorAnnotations)", plugin, ArgsKey, k)
		}
	}
	var rp rawPolicy
	if err := json.Unmarshal(section, &rp); err != nil {
		return pol, fmt.Errorf("plugin %q: pluginConfig args.%s: %v; failurePolicy and timeout are strings", plugin, ArgsKey, err)
	}
	if rp.FailurePolicy != nil {
		switch FailurePolicy(*rp.FailurePolicy) {
		case FailurePolicyFail, FailurePolicyIgnore:
			pol.FailurePolicy = FailurePolicy(*rp.FailurePolicy)
		default:
			return pol, fmt.Errorf("plugin %q: pluginConfig args.%s.failurePolicy is %q; use \"Fail\" or \"Ignore\"", plugin, ArgsKey, *rp.FailurePolicy)
		}
	}
	if rp.Timeout != nil {
		d, err := time.ParseDuration(*rp.Timeout)
		if err != nil {
			return pol, fmt.Errorf("plugin %q: pluginConfig args.%s.timeout %q is not a duration; write it like \"100ms\" or \"1s\"", plugin, ArgsKey, *rp.Timeout)
		}
		// Whole milliseconds, as schedplug-host also requires of this key.
		if d < time.Millisecond || d > maxTimeout || d%time.Millisecond != 0 {
			return pol, fmt.Errorf("plugin %q: pluginConfig args.%s.timeout %q is out of range; write whole milliseconds from 1ms to %v, like \"100ms\"", plugin, ArgsKey, *rp.Timeout, maxTimeout)
		}
		pol.Timeout = d
	}
	switch string(rp.SimulatorAnnotations) {
	case "":
	case "true":
		pol.SimulatorAnnotations = On
	case "false":
		pol.SimulatorAnnotations = Off
	default:
		return pol, fmt.Errorf("plugin %q: pluginConfig args.%s.simulatorAnnotations is %s; write true (this profile's pods get the native plugins' results in kube-scheduler-simulator's annotations) or false", plugin, ArgsKey, rp.SimulatorAnnotations)
	}
	return pol, nil
}
