//! A test kit: build pods and nodes in a few lines and run a plugin's
//! exported C entry points the way schedplug-host does (the Rust twin of
//! `sdk/include/schedplug/testing.hpp`).
//!
//! ```
//! use schedplug::abi::SCHEDPLUG_UNSCHEDULABLE;
//! use schedplug::testing::{Node, Pod, Row};
//! # use schedplug::{Create, Plugin, Status};
//! # struct ZoneRequired;
//! # impl Plugin for ZoneRequired {
//! #     type PodState = ();
//! #     fn create(_: &Create<'_>) -> Result<Self, Status> { Ok(ZoneRequired) }
//! #     fn filter(&self, pod: &schedplug::Pod<'_>, node: &schedplug::Node<'_>, _: &()) -> Status {
//! #         match pod.annotations().get("zone") {
//! #             Some(z) if node.labels().get("zone") != Some(z) => Status::unschedulable("node(s) in another zone"),
//! #             _ => Status::success(),
//! #         }
//! #     }
//! # }
//! # schedplug::export_plugin!(ZoneRequired, name = "ZoneRequired", version = "1", hooks = [filter]);
//!
//! // In the plugin crate's tests: its own export_plugin! entry point.
//! let plugin = schedplug::testing::Plugin::load(schedplug_plugin_v1, "{}").unwrap();
//! let pod = Pod::new("web").annotation("zone", "a");
//! let cycle = plugin.run(&pod, &[Node::new("n1").label("zone", "a"),
//!                                Node::new("n2").label("zone", "b")]);
//! cycle.assert_rows(&[
//!     Row::new("n1"),
//!     Row::new("n2").filter(SCHEDPLUG_UNSCHEDULABLE, "node(s) in another zone"),
//! ]);
//! ```
//!
//! What the host does around each call is done here with the host's rules
//! and messages (`sdk/internal/schedplug/runtime.hpp`, which schedplug-host
//! compiles, and `host/plugin/plugin_instance.cpp`): the descriptor checks,
//! create() with the settings it may change and their checks, pod_begin /
//! pod_end (or applies), the status codes a hook may return, the
//! normalization policies and the [0, 100] check, and the promises of
//! SCHEDPLUG_HINT_* (a broken one is an ERROR naming it). Hooks see only
//! the data the plugin declared (SCHEDPLUG_DATA_*), as in a profile where
//! no other plugin declared more. create() gets the host's typed-args
//! services (plugin.h v1.1), read with [`Args`](crate::Args).
//! [`Plugin::open`] loads a plugin file (in any language) with dlopen, as
//! the host does. What the kit does not do: the host's file checks,
//! deadlines, refresh threads and parallel calls.
//!
//! Plugins that own a resource (ABI v1.6): [`Plugin::reserve`],
//! `unreserve`, `permit` (the plugin's permit_allow / permit_reject calls
//! in [`Plugin::permit_decisions`]), `pre_bind` (the patch as maps, checked
//! as the host checks it), `pre_enqueue`, and
//! [`Plugin::unreserve_problem`], the check that unreserve tolerates pods
//! it never reserved and being called twice (`testing/hooks.rs`).
//!
//! Declared events (SCHEDPLUG_EVENT_*): [`Plugin::requeue_problem`] says
//! whether the events a plugin declared requeue a pod it rejected on a node
//! before a change and passes after it; [`Plugin::run_after`] checks that
//! on every node of a cycle; [`change_events`] classifies a change.
//!
//! The kit, one concern a file: `testing/build.rs` the pods and nodes,
//! `testing/cycle.rs` the results and assertions, this file the plugin
//! under test (loading, create, the hooks as the host calls them),
//! `testing/checks.rs` the checks of its hints and declared data,
//! `testing/events.rs` of its declared events, `testing/host.rs` the
//! host's services to create(), `testing/rules.rs` the host's rules. This
//! file stays over 400 lines because the hook calls share one type's state
//! (the instance, its settings, the data it is sent).

use crate::abi::*;
use crate::plugin::NodeScore;
use crate::status::Status;
use crate::view::read_field;
use std::any::Any;
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::mem::size_of;
use std::os::raw::c_char;
use std::ptr;

mod build;
mod checks;
mod cycle;
mod events;
mod hooks;
mod host;
mod patch_rules;
mod rules;
pub use build::*;
use checks::{twin_differs, with_twin};
pub use cycle::*;
pub use events::{change_events, event_names};
pub use hooks::{PermitDecision, PermitResult, PreBindResult};
use host::HostContext;
pub use patch_rules::{pod_annotation_problem, pod_label_problem};
use rules::{accept_descriptor, c_text, copy_keys, no_reason, settings_problem};

/// A host-owned reason buffer for one hook call.
struct ReasonBuffer {
    text: [u8; SCHEDPLUG_REASON_MAX as usize],
    raw: schedplug_reason,
}

