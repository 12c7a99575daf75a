package main

import (
	"os"
	"path/filepath"
	"testing"
)

// The committed constants are what plugin.h says today.
func TestConstantsMatchPluginH(t *testing.T) {
	header, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "..", "sdk", "include", "schedplug", "plugin.h"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := render(header)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "constants.go"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("integration/scheduler/shim/abi/constants.go differs from sdk/include/schedplug/plugin.h; run `go generate ./scheduler/shim/abi/` in integration/ and commit the result.\nwant:\n%s", want)
	}
}

// A header whose bits do not add up is refused, not silently half-read.
func TestRenderRefusesAnUnexpectedHeader(t *testing.T) {
	if _, err := render([]byte("#define SCHEDPLUG_DATA_POD_NODE_NAME (1ull << 0)\n#define SCHEDPLUG_DATA_ALL ((1ull << 2) - 1)\n")); err == nil {
		t.Fatal("render accepted a header whose DATA_ALL covers more bits than it defines")
	}
}
