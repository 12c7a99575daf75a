//! The [`Plugin`] trait: a plugin is a type, its hooks are methods, and
//! [`export_plugin!`](crate::export_plugin) turns it into the C descriptor.

use crate::abi::*;
use crate::args::{Args, ArgsError};
use crate::status::Status;
use crate::view::{read_field, Node, Pod};
use std::marker::PhantomData;
use std::os::raw::c_char;

/// How the host normalizes a plugin's raw scores when the plugin has no
/// `normalize_score` hook (SCHEDPLUG_NORMALIZE_*).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Normalize {
    /// Scores are already in [0, 100]; one outside is an error.
    None,
    /// Min-max onto [0, 100]: the highest raw score becomes 100.
    Linear,
    /// Reversed min-max: the lowest raw score becomes 100.
    Reverse,
}

impl Normalize {
    /// The SCHEDPLUG_NORMALIZE_* value.
    pub const fn policy(self) -> schedplug_normalize_policy {
        match self {
            Normalize::None => SCHEDPLUG_NORMALIZE_NONE,
            Normalize::Linear => SCHEDPLUG_NORMALIZE_LINEAR,
            Normalize::Reverse => SCHEDPLUG_NORMALIZE_REVERSE,
        }
    }
}

/// What pod_begin may close for a pod: a closed gate skips that hook for
/// every node (kube-scheduler's Skip). Both start open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gates {
    pub filter: bool,
    pub score: bool,
}

impl Default for Gates {
    fn default() -> Self {
        Gates {
            filter: true,
            score: true,
        }
    }
}

/// One entry of normalize_score: a node and the score to rewrite into
/// [0, 100].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeScore<'a> {
    pub node_name: &'a str,
    pub score: i64,
}

/// One instance's settings (plugin.h's `schedplug_settings`), which
/// [`Plugin::configure`] may change from the instance's args. They start as
/// the type's constants (`REFRESH_PERIOD_MS`, `EVENTS`, `NORMALIZE`,
/// `DATA`, `HINTS`, `POD_LABEL_KEYS`, `POD_ANNOTATION_KEYS`); the host
/// checks what configure leaves as it checks the descriptor, and so does
/// the test kit, with the same sentences.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// How often refresh runs, in milliseconds (> 0 with a refresh hook).
    pub refresh_period_ms: u32,
    /// SCHEDPLUG_EVENT_* bits; 0 means every event.
    pub events: u64,
    /// The score normalization (without a normalize_score hook).
    pub normalize: Normalize,
    /// SCHEDPLUG_DATA_* bits (v1.2).
    pub data: u64,
    /// SCHEDPLUG_HINT_* bits (v1.3).
    pub hints: u64,
    /// The pod label keys applies, pod_begin and filter read, for
    /// SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS (v1.4).
    pub pod_label_keys: Vec<String>,
    /// The pod annotation keys they read, likewise.
    pub pod_annotation_keys: Vec<String>,
}

impl Settings {
    /// The constants of `P`.
    pub fn of<P: Plugin>() -> Settings {
        let owned = |keys: &[&str]| keys.iter().map(|k| k.to_string()).collect();
        Settings {
            refresh_period_ms: P::REFRESH_PERIOD_MS,
            events: P::EVENTS,
            normalize: P::NORMALIZE,
            data: P::DATA,
            hints: P::HINTS,
            pod_label_keys: owned(P::POD_LABEL_KEYS),
            pod_annotation_keys: owned(P::POD_ANNOTATION_KEYS),
        }
    }
}

/// The level of a host log line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogLevel {
    Error,
    Warning,
    Info,
    Debug,
}

impl LogLevel {
    fn raw(self) -> schedplug_log_level {
        match self {
            LogLevel::Error => SCHEDPLUG_LOG_ERROR,
            LogLevel::Warning => SCHEDPLUG_LOG_WARNING,
            LogLevel::Info => SCHEDPLUG_LOG_INFO,
            LogLevel::Debug => SCHEDPLUG_LOG_DEBUG,
        }
    }
}

/// What create() gets: the args and the host's log.
pub struct Create<'a> {
    pub(crate) args_json: &'a str,
    pub(crate) host: *const schedplug_host,
}

