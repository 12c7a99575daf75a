/work/main/plugins/spot-nodes/target/debug/deps/spot_nodes-cf2a2652bce30961.d: tests/spot_nodes.rs Cargo.toml

/work/main/plugins/spot-nodes/target/debug/deps/libspot_nodes-cf2a2652bce30961.rmeta: tests/spot_nodes.rs Cargo.toml

tests/spot_nodes.rs:
Cargo.toml:

# env-dep:CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__
# env-dep:CLIPPY_CONF_DIR
