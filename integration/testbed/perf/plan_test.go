// The perf plan: variants, workloads and the scheduler configuration each
// variant gets. One file: which variant runs which workload is decided by
// predicates over both (runsVariant, isNative, isScoreOnly), so they stay
// together.

package perf

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"schedplug.dev/integration/testbed/twin"
)

// Knobs, read from the environment so that `go test ./...` (the short
// suite) and the documented full run use the same code.
const (
	// EnvSize is "short" (default: a few nodes and pods per workload, what
	// the test command runs) or "full" (500 and 5000 nodes).
	EnvSize = "SCHEDPLUG_PERF"
	// EnvReps overrides the number of repetitions (short 1, full 3).
	EnvReps = "SCHEDPLUG_PERF_REPS"
	// EnvOut is the directory for results.json, scheduler_perf's own data
	// items and the logs of failed runs (default build/perf under the
	// repository root).
	EnvOut = "SCHEDPLUG_PERF_OUT"
	// EnvWorkloads limits the run to some workloads, e.g. "Basic500,Mixed".
	EnvWorkloads = "SCHEDPLUG_PERF_WORKLOADS"
	// EnvVariants limits the run to some variants, e.g. "twin,native".
	EnvVariants = "SCHEDPLUG_PERF_VARIANTS"
	// EnvEtcd is an etcd binary to use instead of building one.
	EnvEtcd = "SCHEDPLUG_ETCD_BIN"
)

// Variants: the same workload with no extra plugin, with the sample
// plugins as Go twins compiled into the scheduler, with the same plugins
// native through the shim and schedplug-host (PreFilter and PreScore over
// the host's fast-path socket, as deployed), the same with the fast path
// off (every call over gRPC), and with the twins' rules served as an HTTP
// extender (extender_test.go). Run only when named in
// SCHEDPLUG_PERF_VARIANTS: native-allnodes, native with the host
// evaluating every node in PreFilter instead of the window kube-scheduler's
// Filter will visit, native-noreuse, native with every cycle calling
// the host even for replicas whose verdicts it could reuse, and
// native-simannot, native with the profile writing the simulator
// annotations (docs/simulator-annotations.md) for every pod.
const (
	VariantDefault    = "default"
	VariantTwin       = "twin"
	VariantNative     = "native"
	VariantNativeGRPC = "native-grpc"
	VariantExtender   = "extender"
	// VariantNativeAllNodes: native with shim.Config.EvaluateAllNodes.
	VariantNativeAllNodes = "native-allnodes"
	// VariantNativeNoReuse: native with shim.Config.NoVerdictReuse.
	VariantNativeNoReuse = "native-noreuse"
	// VariantNativeSimAnnot: native with simulatorAnnotations on and a
	// writer rate limit no pod meets, so that every pod gets its patch.
	VariantNativeSimAnnot = "native-simannot"
	// VariantNativeNoAhead: native with shim.Config.NoScoresAhead (every
	// cycle with native Score plugins asks PreScore for its scores).
	VariantNativeNoAhead = "native-noahead"
)

var allVariants = []string{VariantDefault, VariantTwin, VariantNative, VariantNativeGRPC, VariantExtender}

// optionalVariants run only when SCHEDPLUG_PERF_VARIANTS names them.
var optionalVariants = []string{VariantNativeAllNodes, VariantNativeNoReuse, VariantNativeSimAnnot, VariantNativeNoAhead}

// isNative: the variant runs the native plugins in schedplug-host.
func isNative(variant string) bool {
	return variant == VariantNative || variant == VariantNativeGRPC || slices.Contains(optionalVariants, variant)
}