impl ReasonBuffer {
    fn new() -> Box<ReasonBuffer> {
        let mut b = Box::new(ReasonBuffer {
            text: [0; SCHEDPLUG_REASON_MAX as usize],
            raw: schedplug_reason::default(),
        });
        b.raw = schedplug_reason {
            text: b.text.as_mut_ptr() as *mut c_char,
            capacity: u64::from(SCHEDPLUG_REASON_MAX),
        };
        b
    }
    fn get(&mut self) -> *mut schedplug_reason {
        &mut self.raw
    }
    /// The text, tolerating a plugin that forgot the NUL.
    fn text(&self) -> String {
        let n = self
            .text
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(self.text.len());
        rules::valid_utf8(&self.text[..n])
    }
}

// ---------------------------------------------------------------------------
// The plugin under test
// ---------------------------------------------------------------------------

/// A plugin's C entry point: the `schedplug_plugin_v1` that
/// [`export_plugin!`](crate::export_plugin) defines.
pub type Entry = extern "C" fn() -> *const schedplug_plugin;

/// Load or create failed: the message schedplug-host would give.
#[derive(Clone, PartialEq, Eq)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

// Debug prints the sentence as is, so `.unwrap()` shows it readably.
impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

/// The label and annotation key the copy of the declared-keys check gains
/// (with the value "x"), unless the plugin declared it.
pub const UNDECLARED_KEY: &str = "schedplug-kit.test/undeclared";

/// A created plugin instance, driven through its descriptor's C hooks as
/// schedplug-host drives it. Dropping it calls destroy().
pub struct Plugin {
    d: schedplug_plugin,
    name: String,
    version: String,
    instance: *mut c_void,
    // Boxed: the plugin may keep the host pointer (the Rust layer does, to
    // log), and the log's context, until destroy.
    host: Box<schedplug_host>,
    settings: Box<schedplug_settings>,
    ctx: Box<HostContext>,
    // The dlopen handle of a plugin loaded from a file (open()).
    handle: *mut c_void,
    // "Name (file)" in the host's messages.
    where_: String,
    label_keys: Vec<String>,
    annotation_keys: Vec<String>,
    extra_data: u64,
}

/// One pod as one plugin sees it during a cycle: whether its filter and
/// score run, the pod view carrying the plugin's state, and the error when
/// pod_begin failed. Dropping it calls pod_end.
pub struct PodScope<'a> {
    pod_end: Option<unsafe extern "C" fn(*mut c_void, *mut c_void)>,
    instance: *mut c_void,
    pod: schedplug_pod,
    runs_filter: bool,
    runs_score: bool,
    ended: bool,
    error: Option<String>,
    _life: PhantomData<&'a ()>,
}

impl<'a> PodScope<'a> {
    /// The pod view to pass to this plugin's filter/score (state set).
    pub fn pod(&self) -> &schedplug_pod {
        &self.pod
    }
    pub fn runs_filter(&self) -> bool {
        self.runs_filter
    }
    pub fn runs_score(&self) -> bool {
        self.runs_score
    }
    /// The host's message when pod_begin failed.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }
}

impl Drop for PodScope<'_> {
    fn drop(&mut self) {
        if let (false, Some(end)) = (self.ended, self.pod_end) {
            // SAFETY: the state is what this instance's pod_begin returned,
            // handed back exactly once.
            unsafe { end(self.instance, self.pod.state) }
        }
    }
}

impl Plugin {
    /// Calls `entry` (the plugin's `schedplug_plugin_v1`), checks the
    /// descriptor as the host does, and creates an instance with
    /// `args_json` (its pluginConfig args). Err: the host's message.
    pub fn load(entry: Entry, args_json: &str) -> Result<Plugin, Error> {
        Plugin::accept(entry(), "schedplug_plugin_v1()", ptr::null_mut(), args_json)
    }

    /// Loads the plugin file `path` (a built `.so`, in any language) as
    /// schedplug-host does: dlopen with RTLD_NOW | RTLD_LOCAL, its
    /// `schedplug_plugin_v1`, the descriptor checks, then create() with
    /// `args_json`. The file stays loaded while the Plugin lives. The
    /// host's file checks (owner, mode, digest) are not made.
    pub fn open(path: &std::path::Path, args_json: &str) -> Result<Plugin, Error> {
        let file = path.display().to_string();
        let c_path = std::ffi::CString::new(path.as_os_str().to_string_lossy().as_bytes())
            .map_err(|_| Error(format!("{file}: the path holds a NUL byte")))?;
        // SAFETY: dlopen and dlsym with NUL-terminated strings; the handle
        // is closed by Drop (or below) once nothing of the object is used.
        unsafe {
            let handle = dl::dlopen(c_path.as_ptr(), dl::RTLD_NOW | dl::RTLD_LOCAL);
            if handle.is_null() {
                let why = dl::dlerror();
                let why = if why.is_null() {
                    "unknown error".to_string()
                } else {
                    c_text(why)
                };
                return Err(Error(format!(
                    "{file}: not a shared object the host can load (dlopen says: {why}); build \
                     the plugin as a shared library (add_library(... MODULE), -shared -fPIC, or \
                     crate-type = [\"cdylib\"]) for this platform, with every symbol it needs \
                     available"
                )));
            }
            let sym = dl::dlsym(handle, b"schedplug_plugin_v1\0".as_ptr() as *const c_char);
            if sym.is_null() {
                dl::dlclose(handle);
                return Err(Error(format!(
                    "{file}: exports no `schedplug_plugin_v1` function, so it is not a \
                     schedplug plugin"
                )));
            }
            let entry: Entry = std::mem::transmute(sym);
            Plugin::accept(entry(), &file, handle, args_json)
        }
    }

