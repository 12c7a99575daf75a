package shim

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
)

func TestParseArgs(t *testing.T) {
	for _, c := range []struct {
		name    string
		raw     string
		want    Policy
		wantErr string
	}{
		{name: "no args", raw: "", want: DefaultPolicy()},
		{name: "plugin args only", raw: `{"zones":["a"]}`, want: DefaultPolicy()},
		{name: "both", raw: `{"schedplug":{"failurePolicy":"Ignore","timeout":"250ms"},"x":1}`, want: Policy{FailurePolicy: FailurePolicyIgnore, Timeout: 250 * time.Millisecond}},
		{name: "timeout only", raw: `{"schedplug":{"timeout":"1s"}}`, want: Policy{FailurePolicy: FailurePolicyFail, Timeout: time.Second}},
		// The pin is schedplug-host's business: accepted and ignored.
		{name: "sha256 pin", raw: `{"schedplug":{"sha256":"3b1fe9","failurePolicy":"Ignore"}}`, want: Policy{FailurePolicy: FailurePolicyIgnore, Timeout: DefaultTimeout}},
		{name: "bad policy", raw: `{"schedplug":{"failurePolicy":"ignore"}}`, wantErr: `failurePolicy is "ignore"; use "Fail" or "Ignore"`},
		{name: "bad timeout", raw: `{"schedplug":{"timeout":"100"}}`, wantErr: `timeout "100" is not a duration`},
		{name: "zero timeout", raw: `{"schedplug":{"timeout":"0s"}}`, wantErr: "out of range"},
		{name: "sub-millisecond timeout", raw: `{"schedplug":{"timeout":"1500us"}}`, wantErr: "whole milliseconds"},
		{name: "huge timeout", raw: `{"schedplug":{"timeout":"2m"}}`, wantErr: "out of range"},
		{name: "simulator annotations", raw: `{"schedplug":{"simulatorAnnotations":true}}`, want: Policy{FailurePolicy: FailurePolicyFail, Timeout: DefaultTimeout, SimulatorAnnotations: On}},
		{name: "simulator annotations off", raw: `{"schedplug":{"simulatorAnnotations":false}}`, want: Policy{FailurePolicy: FailurePolicyFail, Timeout: DefaultTimeout, SimulatorAnnotations: Off}},
		{name: "simulator annotations not a boolean", raw: `{"schedplug":{"simulatorAnnotations":"yes"}}`, wantErr: `args.schedplug.simulatorAnnotations is "yes"; write true`},
		{name: "unknown key", raw: `{"schedplug":{"failurepolicy":"Fail"}}`, wantErr: "allowed keys: failurePolicy, timeout, sha256, shadow, simulatorAnnotations"},
		{name: "not an object", raw: `[1]`, wantErr: "must be an object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var args runtime.Object
			if c.raw != "" {
				args = &runtime.Unknown{Raw: []byte(c.raw), ContentType: runtime.ContentTypeJSON}
			}
			got, err := ParseArgs("HwEncrypt", args)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), `plugin "HwEncrypt"`) {
					t.Fatalf("err %v, want one containing %q and the plugin name", err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}
