/work/main/plugins/spot-nodes/target/debug/deps/spot_nodes-eed434fd6d26665c.d: src/lib.rs Cargo.toml

/work/main/plugins/spot-nodes/target/debug/deps/libspot_nodes-eed434fd6d26665c.rmeta: src/lib.rs Cargo.toml

src/lib.rs:
Cargo.toml:

# env-dep:CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__
# env-dep:CLIPPY_CONF_DIR