    /// As [`load`](Plugin::load), from a descriptor (e.g. what
    /// [`plugin_descriptor!`](crate::plugin_descriptor) returns).
    pub fn from_descriptor(
        descriptor: &'static schedplug_plugin,
        args_json: &str,
    ) -> Result<Plugin, Error> {
        Plugin::accept(
            descriptor,
            "schedplug_plugin_v1()",
            ptr::null_mut(),
            args_json,
        )
    }

    /// `file` names the plugin in messages; `handle` is its dlopen handle
    /// (NULL when linked in), closed with the Plugin.
    fn accept(
        descriptor: *const schedplug_plugin,
        file: &str,
        handle: *mut c_void,
        args_json: &str,
    ) -> Result<Plugin, Error> {
        // SAFETY: a plugin's descriptor is valid for its struct_size, and
        // static; accept_descriptor reads nothing else before checking it.
        let d = match unsafe { accept_descriptor(descriptor) } {
            Ok(d) => d,
            Err(problem) => {
                if !handle.is_null() {
                    // SAFETY: nothing of the object is in use.
                    unsafe { dl::dlclose(handle) };
                }
                return Err(Error(format!("{file}: {problem}")));
            }
        };
        // SAFETY: accept_descriptor checked both strings are set.
        let (name, version) = unsafe { (c_text(d.name), c_text(d.version)) };
        let mut p = Plugin {
            d,
            name,
            version,
            instance: ptr::null_mut(),
            host: Box::default(),
            settings: Box::new(schedplug_settings {
                struct_size: size_of::<schedplug_settings>() as u32,
                refresh_period_ms: d.refresh_period_ms,
                events: d.events,
                normalize_policy: d.normalize_policy,
                ..Default::default()
            }),
            ctx: Box::default(),
            handle,
            where_: String::new(),
            label_keys: Vec::new(),
            annotation_keys: Vec::new(),
            extra_data: 0,
        };
        p.where_ = format!("{} ({file})", p.name);
        p.create(args_json)?;
        Ok(p)
    }

    fn create(&mut self, args_json: &str) -> Result<(), Error> {
        *self.host = schedplug_host {
            struct_size: size_of::<schedplug_host>() as u32,
            context: &*self.ctx as *const HostContext as *mut c_void,
            settings: &mut *self.settings,
            ..Default::default()
        };
        host::install(&mut self.host);
        self.host.args = self.ctx.begin(args_json);
        let where_ = self.where_.clone();
        let mut json = args_json.as_bytes().to_vec();
        json.push(0);
        let mut error = ReasonBuffer::new();
        let create = self.d.create.expect("accept_descriptor checked create");
        // SAFETY: the arguments are what the host passes: NUL-terminated
        // args, a host valid until destroy, an out pointer, a reason buffer.
        let code = unsafe {
            create(
                json.as_ptr() as *const c_char,
                args_json.len() as u64,
                &*self.host,
                &mut self.instance,
                error.get(),
            )
        };
        // The settings and the args are valid during create() only.
        self.host.settings = ptr::null_mut();
        self.host.args = ptr::null();
        self.ctx.end();
        if code != SCHEDPLUG_SUCCESS {
            let mut message = error.text();
            if message.is_empty() {
                message = "(the plugin gave no message)".to_string();
            }
            // No instance: nothing to destroy.
            self.instance = ptr::null_mut();
            return Err(Error(format!(
                "{where_} rejected its args: {message}; fix its pluginConfig args (given: \
                 {args_json})"
            )));
        }
        self.settings.struct_size = size_of::<schedplug_settings>() as u32;
        self.settings.reserved = 0;
        // SAFETY: the key arrays are the instance's, alive now.
        if let Some(problem) = unsafe { settings_problem(&self.d, &self.settings) } {
            return Err(Error(format!(
                "{where_} returned broken settings from create(): {problem} (args given: \
                 {args_json})"
            )));
        }
        // The keys are the instance's memory: copied once, never read again.
        // SAFETY: settings_problem checked the arrays.
        unsafe {
            self.label_keys = copy_keys(
                self.settings.pod_label_keys,
                self.settings.pod_label_key_count,
            );
            self.annotation_keys = copy_keys(
                self.settings.pod_annotation_keys,
                self.settings.pod_annotation_key_count,
            );
        }
        self.settings.pod_label_keys = ptr::null();
        self.settings.pod_annotation_keys = ptr::null();
        Ok(())
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn version(&self) -> &str {
        &self.version
    }
    /// The descriptor as the host copied it.
    pub fn descriptor(&self) -> &schedplug_plugin {
        &self.d
    }
    /// The settings after create() (the descriptor's values as create()
    /// changed them; the key arrays are in [`pod_keys`](Plugin::pod_keys)).
    pub fn settings(&self) -> &schedplug_settings {
        &self.settings
    }
    /// The pod label and annotation keys the plugin declared (v1.4),
    /// sorted, as the host copies them.
    pub fn pod_keys(&self) -> (&[String], &[String]) {
        (&self.label_keys, &self.annotation_keys)
    }
    /// The data (SCHEDPLUG_DATA_*) the hooks see: what the plugin declared,
    /// and what [`send_data`](Plugin::send_data) added.
    pub fn data(&self) -> u64 {
        self.settings.data | self.extra_data
    }
    /// Sends more data, as in a profile where another plugin declared it.
    pub fn send_data(&mut self, bits: u64) -> &mut Plugin {
        self.extra_data |= bits;
        self
    }
    /// What the plugin logged through the host, "<level>: <text>" a line.
    pub fn logs(&self) -> Vec<String> {
        self.ctx
            .logs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
    pub fn has_filter(&self) -> bool {
        self.d.filter.is_some()
    }
    pub fn has_score(&self) -> bool {
        self.d.score.is_some()
    }

    /// Begins `pod` as the host does once per cycle: pod_begin() when the
    /// plugin has one, else applies() for both gates.
    pub fn begin_pod<'a>(&'a self, pod: &'a Built<'_, schedplug_pod>) -> PodScope<'a> {
        self.begin_pod_raw(pod.raw())
    }

