//! Rust bindings for schedplug, the C ABI of out-of-tree Kubernetes
//! scheduler plugins (`sdk/include/schedplug/plugin.h`).
//!
//! [`abi`] is the raw ABI, one to one with the header. The rest is a safe
//! layer over it: views of the pod and node ([`Pod`], [`Node`]), the
//! [`Status`] a hook returns, and the [`Plugin`] trait with
//! [`export_plugin!`], which builds the descriptor and its C entry point.

pub mod abi;
pub mod export;
pub mod plugin;
pub mod status;
pub mod view;

pub use plugin::{Create, Gates, LogLevel, NodeScore, Normalize, Plugin};
pub use status::Status;
pub use view::{KeyValues, Node, Pod, Resources, Taint};
