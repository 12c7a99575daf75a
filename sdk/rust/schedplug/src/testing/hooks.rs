//! The kit's calls of the hooks of plugins that own a resource (ABI v1.6:
//! reserve, unreserve, permit, pre_bind, pre_enqueue) and the host's
//! permit_allow / permit_reject, with the host's rules
//! (`testing/patch_rules.rs`). The twin of
//! `sdk/include/schedplug/testing/hooks.hpp`.

use super::patch_rules::{permit_wait_ms, resource_hook_verdict, PatchBook};
use super::{sent_node, sent_pod, Built, Node, Plugin, Pod, ReasonBuffer};
use crate::abi::*;
use crate::status::Status;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::c_void;
use std::sync::Mutex;

/// What permit() answered: with SCHEDPLUG_WAIT, how long the pod waits
/// (the host's reading: 0 from the plugin is the most).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PermitResult {
    pub status: Status,
    pub timeout_ms: u64,
}

/// What pre_bind() answered, and the labels and annotations it set on the
/// pod, checked as the host checks them (a refused entry makes it an
/// ERROR naming it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreBindResult {
    pub status: Status,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
}

/// A call of permit_allow / permit_reject by the plugin, and the kit's
/// answer as the host's: SUCCESS for a pod whose permit() answered WAIT
/// and that still waits (it stops waiting), SKIP for any other uid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PermitDecision {
    pub uid: String,
    pub allow: bool,
    /// permit_reject's reason.
    pub reason: String,
    pub answer: schedplug_code,
}

/// The pods permit() made wait, and the plugin's decisions.
#[derive(Default)]
pub(super) struct Permits {
    waiting: BTreeSet<String>,
    decisions: Vec<PermitDecision>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn text(s: schedplug_str) -> String {
    if s.data.is_null() || s.len == 0 {
        return String::new();
    }
    // SAFETY: a schedplug_str the plugin passed, valid for the call.
    let bytes = unsafe { std::slice::from_raw_parts(s.data as *const u8, s.len as usize) };
    String::from_utf8_lossy(bytes).into_owned()
}

fn decide(context: *mut c_void, uid: schedplug_str, allow: bool, reason: String) -> schedplug_code {
    if context.is_null() {
        return SCHEDPLUG_ERROR;
    }
    // SAFETY: the context is the Plugin's HostContext, alive until destroy.
    let ctx = unsafe { &*(context as *const super::host::HostContext) };
    let mut permits = lock(&ctx.permits);
    let uid = text(uid);
    let answer = if permits.waiting.remove(&uid) {
        SCHEDPLUG_SUCCESS
    } else {
        SCHEDPLUG_SKIP
    };
    permits.decisions.push(PermitDecision {
        uid,
        allow,
        reason,
        answer,
    });
    answer
}

pub(super) unsafe extern "C" fn permit_allow(
    context: *mut c_void,
    uid: schedplug_str,
) -> schedplug_code {
    decide(context, uid, true, String::new())
}

pub(super) unsafe extern "C" fn permit_reject(
    context: *mut c_void,
    uid: schedplug_str,
    reason: schedplug_str,
) -> schedplug_code {
    // The host cuts the reason as it cuts a hook's.
    let reason = text(reason);
    let cut = crate::status::truncate_reason(&reason, u64::from(SCHEDPLUG_REASON_MAX));
    decide(context, uid, false, cut.to_string())
}

unsafe extern "C" fn set_label(
    context: *mut c_void,
    key: schedplug_str,
    value: schedplug_str,
) -> schedplug_code {
    set(context, true, key, value)
}

unsafe extern "C" fn set_annotation(
    context: *mut c_void,
    key: schedplug_str,
    value: schedplug_str,
) -> schedplug_code {
    set(context, false, key, value)
}

unsafe fn set(
    context: *mut c_void,
    label: bool,
    key: schedplug_str,
    value: schedplug_str,
) -> schedplug_code {
    let bytes = |s: schedplug_str| {
        if s.data.is_null() {
            &[][..]
        } else {
            std::slice::from_raw_parts(s.data as *const u8, s.len as usize)
        }
    };
    let book = &*(context as *const Mutex<PatchBook>);
    lock(book).put(label, bytes(key), bytes(value))
}

impl Plugin {
    pub fn has_reserve(&self) -> bool {
        self.d.reserve.is_some()
    }
    pub fn has_unreserve(&self) -> bool {
        self.d.unreserve.is_some()
    }
    pub fn has_permit(&self) -> bool {
        self.d.permit.is_some()
    }
    pub fn has_pre_bind(&self) -> bool {
        self.d.pre_bind.is_some()
    }
    pub fn has_pre_enqueue(&self) -> bool {
        self.d.pre_enqueue.is_some()
    }