    /// [`begin_pod`](Plugin::begin_pod) on a view of your own (shown to the
    /// plugin with only the declared data, like every `*_raw` method).
    pub fn begin_pod_raw<'a>(&'a self, given: &'a schedplug_pod) -> PodScope<'a> {
        self.begin_pod_sending(given, self.data())
    }

    /// [`begin_pod_raw`](Plugin::begin_pod_raw) as a host sending the data
    /// `bits` (SCHEDPLUG_DATA_*) shows the pod.
    fn begin_pod_sending<'a>(&'a self, given: &'a schedplug_pod, bits: u64) -> PodScope<'a> {
        let mut pod = sent_pod(given, bits);
        pod.state = ptr::null_mut();
        let mut scope = PodScope {
            pod_end: self.d.pod_end,
            instance: self.instance,
            pod,
            runs_filter: true,
            runs_score: true,
            ended: true,
            error: None,
            _life: PhantomData,
        };
        let begin = match self.d.pod_begin {
            Some(begin) => begin,
            None => {
                let runs = self.applies_sent(&scope.pod);
                scope.runs_filter = runs;
                scope.runs_score = runs;
                return scope;
            }
        };
        let mut result = schedplug_pod_begin_result {
            struct_size: size_of::<schedplug_pod_begin_result>() as u32,
            ..Default::default()
        };
        let mut reason = ReasonBuffer::new();
        // SAFETY: the instance is alive; the views are valid for the call.
        let code = unsafe { begin(self.instance, &scope.pod, &mut result, reason.get()) };
        if code != SCHEDPLUG_SUCCESS {
            // runtime::pod_begin_error
            scope.error = Some(if code == SCHEDPLUG_ERROR {
                format!(
                    "plugin {} failed to prepare the pod (pod_begin): {}",
                    self.name,
                    no_reason(&reason.text())
                )
            } else {
                format!(
                    "plugin {} returned status code {code} from pod_begin(); it may only \
                     return SUCCESS or ERROR",
                    self.name
                )
            });
            scope.runs_filter = false;
            scope.runs_score = false;
            return scope;
        }
        scope.pod.state = result.state;
        scope.ended = false;
        scope.runs_filter = result.skip & SCHEDPLUG_SKIP_FILTER == 0;
        scope.runs_score = result.skip & SCHEDPLUG_SKIP_SCORE == 0;
        scope
    }

    /// applies(): true without the hook.
    pub fn applies(&self, pod: &Built<'_, schedplug_pod>) -> bool {
        self.applies_sent(&sent_pod(pod.raw(), self.data()))
    }

    fn applies_sent(&self, pod: &schedplug_pod) -> bool {
        match self.d.applies {
            // SAFETY: the instance is alive; the view is valid for the call.
            Some(f) => unsafe { f(self.instance, pod) != 0 },
            None => true,
        }
    }

    /// The filter hook, with no per-pod state (the state pod_begin makes is
    /// passed by [`run`](Plugin::run)), held to the plugin's hints: see
    /// [`filter_raw`](Plugin::filter_raw).
    pub fn filter(
        &self,
        pod: &Built<'_, schedplug_pod>,
        node: &Built<'_, schedplug_node>,
    ) -> Status {
        self.filter_raw(pod.raw(), node.raw())
    }

