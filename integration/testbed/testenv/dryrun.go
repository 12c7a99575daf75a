package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// DryRunner applies objects to an apiserver with a server-side dry run
// (server-side apply, the apiserver's strict field validation), so a typo,
// an unknown field or a kind the server does not serve is an error while
// nothing is stored.
type DryRunner struct {
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

// NewDryRunner talks to the apiserver cfg points at.
func NewDryRunner(cfg *rest.Config) (*DryRunner, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &DryRunner{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))}, nil
}

// Apply dry-runs obj; the error says why the apiserver refused it.
func (d *DryRunner) Apply(ctx context.Context, obj *unstructured.Unstructured) error {
	gvk := obj.GroupVersionKind()
	mapping, err := d.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fmt.Errorf("the apiserver does not serve %s: %w", gvk, err)
	}
	_, err = d.dyn.Resource(mapping.Resource).Namespace(obj.GetNamespace()).Apply(ctx, obj.GetName(), obj,
		metav1.ApplyOptions{FieldManager: "schedplug-e2e", DryRun: []string{metav1.DryRunAll}, Force: true})
	if err != nil {
		return fmt.Errorf("server-side dry run rejected it: %w", err)
	}
	return nil
}

// DecodeObjects decodes every non-empty YAML (or JSON) document of data.
func DecodeObjects(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("not valid YAML: %w", err)
		}
		if len(obj.Object) != 0 {
			out = append(out, obj)
		}
	}
}
