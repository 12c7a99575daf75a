package shim

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"schedplug.dev/integration/scheduler/shim/session"
)

// Environment variables read by the process-wide manager.
const (
	EnvHost           = "SCHEDPLUG_HOST"
	EnvConnectTimeout = "SCHEDPLUG_CONNECT_TIMEOUT"
	EnvResyncTimeout  = "SCHEDPLUG_RESYNC_TIMEOUT"
	// EnvFastPath "off" keeps every call on gRPC (default "on": use the
	// host's fast-path socket when it offers one).
	EnvFastPath = "SCHEDPLUG_FAST_PATH"
	// EnvFastPathSpin is how long a cycle polls for a fast-path answer
	// before it sleeps, e.g. "1ms" (default DefaultFastPathSpin).
	EnvFastPathSpin = "SCHEDPLUG_FAST_PATH_SPIN"
	// EnvFilterWindow "off" makes PreFilter ask the host about every node
	// (default "on": the window kube-scheduler's Filter is expected to
	// visit; cycle/window.go).
	EnvFilterWindow = "SCHEDPLUG_FILTER_WINDOW"
	// EnvVerdictReuse "off" makes every cycle call the host (default
	// "on": replicas identical apart from name and uid reuse verdicts when
	// the plugins promise it; cycle/kept.go).
	EnvVerdictReuse = "SCHEDPLUG_VERDICT_REUSE"
	// EnvScoresAhead "off" makes every cycle with native Score plugins ask
	// PreScore for its scores (default "on": the host scores ahead and the
	// shim normalizes; cycle/ahead.go).
	EnvScoresAhead = "SCHEDPLUG_SCORES_AHEAD"
	// EnvSpotCheckEvery is how often a cycle that could answer from kept
	// verdicts asks the host anyway and compares: one in N (default
	// DefaultSpotCheckEvery), or "off" (cycle/spotcheck.go).
	EnvSpotCheckEvery = "SCHEDPLUG_SPOT_CHECK_EVERY"
	// EnvSimulatorAnnotationsQPS limits the patches writing the simulator's
	// annotations, per second (default simannot.DefaultQPS), and
	// EnvSimulatorAnnotationsQueue is how many pods may wait for theirs
	// (default simannot.DefaultQueue); docs/simulator-annotations.md.
	EnvSimulatorAnnotationsQPS   = "SCHEDPLUG_SIMULATOR_ANNOTATIONS_QPS"
	EnvSimulatorAnnotationsQueue = "SCHEDPLUG_SIMULATOR_ANNOTATIONS_QUEUE"
)

var (
	defaultMu       sync.Mutex
	defaultManager  *Manager
	defaultProfiles []Profile
)

// SetProfiles tells the process-wide manager every profile and its native
// plugins before the scheduler builds its frameworks, so that the first
// Handshake names them all (the host checks the whole set at once).
func SetProfiles(profiles []Profile) {
	defaultMu.Lock()
	defer defaultMu.Unlock()
	defaultProfiles = profiles
}