    /// The filter hook on views of your own. A plugin that promised
    /// SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS is held to it: its filter
    /// runs again on the node without its pods (as a preemption dry run may
    /// see it), and a different verdict is an ERROR. One that promised
    /// SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY is held to that too: a
    /// copy of the pod under another name and uid must get the same
    /// applies / pod_begin / filter results; and one that promised
    /// SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS likewise for a copy
    /// without its undeclared labels and annotations and with an undeclared
    /// one of each ([`UNDECLARED_KEY`]).
    pub fn filter_raw(&self, given: &schedplug_pod, given_node: &schedplug_node) -> Status {
        let pod = sent_pod(given, self.data());
        let node = sent_node(given_node, self.data());
        let v = self.filter_once(&pod, &node);
        if v.code() == SCHEDPLUG_ERROR {
            return v;
        }
        match self.filter_promise_problem(given, &pod, &node, &v) {
            Some(problem) => Status::error(problem),
            None => v,
        }
    }

    /// The filter hook once, on views as the host sends them (the status
    /// as the host reads it: an unknown code is an ERROR).
    pub fn filter_once(&self, pod: &schedplug_pod, node: &schedplug_node) -> Status {
        let f = match self.d.filter {
            Some(f) => f,
            None => return Status::success(),
        };
        let mut reason = ReasonBuffer::new();
        // SAFETY: the instance is alive; the views are valid for the call.
        let code = unsafe { f(self.instance, pod, node, reason.get()) };
        // runtime::filter_verdict
        match code {
            SCHEDPLUG_SUCCESS
            | SCHEDPLUG_ERROR
            | SCHEDPLUG_UNSCHEDULABLE
            | SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE
            | SCHEDPLUG_SKIP => Status::new(code, reason.text()),
            _ => Status::error(format!(
                "plugin {} returned the unknown status code {code} from filter()",
                self.name
            )),
        }
    }

    /// The score hook, with no per-pod state. Err: the host's message.
    pub fn score(
        &self,
        pod: &Built<'_, schedplug_pod>,
        node: &Built<'_, schedplug_node>,
    ) -> Result<i64, String> {
        self.score_raw(pod.raw(), node.raw())
    }

    /// The score hook on views of your own. A plugin that promised
    /// SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY is held to it: a copy of
    /// the pod under another name and uid must get the same applies /
    /// pod_begin / score results, or the score is an Err naming the broken
    /// promise.
    pub fn score_raw(
        &self,
        given: &schedplug_pod,
        given_node: &schedplug_node,
    ) -> Result<i64, String> {
        let node = sent_node(given_node, self.data());
        let value = self.score_once(&sent_pod(given, self.data()), &node)?;
        match self.score_identity_problem(given, &[node], false) {
            Some(problem) => Err(problem),
            None => Ok(value),
        }
    }

    /// The score hook once, on views as the host sends them.
    pub fn score_once(&self, pod: &schedplug_pod, node: &schedplug_node) -> Result<i64, String> {
        let f = match self.d.score {
            Some(f) => f,
            None => {
                return Err(format!(
                    "plugin {} has no score() hook but was asked to score",
                    self.name
                ))
            }
        };
        let mut reason = ReasonBuffer::new();
        let mut value = 0i64;
        // SAFETY: the instance is alive; the views are valid for the call.
        let code = unsafe { f(self.instance, pod, node, &mut value, reason.get()) };
        // runtime::score_result
        match code {
            SCHEDPLUG_SUCCESS => Ok(value),
            SCHEDPLUG_ERROR => Err(format!(
                "plugin {} failed to score node \"{}\": {}",
                self.name,
                text(node.name),
                no_reason(&reason.text())
            )),
            _ => Err(format!(
                "plugin {} returned status code {code} from score(); score may only return \
                 SUCCESS or ERROR",
                self.name
            )),
        }
    }

