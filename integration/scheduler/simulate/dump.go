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
// the apiserver would give each node.
func ReadNodes(file string) ([]*v1.Node, error) {
	objs, err := Objects(file, "Node", "kubectl get nodes -o yaml")
	if err != nil {
		return nil, err
	}
	var out []*v1.Node
	seen := map[string]bool{}
	for i, data := range objs {
		n := &v1.Node{}
		if err := json.Unmarshal(data, n); err != nil {
			return nil, fmt.Errorf("%s: node %d: %w; fix the file (`kubectl get nodes -o yaml` writes valid nodes)", file, i+1, err)
		}
		if n.Name == "" {
			return nil, fmt.Errorf("%s: node %d has no metadata.name", file, i+1)
		}
		if seen[n.Name] {
			return nil, fmt.Errorf("%s: node %q appears twice; keep one", file, n.Name)
		}
		seen[n.Name] = true
		clean(&n.ObjectMeta.ResourceVersion, &n.ObjectMeta.ManagedFields)
		if n.UID == "" {
			n.UID = stableUID("node/" + n.Name)
		}
		k8sv1.SetObjectDefaults_Node(n)
		out = append(out, n)
	}
	return out, nil
}

// ReadPods reads a `kubectl get pods -A -o yaml` dump, with the defaults
// the apiserver would give each pod (namespace "default", schedulerName
// "default-scheduler", ...).
func ReadPods(file string) ([]*v1.Pod, error) {
	objs, err := Objects(file, "Pod", "kubectl get pods -A -o yaml")
	if err != nil {
		return nil, err
	}
	var out []*v1.Pod
	seen := map[string]bool{}
	for i, data := range objs {
		p := &v1.Pod{}
		if err := json.Unmarshal(data, p); err != nil {
			return nil, fmt.Errorf("%s: pod %d: %w; fix the file (`kubectl get pods -o yaml` writes valid pods)", file, i+1, err)
		}
		if p.Name == "" {
			return nil, fmt.Errorf("%s: pod %d has no metadata.name", file, i+1)
		}
		if p.Namespace == "" {
			p.Namespace = "default"
		}
		key := p.Namespace + "/" + p.Name
		if seen[key] {
			return nil, fmt.Errorf("%s: pod %s appears twice; keep one", file, key)
		}
		seen[key] = true
		clean(&p.ObjectMeta.ResourceVersion, &p.ObjectMeta.ManagedFields)
		if p.UID == "" {
			p.UID = stableUID("pod/" + key)
		}
		k8sv1.SetObjectDefaults_Pod(p)
		out = append(out, p)
	}
	return out, nil
}

// clean drops what the in-memory API sets itself.
func clean[T any](resourceVersion *string, managedFields *[]T) {
	*resourceVersion = ""
	*managedFields = nil
}

// stableUID gives an object the dump left without a uid the same one on
// every run, so that runs compare.
func stableUID(name string) types.UID {
	return types.UID(uuid.NewSHA1(uuid.NameSpaceURL, []byte("schedplug-simulate:"+name)).String())
}