// Plugin names: the native ones as schedplug-host serves them, and their
// Go twins (integration/testbed/twin). The basic and preemption workloads
// run the two Filter plugins; the mixed one all three sample plugins; the
// compute one ShapeFit (plugins/shape-fit), which the host loads from its
// own directory; the no-hints one DedicatedNodes built without its hints
// and NetworkLatency, from theirs; the devices one DeviceShare
// (plugins/device-share: Filter, Score, Reserve, Unreserve, PreBind), from
// its own, its twin the one with the native Score (the end-to-end tests'
// GoDeviceShare has none).
var (
	filterPlugins  = []string{"HwEncrypt", "DedicatedNodes"}
	scorePlugins   = []string{"NetworkLatency"}
	allPlugins     = []string{"HwEncrypt", "DedicatedNodes", "NetworkLatency"}
	computePlugins = []string{"ShapeFit"}
	noHintsPlugins = []string{"DedicatedNodes", "NetworkLatency"}
	devicePlugins  = []string{"DeviceShare"}
	twinOf         = map[string]string{"HwEncrypt": "GoHwEncrypt", "DedicatedNodes": "GoDedicatedNodes", "NetworkLatency": "GoNetworkLatency", "ShapeFit": "GoShapeFit", "DeviceShare": "GoDeviceShare"}
)

// devicesPerNode is every node's device count in the devices workloads
// (the label DeviceShare reads); each measured pod asks for 1 or 2.
const devicesPerNode = 8

// computeResolution and computeShapes are ShapeFit's args in the compute
// workloads (native and twin alike): cpu and memory cut into 64 buckets
// each, and eight pod shapes a cluster of small services might see.
const computeResolution = 64

var computeShapes = []map[string]int64{
	{"cpu": 100, "memory": 500 << 20},
	{"cpu": 250, "memory": 256 << 20},
	{"cpu": 250, "memory": 2 << 30},
	{"cpu": 500, "memory": 1 << 30},
	{"cpu": 1000, "memory": 1 << 30},
	{"cpu": 1000, "memory": 2 << 30},
	{"cpu": 2000, "memory": 4 << 30},
	{"cpu": 4000, "memory": 8 << 30},
}

// latencyFile is NetworkLatency's file for the mixed workload (native and
// twin read it; the extender uses its text). scheduler_perf names nodes
// at random, so none is listed and every node gets the default latency:
// each plugin still looks every feasible node up and normalizes the
// scores, which is the work being measured.
const (
	latencyFile     = "latency.txt"
	latencyFileText = "# schedplug perf: scheduler_perf's node names are random, so every node gets defaultLatencyMs\nnode-a 12.5\nnode-b 3\nnode-c 0.8\n"
)

// measureNamespace holds the measured pods of every workload; the suite's
// own watcher counts bindings there.
const measureNamespace = "measure"

// shape is one workload: the scheduler_perf operations and how many pods
// the measured operation creates.
type shape struct {
	Name     string
	Nodes    int
	Measured int
	ops      func(dir string) []map[string]any
	// plugins are the native plugins enabled (their twins in the twin
	// variant, their rules in the extender's).
	plugins []string
	// noDefaultSpread turns PodTopologySpread's default constraints off,
	// as upstream's batching scenarios do: with them no pod is signable
	// and kube-scheduler's opportunistic batching never applies.
	noDefaultSpread bool
	// build is the plugin directory the host of a native run loads.
	build pluginBuild
}

// pluginBuild is which plugin directory the host of a native run loads.
type pluginBuild int

const (
	// sampleBuild: build/plugins.d, the sample plugins as shipped.
	sampleBuild pluginBuild = iota
	// shapeFitBuild: build/plugins/shape-fit.d (ShapeFit).
	shapeFitBuild
	// noHintsBuild: build/plugins/no-hints.d (DedicatedNodes without its
	// hints, NetworkLatency).
	noHintsBuild
	// deviceShareBuild: build/plugins/device-share.d (DeviceShare).
	deviceShareBuild
)

// basic is upstream's SchedulingBasic: nodes, pods to fill them a bit, and
// measured pods of the default template.
func basic(name string, nodes, initPods, measured int) shape {
	return shape{Name: name, Nodes: nodes, Measured: measured, plugins: filterPlugins, ops: func(dir string) []map[string]any {
		return []map[string]any{
			{"opcode": "createNodes", "count": nodes},
			{"opcode": "createPods", "count": initPods},
			{"opcode": "createPods", "count": measured, "collectMetrics": true, "namespace": measureNamespace},
		}
	}}
}