    /// Normalizes raw scores in place, with the plugin's normalize_score or
    /// its declared policy, then the host's [0, 100] check. Err: the host's
    /// message.
    pub fn normalize(
        &self,
        pod: &Built<'_, schedplug_pod>,
        scores: &mut [NodeScore<'_>],
    ) -> Result<(), String> {
        self.normalize_raw(pod.raw(), scores)
    }

    /// [`normalize`](Plugin::normalize) on a view of your own (its state,
    /// if any, is passed on: the host passes pod_begin's state to
    /// normalize_score). The promise of
    /// SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY covers normalization: the
    /// same raw scores normalized for a copy of the pod under another name
    /// and uid (begun afresh) must come out the same, or this is an Err
    /// naming the broken promise.
    pub fn normalize_raw(
        &self,
        given: &schedplug_pod,
        scores: &mut [NodeScore<'_>],
    ) -> Result<(), String> {
        let raw = scores.to_vec();
        self.normalize_once(&sent_pod(given, self.data()), scores)?;
        if scores.is_empty() || self.settings.hints & SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY == 0
        {
            return Ok(());
        }
        let problem = with_twin(given, |again, twin| {
            let got = self.normalize_outcome(again, &raw);
            let twin_got = self.normalize_outcome(twin, &raw);
            (got != twin_got).then(|| {
                twin_differs(
                    "SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY",
                    &self.name,
                    &format!("normalizing the raw scores {}, ", scores_listed(&raw)),
                    given,
                    &got,
                    &twin_got,
                    "applies, pod_begin and normalize_score",
                )
            })
        });
        match problem {
            Some(p) => Err(p),
            None => Ok(()),
        }
    }

    /// Normalization once, on a view as the host sends it: the plugin's
    /// normalize_score or its declared policy, and the host's [0, 100]
    /// check.
    pub fn normalize_once(
        &self,
        pod: &schedplug_pod,
        scores: &mut [NodeScore<'_>],
    ) -> Result<(), String> {
        if scores.is_empty() {
            return Ok(());
        }
        // The host's array: entries node_score_size apart (the v1.0 size).
        let mut raw: Vec<schedplug_node_score> = scores
            .iter()
            .map(|s| schedplug_node_score {
                node_name: st(s.node_name),
                score: s.score,
            })
            .collect();
        let custom = self.d.normalize_score.is_some();
        if let Some(f) = self.d.normalize_score {
            let mut reason = ReasonBuffer::new();
            // SAFETY: the instance is alive; the array is writable and
            // holds raw.len() entries.
            let code = unsafe {
                f(
                    self.instance,
                    pod,
                    raw.as_mut_ptr(),
                    raw.len() as u64,
                    reason.get(),
                )
            };
            if code != SCHEDPLUG_SUCCESS {
                // runtime::normalize_failed
                return Err(format!(
                    "plugin {} failed to normalize scores: {}",
                    self.name,
                    no_reason(&reason.text())
                ));
            }
        } else {
            rules::apply_policy(self.settings.normalize_policy, &mut raw);
        }
        for (s, r) in scores.iter_mut().zip(&raw) {
            s.score = r.score;
        }
        // The host never clamps (PluginInstance::normalize, with
        // runtime::out_of_range).
        let named = scores.iter().map(|s| (s.node_name, s.score));
        match rules::out_of_range(&self.name, custom, named) {
            Some(problem) => Err(problem),
            None => Ok(()),
        }
    }

    /// refresh() once. Err: the host's message.
    pub fn refresh(&self) -> Result<(), String> {
        let f = match self.d.refresh {
            Some(f) => f,
            None => return Ok(()),
        };
        let mut reason = ReasonBuffer::new();
        // SAFETY: the instance is alive.
        match unsafe { f(self.instance, reason.get()) } {
            SCHEDPLUG_SUCCESS => Ok(()),
            _ => Err(format!(
                "plugin {} refresh failed: {}",
                self.name,
                no_reason(&reason.text())
            )),
        }
    }

    /// One scheduling cycle of `pod` over `nodes`, as schedplug-host runs
    /// it: pod_begin once (or applies() for both gates), filter on every
    /// node, score on the nodes that passed, normalization of those scores,
    /// then pod_end. A filter or score ERROR fails the cycle
    /// ([`Cycle::error`]), as it fails the pod in kube-scheduler. The
    /// hints' promises are checked as [`filter_raw`](Plugin::filter_raw)
    /// checks them, and the score identity promise on the whole score pass
    /// (gates, scores, normalization) at once; the first broken promise
    /// fails the cycle, and no other promise is checked in it, so that it
    /// is reported once.
    ///
    /// The hooks see only the declared data ([`data`](Plugin::data)), as
    /// on the host. When the pod or the nodes carry data the plugin did not
    /// declare, the cycle runs again with each such bit sent; if that
    /// changes an answer (a gate, a verdict or reason, a raw or normalized
    /// score, the cycle's error), the plugin reads data it did not declare:
    /// the rows stay as the host would answer, and [`Cycle::error`] is a
    /// sentence naming the bit to declare, the hook and the node
    /// ([`undeclared_data_problem`](Plugin::undeclared_data_problem)). Those
    /// extra cycles run before the host's, so the hooks' last calls see what
    /// the host would send; a plugin that logs sees them in its logs.
    pub fn run(&self, pod: &Pod, nodes: &[Node]) -> Cycle {
        // The check's cycles first: a plugin keeping what it saw last keeps
        // the host's view.
        let undeclared = self.undeclared_data_problem(pod, nodes);
        let mut cycle = self.run_sending(pod, nodes, self.data(), true);
        if let Some(problem) = undeclared {
            cycle.error = Some(match cycle.error.take() {
                None => problem,
                Some(e) => format!("{problem}; the cycle failed too: {e}"),
            });
        }
        cycle
    }

    /// One cycle as [`run`](Plugin::run) makes it, the hooks seeing the
    /// data `bits`; the hints' promises are checked when `promises`.
    fn run_sending(&self, pod: &Pod, nodes: &[Node], bits: u64, promises: bool) -> Cycle {
        let built = pod.view();
        let node_views: Vec<Built<'_, schedplug_node>> = nodes.iter().map(Node::view).collect();
        let mut cycle = Cycle::default();
        let scope = self.begin_pod_sending(built.raw(), bits);
        if let Some(e) = scope.error() {
            cycle.error = Some(e.to_string());
            return cycle;
        }
        let view = *scope.pod();
        cycle.filter_skipped = !scope.runs_filter() || self.d.filter.is_none();
        cycle.score_skipped = !scope.runs_score() || self.d.score.is_none();
        let names: Vec<&str> = nodes.iter().map(Node::name).collect();
        let mut scores: Vec<NodeScore<'_>> = Vec::new();
        let mut scored_rows = Vec::new();
        let mut feasible_nodes = Vec::new(); // sent
        for (i, nv) in node_views.iter().enumerate() {
            let nv = sent_node(nv.raw(), bits);
            // Promises are checked until the cycle has failed.
            let mut broken = None;
            let mut filter = if cycle.filter_skipped {
                // A promise about the pod's identity or its undeclared
                // labels and annotations covers the gates too: a pod whose
                // filter was skipped is checked like one whose filter ran.
                if promises && self.d.filter.is_some() && cycle.error.is_none() {
                    broken = self.pod_promise_problem(built.raw(), &nv);
                }
                Status::skip()
            } else {
                let v = self.filter_once(&view, &nv);
                if promises && v.code() != SCHEDPLUG_ERROR && cycle.error.is_none() {
                    broken = self.filter_promise_problem(built.raw(), &view, &nv, &v);
                }
                v
            };
            if let Some(problem) = broken {
                filter = Status::error(problem);
            }
            if filter.code() == SCHEDPLUG_ERROR && cycle.error.is_none() {
                cycle.error = Some(filter.reason().to_string());
            }
            let feasible = matches!(filter.code(), SCHEDPLUG_SUCCESS | SCHEDPLUG_SKIP);
            if feasible {
                feasible_nodes.push(nv);
            }
            let mut row = NodeResult {
                node: names[i].to_string(),
                filter,
                scored: false,
                raw: 0,
                score: 0,
            };
            if feasible && !cycle.score_skipped {
                match self.score_once(&view, &nv) {
                    Err(e) => {
                        if cycle.error.is_none() {
                            cycle.error = Some(e);
                        }
                    }
                    Ok(value) => {
                        row.scored = true;
                        row.raw = value;
                        scores.push(NodeScore {
                            node_name: names[i],
                            score: value,
                        });
                        scored_rows.push(i);
                    }
                }
            }
            cycle.nodes.push(row);
        }
        if cycle.error.is_none() && !scores.is_empty() {
            match self.normalize_once(&view, &mut scores) {
                Err(e) => cycle.error = Some(e),
                Ok(()) => {
                    for (s, &row) in scores.iter().zip(&scored_rows) {
                        cycle.nodes[row].score = s.score;
                    }
                }
            }
        }
        // The gates count, as for the filter: checked also when they
        // skipped score, on the nodes that passed filter.
        if promises && cycle.error.is_none() && self.d.score.is_some() {
            cycle.error = self.score_identity_problem(built.raw(), &feasible_nodes, true);
        }
        drop(scope); // pod_end
        cycle
    }

    /// How pod_begin (or applies) gated the pod of `scope`, in words;
    /// empty without either hook.
    fn gates(&self, scope: &PodScope<'_>) -> String {
        if self.d.pod_begin.is_some() {
            if let Some(e) = scope.error() {
                return format!("pod_begin failing ({e})");
            }
            let skipped = match (scope.runs_filter(), scope.runs_score()) {
                (false, true) => "filter",
                (false, false) => "filter and score",
                (true, false) => "score",
                (true, true) => "nothing",
            };
            return format!("pod_begin skipping {skipped}");
        }
        if self.d.applies.is_some() {
            return format!("applies {}", scope.runs_filter());
        }
        String::new()
    }

    /// What the host would make of `pod` on `node`, in words: how pod_begin
    /// (or applies) gated it, then the filter's verdict.
    fn outcome(&self, pod: &schedplug_pod, node: &schedplug_node) -> String {
        let scope = self.begin_pod_raw(pod);
        let out = self.gates(&scope);
        if scope.error().is_some() || !scope.runs_filter() {
            return out;
        }
        then(
            out,
            format!("filter {}", said(&self.filter_once(scope.pod(), node))),
        )
    }

    /// The same for scoring `pod` on `nodes` (sent): the gates, each node's
    /// score, and when `normalized` the normalized scores.
    fn score_outcome(
        &self,
        pod: &schedplug_pod,
        nodes: &[schedplug_node],
        normalized: bool,
    ) -> String {
        let scope = self.begin_pod_raw(pod);
        let out = self.gates(&scope);
        if scope.error().is_some() || !scope.runs_score() {
            return out;
        }
        let names: Vec<String> = nodes.iter().map(|n| text(n.name)).collect();
        let mut scores = Vec::new();
        let mut each = Vec::new();
        for (node, name) in nodes.iter().zip(&names) {
            match self.score_once(scope.pod(), node) {
                Ok(v) => {
                    each.push(format!("\"{name}\" {v}"));
                    scores.push(NodeScore {
                        node_name: name,
                        score: v,
                    });
                }
                Err(e) => each.push(format!("\"{name}\" Error (\"{e}\")")),
            }
        }
        let each = if each.is_empty() {
            "on no node".to_string()
        } else {
            each.join(", ")
        };
        let scored = then(out, format!("score {each}"));
        if !normalized || scores.is_empty() {
            return scored;
        }
        match self.normalize_once(scope.pod(), &mut scores) {
            Ok(()) => format!("{scored}, normalized {}", scores_listed(&scores)),
            Err(e) => format!("{scored}, normalization Error (\"{e}\")"),
        }
    }

    /// The same for normalizing `raw` for `pod`: the gates, then the
    /// normalized scores.
    fn normalize_outcome(&self, pod: &schedplug_pod, raw: &[NodeScore<'_>]) -> String {
        let scope = self.begin_pod_raw(pod);
        let out = self.gates(&scope);
        if scope.error().is_some() || !scope.runs_score() {
            return out;
        }
        let mut scores = raw.to_vec();
        match self.normalize_once(scope.pod(), &mut scores) {
            Ok(()) => then(out, format!("normalized {}", scores_listed(&scores))),
            Err(e) => then(out, format!("normalization Error (\"{e}\")")),
        }
    }
}

/// `next` after `before` ("<before>, then <next>"), or `next` alone.
fn then(before: String, next: String) -> String {
    if before.is_empty() {
        next
    } else {
        format!("{before}, then {next}")
    }
}

/// "\"a\" 1, \"b\" 2"
fn scores_listed(scores: &[NodeScore<'_>]) -> String {
    scores
        .iter()
        .map(|s| format!("\"{}\" {}", s.node_name, s.score))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Drop for Plugin {
    fn drop(&mut self) {
        if let (false, Some(destroy)) = (self.instance.is_null(), self.d.destroy) {
            // SAFETY: the instance create() made, destroyed once.
            unsafe { destroy(self.instance) }
        }
        if !self.handle.is_null() {
            // SAFETY: after destroy nothing of the object is in use.
            unsafe { dl::dlclose(self.handle) };
        }
    }
}

/// The dynamic loader (in glibc's libc since 2.34, in libdl before, which
/// std links on linux-gnu).
mod dl {
    use std::ffi::c_void;
    use std::os::raw::{c_char, c_int};
    pub const RTLD_NOW: c_int = 2;
    pub const RTLD_LOCAL: c_int = 0;
    extern "C" {
        pub fn dlopen(filename: *const c_char, flag: c_int) -> *mut c_void;
        pub fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
        pub fn dlerror() -> *mut c_char;
        pub fn dlclose(handle: *mut c_void) -> c_int;
    }
}

fn said(s: &Status) -> String {
    if s.reason().is_empty() {
        code_name(s.code()).to_string()
    } else {
        format!("{} (\"{}\")", code_name(s.code()), s.reason())
    }
}

/// `list` (entries `kv_size` apart) with only the entries whose keys are in
/// `keep` (sorted), plus `extra`: `value`, still sorted and laid out
/// `kv_size` apart; the keys left out; and the storage the list points to.
fn only_declared(
    list: schedplug_kv_list,
    kv_size: usize,
    keep: &[String],
    extra: &str,
    value: &str,
) -> (schedplug_kv_list, Vec<String>, Vec<u64>) {
    let mut kept: Vec<schedplug_kv> = Vec::new();
    let mut dropped = Vec::new();
    let count = if list.items.is_null() {
        0
    } else {
        list.count as usize
    };
    for i in 0..count {
        // SAFETY: the view's list holds `count` entries kv_size apart.
        let kv =
            unsafe { ((list.items as *const u8).add(i * kv_size) as *const schedplug_kv).read() };
        let key = text(kv.key);
        if keep.binary_search(&key).is_ok() {
            kept.push(kv);
        } else {
            dropped.push(key);
        }
    }
    let added = schedplug_kv {
        key: st(extra),
        value: st(value),
    };
    let at = kept
        .iter()
        .position(|kv| text(kv.key).as_bytes() > extra.as_bytes())
        .unwrap_or(kept.len());
    kept.insert(at, added);
    // u64 words keep the entries aligned.
    let mut store = vec![0u64; (kept.len() * kv_size + 7) / 8];
    for (i, kv) in kept.iter().enumerate() {
        // SAFETY: `store` holds kept.len() entries of kv_size >= the entry.
        unsafe {
            ((store.as_mut_ptr() as *mut u8).add(i * kv_size) as *mut schedplug_kv).write(*kv)
        }
    }
    let out = schedplug_kv_list {
        items: store.as_ptr() as *const schedplug_kv,
        count: kept.len() as u64,
    };
    (out, dropped, store)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_are_sorted_and_masked() {
        let pod = Pod::new("p")
            .label("b", "2")
            .label("a", "1")
            .node_name("n1")
            .request("cpu", 5);
        let built = pod.view();
        let view = unsafe { crate::view::Pod::from_raw(built.raw()) };
        assert_eq!(
            view.labels().iter().collect::<Vec<_>>(),
            [("a", "1"), ("b", "2")]
        );
        assert_eq!(view.node_name(), "n1");
        assert_eq!(view.requests().get("cpu"), 5);
        let masked = sent_pod(built.raw(), 0);
        assert_eq!(
            unsafe { crate::view::Pod::from_raw(&masked) }.node_name(),
            ""
        );
    }
}