    /// The views a hook gets after a cycle placed the pod: the declared
    /// data, the pod without per-pod state.
    fn placed(
        &self,
        pod: &Built<'_, schedplug_pod>,
        node: &Built<'_, schedplug_node>,
    ) -> (schedplug_pod, schedplug_node) {
        let mut p = sent_pod(pod.raw(), self.data());
        p.state = std::ptr::null_mut();
        (p, sent_node(node.raw(), self.data()))
    }

    fn stop_waiting(&self, pod: &schedplug_pod) {
        lock(&self.ctx.permits).waiting.remove(&text(pod.uid));
    }

    /// reserve() once, as the host calls it after a cycle placed `pod` on
    /// `node`; success without the hook. An unknown code, or WAIT, is an
    /// ERROR as on the host.
    pub fn reserve(
        &self,
        pod: &Built<'_, schedplug_pod>,
        node: &Built<'_, schedplug_node>,
    ) -> Status {
        let f = match self.d.reserve {
            Some(f) => f,
            None => return Status::success(),
        };
        let (p, n) = self.placed(pod, node);
        let mut reason = ReasonBuffer::new();
        // SAFETY: the instance is alive; the views are valid for the call.
        let code = unsafe { f(self.instance, &p, &n, reason.get()) };
        resource_hook_verdict(&self.name, "reserve", code, reason.text(), false)
    }

    /// unreserve() once (nothing without the hook); the pod stops waiting.
    pub fn unreserve(&self, pod: &Built<'_, schedplug_pod>, node: &Built<'_, schedplug_node>) {
        let (p, n) = self.placed(pod, node);
        self.stop_waiting(&p);
        if let Some(f) = self.d.unreserve {
            // SAFETY: as for reserve.
            unsafe { f(self.instance, &p, &n) };
        }
    }

    /// permit() once; success without the hook. A WAIT longer than
    /// SCHEDPLUG_PERMIT_TIMEOUT_MAX_MS is an ERROR saying so; a pod that
    /// waits is remembered for permit_allow / permit_reject until they
    /// name it, or unreserve / pre_bind of the pod.
    pub fn permit(
        &self,
        pod: &Built<'_, schedplug_pod>,
        node: &Built<'_, schedplug_node>,
    ) -> PermitResult {
        let f = match self.d.permit {
            Some(f) => f,
            None => {
                return PermitResult {
                    status: Status::success(),
                    timeout_ms: 0,
                }
            }
        };
        let (p, n) = self.placed(pod, node);
        let mut out = schedplug_permit_result {
            struct_size: std::mem::size_of::<schedplug_permit_result>() as u32,
            ..Default::default()
        };
        let mut reason = ReasonBuffer::new();
        // SAFETY: as for reserve.
        let code = unsafe { f(self.instance, &p, &n, &mut out, reason.get()) };
        let status = resource_hook_verdict(&self.name, "permit", code, reason.text(), true);
        if status.code() != SCHEDPLUG_WAIT {
            return PermitResult {
                status,
                timeout_ms: 0,
            };
        }
        match permit_wait_ms(&self.name, out.timeout_ms) {
            Ok(timeout_ms) => {
                lock(&self.ctx.permits).waiting.insert(text(p.uid));
                PermitResult { status, timeout_ms }
            }
            Err(problem) => PermitResult {
                status: Status::error(problem),
                timeout_ms: 0,
            },
        }
    }