impl<'a> Create<'a> {
    /// The profile's pluginConfig args as JSON ("{}" when there are none).
    pub fn args_json(&self) -> &'a str {
        self.args_json
    }

    /// The args, typed: `ctx.args()?.get_int("maxPods", 1, 110)?`. Errors
    /// are sentences naming the arg; `?` turns them into the error Status
    /// that stops the host with it.
    pub fn args(&self) -> Result<Args, ArgsError> {
        Args::parse(self.args_json)
    }

    /// Writes a line to the host's log, prefixed with the plugin's name.
    pub fn log(&self, level: LogLevel, msg: &str) {
        // SAFETY: the host pointer is the one create() received, valid
        // during create().
        unsafe { log(self.host, level, msg) }
    }

    /// The host's services for the instance's whole life (its log, the
    /// permit decisions): keep it in the plugin.
    pub fn host(&self) -> Host {
        Host { raw: self.host }
    }
}

fn raw_str(s: &str) -> schedplug_str {
    schedplug_str {
        data: s.as_ptr() as *const c_char,
        len: s.len() as u64,
    }
}

/// The host's services for one instance, from [`Create::host`]: valid
/// until the instance is dropped, usable from any thread and any hook.
#[derive(Clone, Copy, Debug)]
pub struct Host {
    raw: *const schedplug_host,
}

// SAFETY: plugin.h: the host struct stays valid until destroy() returns and
// its functions are safe to call from any thread.
unsafe impl Send for Host {}
unsafe impl Sync for Host {}

impl Host {
    /// Writes a line to the host's log, prefixed with the plugin's name.
    pub fn log(&self, level: LogLevel, msg: &str) {
        // SAFETY: see the Send impl.
        unsafe { log(self.raw, level, msg) }
    }

    /// Ends the wait of the pod with uid `pod_uid` that this instance's
    /// permit answered [`Status::wait`] for (ABI v1.6): it goes on to
    /// binding once every plugin that made it wait allowed it. SUCCESS when
    /// the host passed the decision on, SKIP when no such pod waits on this
    /// instance, ERROR when the scheduler is not connected or the host
    /// predates ABI v1.6.
    pub fn permit_allow(&self, pod_uid: &str) -> schedplug_code {
        match self.permit_services() {
            // SAFETY: the host's function, called with its context.
            Some((allow, _, context)) => unsafe { allow(context, raw_str(pod_uid)) },
            None => SCHEDPLUG_ERROR,
        }
    }

    /// Rejects a waiting pod with `reason` (shown on the pod): its
    /// reservations are undone and it goes back to the queue. Returns as
    /// [`Host::permit_allow`] does.
    pub fn permit_reject(&self, pod_uid: &str, reason: &str) -> schedplug_code {
        match self.permit_services() {
            // SAFETY: as for permit_allow.
            Some((_, reject, context)) => unsafe {
                reject(context, raw_str(pod_uid), raw_str(reason))
            },
            None => SCHEDPLUG_ERROR,
        }
    }

    #[allow(clippy::type_complexity)]
    fn permit_services(
        &self,
    ) -> Option<(
        unsafe extern "C" fn(*mut std::ffi::c_void, schedplug_str) -> schedplug_code,
        unsafe extern "C" fn(*mut std::ffi::c_void, schedplug_str, schedplug_str) -> schedplug_code,
        *mut std::ffi::c_void,
    )> {
        if self.raw.is_null() {
            return None;
        }
        let allow = read_field!(self.raw, schedplug_host, permit_allow)??;
        let reject = read_field!(self.raw, schedplug_host, permit_reject)??;
        // SAFETY: a valid host struct (see the Send impl).
        Some((allow, reject, unsafe { (*self.raw).context }))
    }
}

type PatchSetter =
    unsafe extern "C" fn(*mut std::ffi::c_void, schedplug_str, schedplug_str) -> schedplug_code;

/// The labels and annotations pre_bind asks the scheduler to set on the
/// pod before it is bound (plugin.h's `schedplug_pod_patch`, ABI v1.6):
/// the host copies key and value; setting a key twice keeps the last
/// value. Each call returns success, or an error status naming the key
/// when the host refused the entry (a key that is not a qualified name, a
/// label value Kubernetes would refuse, a value over
/// SCHEDPLUG_POD_PATCH_VALUE_MAX bytes, more than SCHEDPLUG_POD_PATCH_MAX
/// entries): nothing is kept then, and pre_bind should return it.
pub struct PodPatch<'a> {
    raw: *mut schedplug_pod_patch,
    _call: PhantomData<&'a mut schedplug_pod_patch>,
}

