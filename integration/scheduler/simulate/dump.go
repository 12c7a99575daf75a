package simulate

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/google/uuid"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	k8sv1 "k8s.io/kubernetes/pkg/apis/core/v1"
	"sigs.k8s.io/yaml"
)

// Objects returns the objects of `kind` in file as JSON: YAML documents
// holding one object each, or Lists of them (kind List or <kind>List), as
// `kubectl` (the command named for messages) prints them.
func Objects(file, kind, kubectl string) ([][]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("reading the %ss: %w", strings.ToLower(kind), err)
	}
	defer f.Close()
	var out [][]byte
	r := utilyaml.NewYAMLReader(bufio.NewReader(f))
	for doc := 1; ; doc++ {
		data, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", file, doc, err)
		}
		js, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d is not valid YAML: %w", file, doc, err)
		}
		var head struct {
			Kind  string            `json:"kind"`
			Items []json.RawMessage `json:"items"`
		}
		if string(js) == "null" {
			continue
		}
		if err := json.Unmarshal(js, &head); err != nil {
			return nil, fmt.Errorf("%s: document %d is not a Kubernetes object: %w", file, doc, err)
		}
		switch head.Kind {
		case kind:
			out = append(out, js)
		case "List", kind + "List":
			for _, item := range head.Items {
				out = append(out, item)
			}
		default:
			return nil, fmt.Errorf("%s: document %d has kind %q; give %s objects or a List of them, as `%s` prints", file, doc, head.Kind, kind, kubectl)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no %s objects; give them as `%s` prints", file, kind, kubectl)
	}
	return out, nil
}

// ReadNodes reads a `kubectl get nodes -o yaml` dump, with the defaults
// the API server would give each node.
func ReadNodes(file string) ([]*v1.Node, error) {
	return read(file, "Node", "kubectl get nodes -o yaml", k8sv1.SetObjectDefaults_Node)
}

// ReadPods reads a `kubectl get pods -A -o yaml` dump, with the defaults
// the API server would give each pod (namespace "default", schedulerName
// "default-scheduler", ...).
func ReadPods(file string) ([]*v1.Pod, error) {
	return read(file, "Pod", "kubectl get pods -A -o yaml", func(p *v1.Pod) {
		if p.Namespace == "" {
			p.Namespace = "default"
		}
		k8sv1.SetObjectDefaults_Pod(p)
	})
}

// read decodes the objects of a dump, gives each what the API server
// would (defaults from `prepare`, a uid when it has none) and drops what
// the in-memory API sets itself.
func read[T any, P interface {
	*T
	metav1.Object
}](file, kind, kubectl string, prepare func(P)) ([]P, error) {
	objs, err := Objects(file, kind, kubectl)
	if err != nil {
		return nil, err
	}
	what := strings.ToLower(kind)
	var out []P
	seen := map[string]bool{}
	for i, data := range objs {
		obj := P(new(T))
		if err := json.Unmarshal(data, obj); err != nil {
			return nil, fmt.Errorf("%s: %s %d: %w; fix the file (`%s` writes valid ones)", file, what, i+1, err, kubectl)
		}
		if obj.GetName() == "" {
			return nil, fmt.Errorf("%s: %s %d has no metadata.name", file, what, i+1)
		}
		prepare(obj)
		name := obj.GetName()
		if ns := obj.GetNamespace(); ns != "" {
			name = ns + "/" + name
		}
		if seen[name] {
			return nil, fmt.Errorf("%s: %s %s appears twice; keep one", file, what, name)
		}
		seen[name] = true
		obj.SetResourceVersion("")
		obj.SetManagedFields(nil)
		if obj.GetUID() == "" {
			obj.SetUID(stableUID(what + "/" + name))
		}
		out = append(out, obj)
	}
	return out, nil
}

// stableUID gives an object the dump left without a uid the same one on
// every run, so that runs compare.
func stableUID(name string) types.UID {
	return types.UID(uuid.NewSHA1(uuid.NameSpaceURL, []byte("schedplug-simulate:"+name)).String())
}