    /// pre_bind() once, the patch checked as the host checks it:
    /// Kubernetes label key and value syntax, annotation keys qualified
    /// names, values of at most SCHEDPLUG_POD_PATCH_VALUE_MAX bytes, at most
    /// SCHEDPLUG_POD_PATCH_MAX entries. A refused entry makes the result an
    /// ERROR naming it (the accepted entries are kept).
    pub fn pre_bind(
        &self,
        pod: &Built<'_, schedplug_pod>,
        node: &Built<'_, schedplug_node>,
    ) -> PreBindResult {
        let (p, n) = self.placed(pod, node);
        self.stop_waiting(&p);
        let f = match self.d.pre_bind {
            Some(f) => f,
            None => {
                return PreBindResult {
                    status: Status::success(),
                    labels: BTreeMap::new(),
                    annotations: BTreeMap::new(),
                }
            }
        };
        let book = Box::new(Mutex::new(PatchBook::default()));
        let mut patch = schedplug_pod_patch {
            struct_size: std::mem::size_of::<schedplug_pod_patch>() as u32,
            reserved: 0,
            context: &*book as *const Mutex<PatchBook> as *mut c_void,
            set_annotation: Some(set_annotation),
            set_label: Some(set_label),
        };
        let mut reason = ReasonBuffer::new();
        // SAFETY: as for reserve; the patch lives through the call.
        let code = unsafe { f(self.instance, &p, &n, &mut patch, reason.get()) };
        let mut status = resource_hook_verdict(&self.name, "pre_bind", code, reason.text(), false);
        let book = book.into_inner().unwrap_or_else(|e| e.into_inner());
        // A refused entry fails the call whatever the plugin returned.
        if let Some(refused) = book.refused {
            let mut why = format!("plugin {}'s pre_bind(): {refused}", self.name);
            if !status.is_success() && !status.reason().is_empty() {
                why += &format!(" (the plugin says: {})", status.reason());
            }
            status = Status::error(why);
        }
        PreBindResult {
            status,
            labels: book.labels,
            annotations: book.annotations,
        }
    }

    /// pre_enqueue() once; success without the hook.
    pub fn pre_enqueue(&self, pod: &Built<'_, schedplug_pod>) -> Status {
        let f = match self.d.pre_enqueue {
            Some(f) => f,
            None => return Status::success(),
        };
        let mut p = sent_pod(pod.raw(), self.data());
        p.state = std::ptr::null_mut();
        let mut reason = ReasonBuffer::new();
        // SAFETY: as for reserve.
        let code = unsafe { f(self.instance, &p, reason.get()) };
        resource_hook_verdict(&self.name, "pre_enqueue", code, reason.text(), false)
    }

    /// The plugin's permit_allow / permit_reject calls so far, in order.
    pub fn permit_decisions(&self) -> Vec<PermitDecision> {
        lock(&self.ctx.permits).decisions.clone()
    }

    /// plugin.h's promise for unreserve(): None when filtering `pod` on
    /// `node` answers the same before and after unreserve() ran twice for
    /// the pod, which was never reserved, and, with a reserve hook, after
    /// reserve() succeeded and unreserve() ran twice; else a sentence
    /// saying which changed. None without an unreserve hook.
    pub fn unreserve_problem(&self, pod: &Pod, node: &Node) -> Option<String> {
        self.d.unreserve?;
        let (pv, nv) = (pod.view(), node.view());
        let n = sent_node(nv.raw(), self.data());
        let before = self.outcome(pv.raw(), &n);
        let where_ = format!(
            "pod \"{}\" on node \"{}\" got {before} before, and ",
            pod.name(),
            node.name()
        );
        self.unreserve(&pv, &nv);
        self.unreserve(&pv, &nv);
        let after = self.outcome(pv.raw(), &n);
        if after != before {
            return Some(format!(
                "plugin {}'s unreserve() is not tolerant: {where_}{after} after unreserve() ran \
                 twice for the pod, which it never reserved; ignore pods you hold nothing for \
                 (kube-scheduler calls unreserve() for every Reserve plugin, a restarted host \
                 for pods it never reserved)",
                self.name
            ));
        }
        if self.d.reserve.is_none() || !self.reserve(&pv, &nv).is_success() {
            return None;
        }
        self.unreserve(&pv, &nv);
        self.unreserve(&pv, &nv);
        let after = self.outcome(pv.raw(), &n);
        (after != before).then(|| {
            format!(
                "plugin {}'s unreserve() does not undo reserve(): {where_}{after} after \
                 reserve() and then unreserve() twice; release exactly what reserve() took, once",
                self.name
            )
        })
    }
}