impl<'a> PodPatch<'a> {
    /// # Safety
    /// `raw` is NULL or the host's patch, valid for `'a`.
    pub(crate) unsafe fn from_raw(raw: *mut schedplug_pod_patch) -> PodPatch<'a> {
        PodPatch {
            raw,
            _call: PhantomData,
        }
    }

    /// Sets the pod annotation `key` to `value`.
    pub fn set_annotation(&mut self, key: &str, value: &str) -> Status {
        let setter = self.field(|p| read_field!(p, schedplug_pod_patch, set_annotation));
        self.set(setter, key, value, || {
            format!(
                "the host refused the pod annotation \"{key}\" (the key must be a qualified name \
                 such as example.com/name, the value at most {SCHEDPLUG_POD_PATCH_VALUE_MAX} \
                 bytes, the patch at most {SCHEDPLUG_POD_PATCH_MAX} labels and annotations)"
            )
        })
    }

    /// Sets the pod label `key` to `value`.
    pub fn set_label(&mut self, key: &str, value: &str) -> Status {
        let setter = self.field(|p| read_field!(p, schedplug_pod_patch, set_label));
        self.set(setter, key, value, || {
            let shown: String = value.chars().take(80).collect();
            format!(
                "the host refused the pod label \"{key}\"=\"{shown}\" (the key must be a \
                 qualified name such as example.com/name, the value at most 63 characters of \
                 [A-Za-z0-9_.-] that begin and end with a letter or digit, the patch at most \
                 {SCHEDPLUG_POD_PATCH_MAX} labels and annotations)"
            )
        })
    }

    /// The patch's field `read` reads, when the host's patch has it.
    fn field<T>(
        &self,
        read: impl FnOnce(*const schedplug_pod_patch) -> Option<Option<T>>,
    ) -> Option<T> {
        if self.raw.is_null() {
            None
        } else {
            read(self.raw as *const schedplug_pod_patch).flatten()
        }
    }

    fn set(
        &mut self,
        setter: Option<PatchSetter>,
        key: &str,
        value: &str,
        refused: impl FnOnce() -> String,
    ) -> Status {
        let setter = match setter {
            Some(f) => f,
            None => return Status::error("this host gave pre_bind no pod patch to write to"),
        };
        // SAFETY: the host's function with the patch's context, during
        // pre_bind.
        let code = unsafe { setter((*self.raw).context, raw_str(key), raw_str(value)) };
        if code == SCHEDPLUG_SUCCESS {
            Status::success()
        } else {
            Status::error(refused())
        }
    }
}

/// Logs through the host, if it has a log.
///
/// # Safety
/// `host` is NULL or a valid `schedplug_host`.
pub(crate) unsafe fn log(host: *const schedplug_host, level: LogLevel, msg: &str) {
    if host.is_null() {
        return;
    }
    if let Some(f) = (*host).log {
        f(
            (*host).context,
            level.raw(),
            schedplug_str {
                data: msg.as_ptr() as *const std::os::raw::c_char,
                len: msg.len() as u64,
            },
        );
    }
}

