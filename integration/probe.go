package integration

import (
	_ "go.etcd.io/etcd/server/v3/embed"
	_ "google.golang.org/grpc"
	_ "google.golang.org/protobuf/proto"
	_ "k8s.io/client-go/kubernetes"
	_ "k8s.io/kube-scheduler/framework"
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
)
