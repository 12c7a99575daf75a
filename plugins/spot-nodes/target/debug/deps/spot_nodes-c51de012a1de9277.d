/work/main/plugins/spot-nodes/target/debug/deps/spot_nodes-c51de012a1de9277.d: src/lib.rs Cargo.toml

/work/main/plugins/spot-nodes/target/debug/deps/libspot_nodes-c51de012a1de9277.rmeta: src/lib.rs Cargo.toml

src/lib.rs:
Cargo.toml:

# env-dep:CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__
# env-dep:CLIPPY_CONF_DIR