// scoreOnly is SchedulingBasic with the Score sample alone: a profile
// without native Filter plugins, whose one host call per pod is PreScore
// (it carries the node-table delta).
func scoreOnly(name string, nodes, initPods, measured int) shape {
	sh := basic(name, nodes, initPods, measured)
	sh.plugins = scorePlugins
	return sh
}

// compute is SchedulingBasic with ShapeFit alone: a Score whose per-node
// work (a knapsack over a grid of the node's capacity left) is the cost
// measured. scheduler_perf gives every pod its own label, so no two pods
// share a batching signature and every cycle scores afresh.
func compute(name string, nodes, initPods, measured int) shape {
	sh := basic(name, nodes, initPods, measured)
	sh.plugins, sh.build = computePlugins, shapeFitBuild
	return sh
}

// noHints is SchedulingBasic with a native Filter and a native Score that
// declare no hints (DedicatedNodes built without its promises, and
// NetworkLatency): nothing lets a cycle skip its call, and DedicatedNodes
// filters every node of every pod (it has no gate).
func noHints(name string, nodes, initPods, measured int) shape {
	sh := basic(name, nodes, initPods, measured)
	sh.plugins, sh.build = noHintsPlugins, noHintsBuild
	return sh
}

// devices is SchedulingBasic with DeviceShare alone: every node has
// devicesPerNode devices (its count label), the first pods ask for none,
// and every measured pod asks for 1 or 2 (alternately), so that its cycle
// is Filter and Score with the node's pods' labels, then Reserve picks the
// indices and PreBind writes them on the pod (one patch) before the
// binding. The caller sizes it so that every measured pod fits.
func devices(name string, nodes, initPods, measured int) shape {
	return shape{Name: name, Nodes: nodes, Measured: measured, plugins: devicePlugins, build: deviceShareBuild, ops: func(dir string) []map[string]any {
		return []map[string]any{
			{"opcode": "createNodes", "count": nodes,
				"labelNodePrepareStrategy": map[string]any{"labelKey": twin.DeviceCountLabel, "labelValues": []string{strconv.Itoa(devicesPerNode)}}},
			{"opcode": "createPods", "count": initPods},
			{"opcode": "createPods", "count": measured, "collectMetrics": true, "namespace": measureNamespace,
				"podTemplatePath": filepath.Join(dir, "pod-devices.yaml")},
		}
	}}
}

// usesShapeFit: the workload's native plugin is ShapeFit, which the host
// loads from ShapeFit's own plugin directory.
func usesShapeFit(sh shape) bool { return sh.build == shapeFitBuild }

// ownsDevices: the workload's native plugin is DeviceShare, which has
// Reserve, Unreserve and PreBind.
func ownsDevices(sh shape) bool { return sh.build == deviceShareBuild }

// runsVariant: the workload runs in that variant. The extender cannot run
// ShapeFit: with nodeCacheCapable false kube-scheduler sends it the Node
// objects without the pods on them, so it cannot know what a node has left
// (an extender would need its own pod informer, which is not what the
// extender variant measures). The no-hints workload compares native with
// its twins only: its default, gRPC and extender runs would repeat Basic's
// and Mixed's. So does the devices workload: an HTTP extender has no
// Reserve, Unreserve or PreBind (only its bind verb could write the
// devices, taking the binding from kube-scheduler), the fast path's gain
// over gRPC (it carries PreFilter, PreScore and Reserve here) is what
// Mixed's gRPC runs already compare, and the default plugins alone would
// bind the pods without the patch, so that the difference to the twin
// mixes the Go plugin with its write.
func runsVariant(sh shape, variant string) bool {
	if sh.build == noHintsBuild || ownsDevices(sh) {
		return variant == VariantTwin || isNative(variant) && variant != VariantNativeGRPC
	}
	return variant != VariantExtender || !usesShapeFit(sh)
}

// isScoreOnly: the workload's native plugins have no Filter.
func isScoreOnly(sh shape) bool { return !slices.ContainsFunc(sh.plugins, isFilterPlugin) }

func isFilterPlugin(name string) bool {
	return slices.Contains(filterPlugins, name) || slices.Contains(devicePlugins, name)
}