/// A scheduler plugin. Every hook has a default; the hooks a plugin offers
/// are the ones listed in its [`export_plugin!`](crate::export_plugin)
/// (the others stay NULL in the descriptor, so kube-scheduler does not
/// call them at all).
///
/// Hooks take `&self` because the host calls them concurrently on one
/// instance; keep what `refresh` updates behind a lock or an atomic. A
/// panic in any hook becomes SCHEDPLUG_ERROR with a reason naming the
/// plugin and the hook (with `panic = "abort"` it aborts the host instead).
pub trait Plugin: Sized + Send + Sync + 'static {
    /// The per-pod state pod_begin builds and filter/score read; `()` for
    /// a plugin without one.
    type PodState: Default + Send + Sync + 'static;

    /// The score normalization the host applies (without a
    /// normalize_score hook).
    const NORMALIZE: Normalize = Normalize::None;
    /// How often refresh runs, in milliseconds (> 0 with a refresh hook).
    const REFRESH_PERIOD_MS: u32 = 0;
    /// SCHEDPLUG_EVENT_* bits; 0 means every node and pod event.
    const EVENTS: u64 = 0;
    /// SCHEDPLUG_DATA_* bits: the v1.2+ pod and node data the plugin reads.
    const DATA: u64 = 0;
    /// SCHEDPLUG_HINT_* bits: promises about the hooks.
    const HINTS: u64 = 0;
    /// v1.4: the pod label keys applies, pod_begin and filter read, for
    /// SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS (which they need; at
    /// most SCHEDPLUG_POD_KEYS_MAX, none empty: checked at build time).
    const POD_LABEL_KEYS: &'static [&'static str] = &[];
    /// v1.4: the pod annotation keys they read, likewise.
    const POD_ANNOTATION_KEYS: &'static [&'static str] = &[];

    /// Builds an instance from the profile's args; an Err (use
    /// [`Status::error`]) says which arg is wrong and stops the host.
    fn create(ctx: &Create<'_>) -> Result<Self, Status>;

    /// The instance's settings, from what create() read in its args: runs
    /// right after create with the constants in `settings`; change what
    /// depends on the args (a label key given as an arg is a declared key,
    /// the data an option needs, the events a mode waits for). The host
    /// refuses an instance whose settings break plugin.h's rules, naming
    /// them (`... returned broken settings from create(): ...`), and the
    /// test kit does the same. Which hooks exist stays fixed by
    /// `export_plugin!`. A host older than ABI v1.1 keeps the constants;
    /// data needs v1.2, keys v1.4.
    fn configure(&self, _settings: &mut Settings) {}

    /// Per-pod gate: false skips filter and score for the pod.
    fn applies(&self, _pod: &Pod<'_>) -> bool {
        true
    }

    /// Per-pod work done once before filter/score: returns the state they
    /// get, may close `gates`, or fails the pod (Err). `Err(Status::skip())`
    /// skips both hooks. On a host that never calls pod_begin (v1.0), it
    /// runs inside each filter/score call instead.
    fn pod_begin(&self, _pod: &Pod<'_>, _gates: &mut Gates) -> Result<Self::PodState, Status> {
        Ok(Self::PodState::default())
    }

    /// Does `pod` fit on `node`?
    fn filter(&self, _pod: &Pod<'_>, _node: &Node<'_>, _state: &Self::PodState) -> Status {
        Status::success()
    }

    /// The raw score of `node` for `pod`.
    fn score(
        &self,
        _pod: &Pod<'_>,
        _node: &Node<'_>,
        _state: &Self::PodState,
    ) -> Result<i64, Status> {
        Ok(0)
    }

    /// Rewrites every score into [0, 100] (instead of a NORMALIZE policy),
    /// with the pod's state: the host passes pod_begin's state to
    /// normalize_score as to filter and score (plugin.h).
    fn normalize_score(
        &self,
        _pod: &Pod<'_>,
        _state: &Self::PodState,
        _scores: &mut [NodeScore<'_>],
    ) -> Status {
        Status::success()
    }

    /// Background work, every REFRESH_PERIOD_MS on a host thread.
    fn refresh(&self) -> Status {
        Status::success()
    }

    // ---- ABI v1.6: plugins that own a resource. They change the
    // plugin's own state (reservations) behind its own lock: they run
    // concurrently for different pods and with filter / score. A v1.5 host
    // never calls them.

    /// kube-scheduler's Reserve: take what `pod` needs on `node` (pick
    /// device indices, count it against a quota) so that the next pods'
    /// filter calls see it. An unschedulable or error status fails the
    /// pod's cycle, and every Reserve plugin's unreserve runs.
    fn reserve(&self, _pod: &Pod<'_>, _node: &Node<'_>) -> Status {
        Status::success()
    }

    /// kube-scheduler's Unreserve: release what reserve took for the pod.
    /// It cannot fail (a panic is logged and ignored), and must tolerate
    /// pods it never reserved and being called twice.
    fn unreserve(&self, _pod: &Pod<'_>, _node: &Node<'_>) {}

    /// kube-scheduler's Permit: success lets the pod go on to binding,
    /// unschedulable rejects it, [`Status::wait`] holds it until
    /// [`Host::permit_allow`] / [`Host::permit_reject`] names its uid.
    fn permit(&self, _pod: &Pod<'_>, _node: &Node<'_>) -> Status {
        Status::success()
    }

    /// kube-scheduler's PreBind: the labels and annotations to write on the
    /// pod before it is bound (the choice reserve made, for the node's
    /// device plugin). An error fails the binding.
    fn pre_bind(&self, _pod: &Pod<'_>, _node: &Node<'_>, _patch: &mut PodPatch<'_>) -> Status {
        Status::success()
    }

    /// kube-scheduler's PreEnqueue: success admits the pod to the queue;
    /// unschedulable_and_unresolvable keeps it out with the reason until
    /// one of the plugin's EVENTS. Keep it cheap; read nothing of nodes.
    fn pre_enqueue(&self, _pod: &Pod<'_>) -> Status {
        Status::success()
    }
}
