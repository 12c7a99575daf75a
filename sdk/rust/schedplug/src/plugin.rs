//! The [`Plugin`] trait: a plugin is a type, its hooks are methods, and
//! [`export_plugin!`](crate::export_plugin) turns it into the C descriptor.

use crate::abi::*;
use crate::args::{Args, ArgsError};
use crate::status::Status;
use crate::view::{Node, Pod};

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
}