// hasScorePlugin: a native plugin of the workload scores (DeviceShare
// filters and scores).
func hasScorePlugin(sh shape) bool {
	return slices.ContainsFunc(sh.plugins, func(n string) bool { return !isFilterPlugin(n) || slices.Contains(devicePlugins, n) })
}

// mixed: a tenth of the nodes dedicated (DedicatedNodes rejects pods
// without the dedicated-ok annotation there), half of the others with
// hardware encryption; a third of the measured pods require it (HwEncrypt)
// and a fifth may use dedicated nodes.
func mixed(name string, nodes, initPods, measured int) shape {
	dedicated := nodes / 10
	if dedicated < 1 {
		dedicated = 1
	}
	return shape{Name: name, Nodes: nodes, Measured: measured, plugins: allPlugins, ops: func(dir string) []map[string]any {
		return []map[string]any{
			{"opcode": "createNodes", "count": nodes - dedicated,
				"labelNodePrepareStrategy": map[string]any{"labelKey": twin.DefaultHwLabel, "labelValues": []string{"true", "false"}}},
			{"opcode": "createNodes", "count": dedicated, "nodeTemplatePath": filepath.Join(dir, "node-dedicated.yaml")},
			{"opcode": "createPods", "count": initPods},
			{"opcode": "createPods", "count": measured, "collectMetrics": true, "namespace": measureNamespace,
				"podTemplatePath": filepath.Join(dir, "pod-mixed.yaml")},
		}
	}}
}

// preemption is upstream's PreemptionBasic: low-priority pods (900m)
// fill every node (4 CPUs), then each measured high-priority pod (3 CPUs)
// must preempt. Preemption dry runs call Filter per node outside the
// snapshot, which is where the native plugins cost one RPC per node.
func preemption(name string, nodes, lowPods, measured int) shape {
	return shape{Name: name, Nodes: nodes, Measured: measured, plugins: filterPlugins, ops: func(dir string) []map[string]any {
		return []map[string]any{
			{"opcode": "createNodes", "count": nodes},
			{"opcode": "createPods", "count": lowPods, "podTemplatePath": filepath.Join(dir, "pod-low-priority.yaml")},
			{"opcode": "createPods", "count": measured, "collectMetrics": true, "namespace": measureNamespace,
				"podTemplatePath": filepath.Join(dir, "pod-high-priority.yaml")},
		}
	}}
}

// batching is upstream's ResourceSaturation batching scenario
// (test/integration/scheduler_perf/batching): 3-CPU pods on 4-CPU nodes, one
// pod per node, `batch` consecutive pods with the same signature label,
// default topology spreading off. Every node has hardware encryption and
// every pod requires it, so HwEncrypt's Filter runs on every node it is
// asked about; both native plugins declare the identity hint, so
// kube-scheduler's batching stays on (the test checks its hint_used count).
func batching(name string, nodes, batch int) shape {
	return shape{Name: name, Nodes: nodes, Measured: nodes, plugins: filterPlugins, noDefaultSpread: true, ops: func(dir string) []map[string]any {
		return []map[string]any{
			{"opcode": "createNodes", "count": nodes,
				"labelNodePrepareStrategy": map[string]any{"labelKey": twin.DefaultHwLabel, "labelValues": []string{"true"}}},
			{"opcode": "createPods", "count": nodes, "collectMetrics": true, "namespace": measureNamespace,
				"podTemplatePath": filepath.Join(dir, "pod-saturation.yaml"), "signatureBatchSize": batch},
		}
	}}
}

// isBatching: the workload is one of upstream's batching scenarios.
func isBatching(sh shape) bool { return sh.noDefaultSpread }

