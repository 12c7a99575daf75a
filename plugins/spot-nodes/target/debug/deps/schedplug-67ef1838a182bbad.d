/work/main/plugins/spot-nodes/target/debug/deps/schedplug-67ef1838a182bbad.d: /work/main/sdk/rust/schedplug/src/lib.rs /work/main/sdk/rust/schedplug/src/abi.rs /work/main/sdk/rust/schedplug/src/args.rs /work/main/sdk/rust/schedplug/src/export.rs /work/main/sdk/rust/schedplug/src/plugin.rs /work/main/sdk/rust/schedplug/src/status.rs /work/main/sdk/rust/schedplug/src/testing.rs /work/main/sdk/rust/schedplug/src/testing/events.rs /work/main/sdk/rust/schedplug/src/testing/host.rs /work/main/sdk/rust/schedplug/src/view.rs

/work/main/plugins/spot-nodes/target/debug/deps/libschedplug-67ef1838a182bbad.rmeta: /work/main/sdk/rust/schedplug/src/lib.rs /work/main/sdk/rust/schedplug/src/abi.rs /work/main/sdk/rust/schedplug/src/args.rs /work/main/sdk/rust/schedplug/src/export.rs /work/main/sdk/rust/schedplug/src/plugin.rs /work/main/sdk/rust/schedplug/src/status.rs /work/main/sdk/rust/schedplug/src/testing.rs /work/main/sdk/rust/schedplug/src/testing/events.rs /work/main/sdk/rust/schedplug/src/testing/host.rs /work/main/sdk/rust/schedplug/src/view.rs

/work/main/sdk/rust/schedplug/src/lib.rs:
/work/main/sdk/rust/schedplug/src/abi.rs:
/work/main/sdk/rust/schedplug/src/args.rs:
/work/main/sdk/rust/schedplug/src/export.rs:
/work/main/sdk/rust/schedplug/src/plugin.rs:
/work/main/sdk/rust/schedplug/src/status.rs:
/work/main/sdk/rust/schedplug/src/testing.rs:
/work/main/sdk/rust/schedplug/src/testing/events.rs:
/work/main/sdk/rust/schedplug/src/testing/host.rs:
/work/main/sdk/rust/schedplug/src/view.rs:
