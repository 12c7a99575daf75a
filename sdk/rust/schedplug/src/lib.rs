//! Rust bindings for schedplug, the C ABI of out-of-tree Kubernetes
//! scheduler plugins (`sdk/include/schedplug/plugin.h`).
//!
//! [`abi`] is the raw ABI, one to one with the header. The rest is a safe
//! layer over it: views of the pod and node ([`Pod`], [`Node`]), the
//! [`Status`] a hook returns, and the [`Plugin`] trait with
//! [`export_plugin!`], which builds the descriptor and its C entry point.
//! Plugin code needs no `unsafe`:
//!
//! ```
//! use schedplug::{Create, Node, Plugin, Pod, Status};
//!
//! /// Keeps pods that ask for a zone (annotation "zone") in that zone.
//! struct ZoneRequired;
//!
//! impl Plugin for ZoneRequired {
//!     type PodState = ();
//!
//!     fn create(_ctx: &Create<'_>) -> Result<Self, Status> {
//!         Ok(ZoneRequired)
//!     }
//!
//!     fn filter(&self, pod: &Pod<'_>, node: &Node<'_>, _state: &()) -> Status {
//!         let wanted = match pod.annotations().get("zone") {
//!             Some(zone) => zone,
//!             None => return Status::success(),
//!         };
//!         if node.labels().get("topology.kubernetes.io/zone") == Some(wanted) {
//!             Status::success()
//!         } else {
//!             Status::unschedulable("node(s) in another zone")
//!         }
//!     }
//! }
//!
//! // In a crate with `crate-type = ["cdylib"]`, this is the whole export.
//! schedplug::export_plugin!(
//!     ZoneRequired,
//!     name = "ZoneRequired",
//!     version = "1.0.0",
//!     hooks = [filter]
//! );
//! # fn main() {
//! #     let d = unsafe { &*schedplug_plugin_v1() };
//! #     assert!(d.filter.is_some() && d.score.is_none());
//! # }
//! ```

pub mod abi;
pub mod args;
pub mod export;
pub mod plugin;
pub mod status;
pub mod testing;
pub mod view;

pub use args::{Args, ArgsError};
pub use plugin::{Create, Gates, Host, LogLevel, NodeScore, Normalize, Plugin, PodPatch, Settings};
pub use status::Status;
pub use view::{
    Container, ContainerPort, KeyValues, LabelSelector, List, Node, NodeCondition, NodeImage,
    NodePod, NodeSelectorTerm, Owner, Pod, PodAffinityTerm, Requirement, Requirements, Resources,
    Strings, Taint, Toleration, TopologySpreadConstraint, Volume,
};

// The README's examples are doctests too.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