func shapes(full bool) []shape {
	if full {
		return []shape{
			basic("Basic500", 500, 500, 1000),
			basic("Basic5000", 5000, 1000, 1000),
			mixed("Mixed500", 500, 500, 500),
			mixed("Mixed5000", 5000, 1000, 1000),
			noHints("NoHints500", 500, 500, 1000),
			noHints("NoHints5000", 5000, 1000, 1000),
			scoreOnly("ScoreOnly500", 500, 500, 1000),
			scoreOnly("ScoreOnly5000", 5000, 1000, 1000),
			compute("Compute500", 500, 500, 1000),
			compute("Compute5000", 5000, 1000, 1000),
			preemption("Preemption500", 500, 2000, 100),
			batching("Batching1000", 1000, 100),
			batching("Batching3000", 3000, 100),
			devices("Devices500", 500, 500, 1000),
		}
	}
	return []shape{
		basic("Basic", 20, 20, 60),
		mixed("Mixed", 20, 20, 60),
		noHints("NoHints", 20, 20, 60),
		scoreOnly("ScoreOnly", 20, 20, 60),
		compute("Compute", 20, 20, 60),
		preemption("Preemption", 5, 20, 5),
		batching("Batching", 20, 10),
		devices("Devices", 20, 20, 60),
	}
}

// run is one (workload, variant, repetition): one scheduler_perf test case
// with its own etcd, apiserver and scheduler (and host for native).
type run struct {
	ID      string `json:"id"`
	Shape   string `json:"workload"`
	Variant string `json:"variant"`
	Rep     int    `json:"rep"`
	shape   shape
}

// plan is the run order: repetitions outermost, then workloads, then the
// variants, rotated by one every repetition so that no variant always runs
// first (the machine's load drifts; interleaving keeps ratios fair).
func plan(shs []shape, variants []string, reps int) []*run {
	var out []*run
	for r := 1; r <= reps; r++ {
		for _, sh := range shs {
			for i := range variants {
				v := variants[(i+r-1)%len(variants)]
				if !runsVariant(sh, v) {
					continue
				}
				out = append(out, &run{ID: fmt.Sprintf("%s_%s_r%d", sh.Name, v, r), Shape: sh.Name, Variant: v, Rep: r, shape: sh})
			}
		}
	}
	return out
}

// options is what the environment asks for.
type options struct {
	Full      bool
	Reps      int
	Shapes    []shape
	Variants  []string
	OutDir    string
	RepoRoot  string
	SizeLabel string
}

func optionsFromEnv(repoRoot string) (options, error) {
	o := options{RepoRoot: repoRoot, SizeLabel: "short", Reps: 1}
	switch v := os.Getenv(EnvSize); v {
	case "", "short":
	case "full":
		o.Full, o.SizeLabel, o.Reps = true, "full", 3
	default:
		return o, fmt.Errorf("%s=%q: use \"short\" or \"full\"", EnvSize, v)
	}
	if v := os.Getenv(EnvReps); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return o, fmt.Errorf("%s=%q: want a positive number of repetitions", EnvReps, v)
		}
		o.Reps = n
	}
	o.Shapes = shapes(o.Full)
	if v := os.Getenv(EnvWorkloads); v != "" {
		var keep []shape
		var names []string
		for _, sh := range o.Shapes {
			names = append(names, sh.Name)
			for _, w := range strings.Split(v, ",") {
				if strings.TrimSpace(w) == sh.Name {
					keep = append(keep, sh)
				}
			}
		}
		if len(keep) == 0 {
			return o, fmt.Errorf("%s=%q names no workload of the %s suite; choose from %s", EnvWorkloads, v, o.SizeLabel, strings.Join(names, ","))
		}
		o.Shapes = keep
	}
	o.Variants = allVariants
	if v := os.Getenv(EnvVariants); v != "" {
		o.Variants = nil
		for _, w := range strings.Split(v, ",") {
			w = strings.TrimSpace(w)
			switch w {
			case VariantDefault, VariantTwin, VariantNative, VariantNativeGRPC, VariantExtender, VariantNativeAllNodes, VariantNativeNoReuse, VariantNativeSimAnnot, VariantNativeNoAhead:
				o.Variants = append(o.Variants, w)
			default:
				return o, fmt.Errorf("%s=%q: unknown variant %q; choose from %s", EnvVariants, v, w, strings.Join(append(allVariants, optionalVariants...), ","))
			}
		}
	}
	o.OutDir = os.Getenv(EnvOut)
	if o.OutDir == "" {
		o.OutDir = filepath.Join(repoRoot, "build", "perf")
	}
	return o, nil
}