// ConfigFromEnv builds the manager configuration from SCHEDPLUG_HOST, the
// SCHEDPLUG_TLS_* variables (tls.go),
// SCHEDPLUG_CONNECT_TIMEOUT, SCHEDPLUG_RESYNC_TIMEOUT, SCHEDPLUG_FAST_PATH,
// SCHEDPLUG_FAST_PATH_SPIN, SCHEDPLUG_FILTER_WINDOW,
// SCHEDPLUG_VERDICT_REUSE, SCHEDPLUG_SCORES_AHEAD, SCHEDPLUG_SPOT_CHECK_EVERY
// and SCHEDPLUG_SIMULATOR_ANNOTATIONS_QPS / _QUEUE.
func ConfigFromEnv() (Config, error) {
	cfg := Config{Target: os.Getenv(EnvHost)}
	tlsConfig, err := session.TLSFromEnv()
	if err != nil {
		return cfg, err
	}
	cfg.TLS = tlsConfig
	for _, e := range []struct {
		name string
		dst  *time.Duration
	}{{EnvConnectTimeout, &cfg.ConnectTimeout}, {EnvResyncTimeout, &cfg.ResyncTimeout}, {EnvFastPathSpin, &cfg.FastPathSpin}} {
		v := os.Getenv(e.name)
		if v == "" {
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return cfg, fmt.Errorf("environment variable %s=%q is not a positive duration; write it like \"30s\"", e.name, v)
		}
		*e.dst = d
	}
	for _, e := range []struct {
		name string
		off  *bool
	}{{EnvFastPath, &cfg.DisableFastPath}, {EnvFilterWindow, &cfg.EvaluateAllNodes}, {EnvVerdictReuse, &cfg.NoVerdictReuse}, {EnvScoresAhead, &cfg.NoScoresAhead}} {
		switch v := os.Getenv(e.name); v {
		case "", "on":
		case "off":
			*e.off = true
		default:
			return cfg, fmt.Errorf("environment variable %s=%q: write \"on\" or \"off\"", e.name, v)
		}
	}
	switch v := os.Getenv(EnvSpotCheckEvery); v {
	case "":
	case "off":
		cfg.SpotCheckEvery = -1
	default:
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return cfg, fmt.Errorf("environment variable %s=%q: write a positive number N (one in N reusing cycles is checked) or \"off\"", EnvSpotCheckEvery, v)
		}
		cfg.SpotCheckEvery = n
	}
	if v := os.Getenv(EnvSimulatorAnnotationsQPS); v != "" {
		q, err := strconv.ParseFloat(v, 32)
		if err != nil || q <= 0 || q > 10000 {
			return cfg, fmt.Errorf("environment variable %s=%q: write the patches per second allowed for the simulator annotations, a number above 0 and at most 10000, like \"20\"", EnvSimulatorAnnotationsQPS, v)
		}
		cfg.SimulatorAnnotations.QPS = float32(q)
	}
	if v := os.Getenv(EnvSimulatorAnnotationsQueue); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return cfg, fmt.Errorf("environment variable %s=%q: write how many pods may wait for their simulator annotations, a positive number like \"1000\"", EnvSimulatorAnnotationsQueue, v)
		}
		cfg.SimulatorAnnotations.Queue = n
	}
	return cfg, nil
}

func processManager() (*Manager, error) {
	defaultMu.Lock()
	defer defaultMu.Unlock()
	if defaultManager != nil {
		return defaultManager, nil
	}
	cfg, err := ConfigFromEnv()
	if err != nil {
		return nil, err
	}
	cfg.Profiles = defaultProfiles
	m, err := NewManager(cfg)
	if err != nil {
		return nil, err
	}
	defaultManager = m
	return m, nil
}

// Factory returns the framework plugin factory for the native plugin
// `name`, for app.WithPlugin. Every instance shares one connection to the
// host; the first instance connects (see Manager.Start).
func Factory(name string) func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
	return func(ctx context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		return FactoryFor(func() (*Manager, error) { return processManager() }, name)(ctx, args, h)
	}
}

// FactoryFor is Factory on a given manager (tests use their own). The
// plugin it returns has Permit, PreBind and PreEnqueue only when the host's
// start-up Handshake reports the native plugin's hook (extensions.go).
func FactoryFor(manager func() (*Manager, error), name string) func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
	return func(ctx context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		pol, err := ParseArgs(name, args)
		if err != nil {
			return nil, err
		}
		m, err := manager()
		if err != nil {
			return nil, err
		}
		p := NewPlugin(m, name, pol, h)
		if err := m.registry.annotationConflict(p.profile); err != nil {
			return nil, err
		}
		if m.registry.annotates(p.profile) {
			if err := m.annotations.start(h); err != nil {
				return nil, err
			}
		}
		if err := m.Start(ctx); err != nil {
			return nil, err
		}
		info := m.pluginInfo(name)
		if info == nil {
			klog.FromContext(ctx).Info("schedplug-host did not answer at start: native plugin "+name+" is registered at Permit, PreBind and PreEnqueue in case it has those hooks; it calls the host only for the hooks the host reports once it answers",
				"plugin", name, "profile", p.profile)
		}
		p.hooks = hooksOf(info)
		return withHooks(p), nil
	}
}
