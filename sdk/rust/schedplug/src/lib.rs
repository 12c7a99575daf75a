//! Rust bindings for schedplug, the C ABI of out-of-tree Kubernetes
//! scheduler plugins (`sdk/include/schedplug/plugin.h`).
//!
//! [`abi`] is the raw ABI, one to one with the header.

pub mod abi;