// Templates written next to the generated configuration.
var templates = map[string]string{
	"node-dedicated.yaml": `apiVersion: v1
kind: Node
metadata:
  generateName: scheduler-perf-dedicated-
  labels:
    ` + twin.DefaultDedicatedLabel + `: "true"
    ` + twin.DefaultHwLabel + `: "true"
spec: {}
status:
  capacity:
    pods: "110"
    cpu: "4"
    memory: 32Gi
  conditions:
  - status: "True"
    type: Ready
  phase: Running
`,
	// Every third pod requires hardware encryption, every fifth may run
	// on dedicated nodes.
	"pod-mixed.yaml": annotatedPod("pod-mixed-", `    perf.schedplug.io/index: "{{.Index}}"
{{- if eq (Mod .Index 3) 0 }}
    `+twin.DefaultHwAnnotation+`: "true"
{{- end }}
{{- if eq (Mod .Index 5) 0 }}
    `+twin.DefaultDedicatedAnnotation+`: "true"
{{- end }}
`, "100m", "500Mi"),
	// upstream's templates/pod-saturation.yaml, with the annotation that
	// makes HwEncrypt filter.
	"pod-saturation.yaml": annotatedPod("pod-saturation-", `    `+twin.DefaultHwAnnotation+`: "true"
`, "3", "1Gi"),
	// 100m CPU as upstream's pod-default.yaml, and DeviceShare's request:
	// 1 device for even indices, 2 for odd ones.
	"pod-devices.yaml": annotatedPod("pod-devices-", `    `+twin.DeviceRequest+`: "{{ if eq (Mod .Index 2) 0 }}1{{ else }}2{{ end }}"
`, "100m", "500Mi"),
	"pod-low-priority.yaml": `apiVersion: v1
kind: Pod
metadata:
  generateName: pod-low-
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - image: registry.k8s.io/pause:3.10.2
    name: pause
    resources:
      requests:
        cpu: 900m
        memory: 500Mi
`,
	"pod-high-priority.yaml": `apiVersion: v1
kind: Pod
metadata:
  generateName: pod-high-
spec:
  priority: 10
  containers:
  - image: registry.k8s.io/pause:3.10.2
    name: pause
    resources:
      requests:
        cpu: 3000m
        memory: 500Mi
`,
}

// annotatedPod is a pod template with annotations (YAML lines, indented
// for metadata.annotations) and one pause container requesting cpu and
// memory.
func annotatedPod(generateName, annotations, cpu, memory string) string {
	return `apiVersion: v1
kind: Pod
metadata:
  generateName: ` + generateName + `
  annotations:
` + annotations + `spec:
  containers:
  - image: registry.k8s.io/pause:3.10.2
    name: pause
    resources:
      requests:
        cpu: ` + cpu + `
        memory: ` + memory + `
`
}

// schedulerConfig is the KubeSchedulerConfiguration of a workload's
// variant. The native one is read by the in-process scheduler and by
// schedplug-host.
func schedulerConfig(sh shape, variant, dir string) ([]byte, error) {
	profile := map[string]any{"schedulerName": "default-scheduler"}
	var names []string
	var pc []any
	if sh.noDefaultSpread {
		pc = append(pc, map[string]any{"name": "PodTopologySpread", "args": map[string]any{"defaultingType": "List", "defaultConstraints": []any{}}})
	}
	switch variant {
	case VariantTwin:
		for _, n := range sh.plugins {
			names = append(names, twinOf[n])
			if args := sampleArgs(n, dir); len(args) > 0 {
				pc = append(pc, map[string]any{"name": twinOf[n], "args": args})
			}
		}
	case VariantNative, VariantNativeGRPC, VariantNativeAllNodes, VariantNativeNoReuse, VariantNativeSimAnnot, VariantNativeNoAhead:
		names = sh.plugins
		for i, n := range sh.plugins {
			args := sampleArgs(n, dir)
			// A generous per-call timeout: on a loaded shared machine the
			// default 100ms would now and then apply the failure policy,
			// which measures retries rather than the plugin path.
			shim := map[string]any{"timeout": "2s"}
			if variant == VariantNativeSimAnnot && i == 0 {
				shim["simulatorAnnotations"] = true
			}
			args["schedplug"] = shim
			pc = append(pc, map[string]any{"name": n, "args": args})
		}
	}
	if len(pc) > 0 {
		profile["pluginConfig"] = pc
	}
	if len(names) > 0 {
		var enabled []any
		for _, n := range names {
			enabled = append(enabled, map[string]any{"name": n})
		}
		profile["plugins"] = map[string]any{"multiPoint": map[string]any{"enabled": enabled}}
	}
	cfg := map[string]any{
		"apiVersion": "kubescheduler.config.k8s.io/v1",
		"kind":       "KubeSchedulerConfiguration",
		"profiles":   []any{profile},
	}
	if variant == VariantExtender {
		ext := map[string]any{
			"urlPrefix":        extenderURL(),
			"nodeCacheCapable": false,
			"httpTimeout":      "30s",
		}
		if !isScoreOnly(sh) {
			ext["filterVerb"] = "filter"
		}
		if slices.Contains(sh.plugins, "NetworkLatency") {
			ext["prioritizeVerb"] = "prioritize"
			ext["weight"] = 1
		}
		cfg["extenders"] = []any{ext}
	}
	return yaml.Marshal(cfg)
}

