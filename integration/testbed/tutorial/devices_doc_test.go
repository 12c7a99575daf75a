package tutorial

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"schedplug.dev/integration/testbed/testenv"
)

// quote is a "```lang from=PATH" block of docs/tutorial-devices.md: code
// copied from a file of the repository.
var quote = regexp.MustCompile("(?s)```[a-z]+ from=(\\S+)\n(.*?)\n```")

// TestDevicesChapterQuotesTheSample keeps docs/tutorial-devices.md true to
// the DeviceShare sample: every block it says it copied from a file is in
// that file, verbatim, and the keys and reasons it names are the plugin's.
func TestDevicesChapterQuotesTheSample(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "tutorial-devices.md"))
	if err != nil {
		t.Fatal(err)
	}
	quotes := quote.FindAllStringSubmatch(string(doc), -1)
	if len(quotes) < 5 {
		t.Fatalf("docs/tutorial-devices.md has %d blocks copied from a file (```cpp from=PATH); the chapter quotes the plugin's hooks", len(quotes))
	}
	sources := map[string]string{}
	for _, q := range quotes {
		path, text := q[1], q[2]
		if _, ok := sources[path]; !ok {
			src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
			if err != nil {
				t.Fatalf("docs/tutorial-devices.md quotes %s: %v", path, err)
			}
			sources[path] = string(src)
		}
		if !strings.Contains(sources[path], text) {
			first, _, _ := strings.Cut(text, "\n")
			t.Errorf("docs/tutorial-devices.md quotes %s, which no longer holds the block that starts %q: copy it again", path, first)
		}
	}
	src, err := os.ReadFile(filepath.Join(root, "plugins", "device-share", "device_ledger.hpp"))
	if err != nil {
		t.Fatal(err)
	}
	plugin, err := os.ReadFile(filepath.Join(root, "plugins", "device-share", "device_share.cpp"))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"devices.schedplug.dev/count", "devices.schedplug.dev/request", "devices.schedplug.dev/assigned"} {
		if !strings.Contains(string(src), `"`+key+`"`) || !strings.Contains(string(doc), key) {
			t.Errorf("the key %s is not both in device_ledger.hpp and in the chapter", key)
		}
	}
	for _, reason := range []string{"node(s) had too few free devices", "node(s) had fewer devices than the pod requests"} {
		if !strings.Contains(string(plugin), `"`+reason+`"`) || !strings.Contains(string(doc), reason) {
			t.Errorf("the reason %q is not both in device_share.cpp and in the chapter", reason)
		}
	}
}