// writeConfig writes the templates, one scheduler configuration per
// variant and scheduler_perf's test-case file (one test case per run, in
// plan order) into dir, and returns the test-case file.
func writeConfig(dir string, runs []*run) (string, map[string]string, error) {
	for name, body := range templates {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return "", nil, fmt.Errorf("writing template %s: %w", name, err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, latencyFile), []byte(latencyFileText), 0o644); err != nil {
		return "", nil, fmt.Errorf("writing %s: %w", latencyFile, err)
	}
	configs := map[string]string{}
	for _, r := range runs {
		key := configKey(r.Shape, r.Variant)
		if _, done := configs[key]; done {
			continue
		}
		data, err := schedulerConfig(r.shape, r.Variant, dir)
		if err != nil {
			return "", nil, err
		}
		file := filepath.Join(dir, "scheduler-"+r.Shape+"-"+r.Variant+".yaml")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			return "", nil, fmt.Errorf("writing %s: %w", file, err)
		}
		configs[key] = file
	}
	var cases []any
	for _, r := range runs {
		cases = append(cases, map[string]any{
			"name":                   r.ID,
			"labels":                 []string{"performance", "short"},
			"schedulerConfigPath":    configs[configKey(r.Shape, r.Variant)],
			"defaultPodTemplatePath": filepath.Join(dir, "pod-default.yaml"),
			"workloadTemplate":       r.shape.ops(dir),
			"workloads":              []any{map[string]any{"name": r.ID}},
		})
	}
	data, err := yaml.Marshal(cases)
	if err != nil {
		return "", nil, err
	}
	file := filepath.Join(dir, "performance-config.yaml")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		return "", nil, fmt.Errorf("writing %s: %w", file, err)
	}
	return file, configs, nil
}

// sampleArgs are a sample plugin's own args, the same for it and its twin.
func sampleArgs(plugin, dir string) map[string]any {
	args := map[string]any{}
	switch plugin {
	case "NetworkLatency":
		args["latencyFile"] = filepath.Join(dir, latencyFile)
	case "ShapeFit":
		args["resolution"] = computeResolution
		args["shapes"] = computeShapes
	case "DeviceShare":
		// Every run starts a fresh host that no earlier instance gave
		// devices from, so nothing needs the default 10 s of settling
		// (the twin ignores the arg); the shortest duration the arg takes.
		args["startupSettle"] = "1ns"
	}
	return args
}

// configKey names the scheduler configuration of a workload's variant.
func configKey(workload, variant string) string { return workload + "/" + variant }

func init() {
	// upstream's templates/pod-default.yaml, used by SchedulingBasic.
	templates["pod-default.yaml"] = `apiVersion: v1
kind: Pod
metadata:
  generateName: pod-
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.2
    name: pause
    ports:
    - containerPort: 80
    resources:
      limits:
        cpu: 100m
        memory: 500Mi
      requests:
        cpu: 100m
        memory: 500Mi
`
}
