//! What [`export_plugin!`](crate::export_plugin) builds: the static
//! descriptor and the C trampolines that call a [`Plugin`]'s methods,
//! catching every panic. Not called directly by plugin code.

// One file, although over 800 lines: the macros and the trampolines they point
// at are one piece; the hook bits pick which trampolines the descriptor gets.

use crate::abi::*;
use crate::plugin::{
    log, Create, Gates, LogLevel, NodeScore, Normalize, Plugin, PodPatch, Settings,
};
use crate::status::{set_reason, Status};
use crate::view::{read_field, Node, Pod};
use std::any::Any;
use std::ffi::c_void;
use std::os::raw::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};

// Hook bits of [`Export::HOOKS`], one per name export_plugin! accepts.
/// `hooks = [applies]`.
pub const HOOK_APPLIES: u32 = 1 << 0;
/// `hooks = [pod_begin]` (pod_end comes with it).
pub const HOOK_POD_BEGIN: u32 = 1 << 1;
/// `hooks = [filter]`.
pub const HOOK_FILTER: u32 = 1 << 2;
/// `hooks = [score]`.
pub const HOOK_SCORE: u32 = 1 << 3;
/// `hooks = [normalize_score]`.
pub const HOOK_NORMALIZE_SCORE: u32 = 1 << 4;
/// `hooks = [refresh]`.
pub const HOOK_REFRESH: u32 = 1 << 5;
/// `hooks = [reserve]` (ABI v1.6).
pub const HOOK_RESERVE: u32 = 1 << 6;
/// `hooks = [unreserve]` (needs reserve or permit).
pub const HOOK_UNRESERVE: u32 = 1 << 7;
/// `hooks = [permit]`.
pub const HOOK_PERMIT: u32 = 1 << 8;
/// `hooks = [pre_bind]`.
pub const HOOK_PRE_BIND: u32 = 1 << 9;
/// `hooks = [pre_enqueue]`.
pub const HOOK_PRE_ENQUEUE: u32 = 1 << 10;

/// A plugin type with its name, version and hooks; export_plugin!
/// implements it on a type of its own.
pub trait Export: 'static {
    type Plugin: Plugin;
    /// The name profiles enable, UpperCamelCase.
    const NAME: &'static str;
    /// NAME and VERSION with a NUL, for the descriptor.
    const NAME_C: &'static [u8];
    const VERSION_C: &'static [u8];
    /// HOOK_* bits.
    const HOOKS: u32;
}

/// The descriptor in a `static`: it holds raw pointers, which are not
/// Sync, but it is immutable and points only to static data.
pub struct StaticDescriptor(pub schedplug_plugin);

// SAFETY: never mutated; its pointers are to 'static strings and functions.
unsafe impl Sync for StaticDescriptor {}

const fn is_upper_camel_case(s: &[u8]) -> bool {
    // s ends with its NUL.
    if s.len() < 2 || !s[0].is_ascii_uppercase() {
        return false;
    }
    let mut i = 0;
    while i < s.len() - 1 {
        if !s[i].is_ascii_alphanumeric() {
            return false;
        }
        i += 1;
    }
    s[s.len() - 1] == 0
}

const fn has_empty_key(keys: &[&str]) -> bool {
    let mut i = 0;
    while i < keys.len() {
        if keys[i].is_empty() {
            return true;
        }
        i += 1;
    }
    false
}

/// The descriptor of `E`; evaluated at compile time, where a broken rule
/// fails the build with the message.
pub const fn descriptor<E: Export>() -> schedplug_plugin {
    const fn has_hook(hooks: u32, bit: u32) -> bool {
        hooks & bit != 0
    }
    macro_rules! has {
        ($bit:expr) => {
            has_hook(E::HOOKS, $bit)
        };
    }
    if !is_upper_camel_case(E::NAME_C) {
        panic!("plugin name must be UpperCamelCase ([A-Z][A-Za-z0-9]*), e.g. \"HwEncrypt\"");
    }
    let policy = <E::Plugin as Plugin>::NORMALIZE;
    let scores = has!(HOOK_SCORE);
    if has!(HOOK_NORMALIZE_SCORE) && !scores {
        panic!("normalize_score needs a score hook");
    }
    if !matches!(policy, Normalize::None) && !scores {
        panic!("NORMALIZE needs a score hook");
    }
    if !matches!(policy, Normalize::None) && has!(HOOK_NORMALIZE_SCORE) {
        panic!("declare either a normalize_score hook or NORMALIZE, not both");
    }
    if has!(HOOK_APPLIES) && has!(HOOK_POD_BEGIN) {
        panic!("declare either applies or pod_begin (it gates too), not both");
    }
    let period = <E::Plugin as Plugin>::REFRESH_PERIOD_MS;
    if has!(HOOK_REFRESH) && period == 0 {
        panic!("a plugin with a refresh hook needs REFRESH_PERIOD_MS > 0");
    }
    if !has!(HOOK_REFRESH) && period != 0 {
        panic!("REFRESH_PERIOD_MS without a refresh hook");
    }
    let events = <E::Plugin as Plugin>::EVENTS;
    if events & !SCHEDPLUG_EVENT_ALL != 0 {
        panic!("EVENTS may only contain SCHEDPLUG_EVENT_* bits");
    }
    if <E::Plugin as Plugin>::DATA & !SCHEDPLUG_DATA_ALL != 0 {
        panic!("DATA may only contain SCHEDPLUG_DATA_* bits");
    }
    let hints = <E::Plugin as Plugin>::HINTS;
    if hints & !SCHEDPLUG_HINT_ALL != 0 {
        panic!("HINTS may only contain SCHEDPLUG_HINT_* bits");
    }
    if has!(HOOK_REFRESH) && hints & SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY != 0 {
        panic!("SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY excludes a refresh hook");
    }
    if has!(HOOK_REFRESH) && hints & SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY != 0 {
        panic!("SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY excludes a refresh hook");
    }
    if !has!(HOOK_SCORE) && hints & SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY != 0 {
        panic!("SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY is a promise about score: list score in hooks, or drop the hint");
    }
    let label_keys = <E::Plugin as Plugin>::POD_LABEL_KEYS;
    let annotation_keys = <E::Plugin as Plugin>::POD_ANNOTATION_KEYS;
    if (!label_keys.is_empty() || !annotation_keys.is_empty())
        && hints & SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS == 0
    {
        panic!("POD_LABEL_KEYS and POD_ANNOTATION_KEYS go with SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS in HINTS");
    }
    if label_keys.len() > SCHEDPLUG_POD_KEYS_MAX as usize
        || annotation_keys.len() > SCHEDPLUG_POD_KEYS_MAX as usize
    {
        panic!("POD_LABEL_KEYS and POD_ANNOTATION_KEYS may hold at most SCHEDPLUG_POD_KEYS_MAX (64) keys each");
    }
    if has_empty_key(label_keys) || has_empty_key(annotation_keys) {
        panic!("POD_LABEL_KEYS and POD_ANNOTATION_KEYS may not hold an empty key");
    }

    if has!(HOOK_UNRESERVE) && !has!(HOOK_RESERVE) && !has!(HOOK_PERMIT) {
        panic!("unreserve undoes what reserve or permit did: list reserve (or permit) in hooks, or drop unreserve");
    }

    type Applies = unsafe extern "C" fn(*mut c_void, *const schedplug_pod) -> i32;
    let applies: Option<Applies> = if has!(HOOK_POD_BEGIN) {
        // A v1.0 host calls applies, never pod_begin.
        Some(applies_from_begin::<E>)
    } else if has!(HOOK_APPLIES) {
        Some(applies::<E>)
    } else {
        None
    };
    schedplug_plugin {
        abi_version: SCHEDPLUG_ABI_VERSION,
        struct_size: std::mem::size_of::<schedplug_plugin>() as u32,
        name: E::NAME_C.as_ptr() as *const c_char,
        version: E::VERSION_C.as_ptr() as *const c_char,
        create: Some(create::<E>),
        destroy: Some(destroy::<E>),
        applies,
        filter: if has!(HOOK_FILTER) {
            Some(filter::<E>)
        } else {
            None
        },
        score: if scores { Some(score::<E>) } else { None },
        normalize_score: if has!(HOOK_NORMALIZE_SCORE) {
            Some(normalize_score::<E>)
        } else {
            None
        },
        normalize_policy: policy.policy(),
        refresh: if has!(HOOK_REFRESH) {
            Some(refresh::<E>)
        } else {
            None
        },
        refresh_period_ms: period,
        events,
        pod_begin: if has!(HOOK_POD_BEGIN) {
            Some(pod_begin::<E>)
        } else {
            None
        },
        pod_end: if has!(HOOK_POD_BEGIN) {
            Some(pod_end::<E>)
        } else {
            None
        },
        reserve: if has!(HOOK_RESERVE) {
            Some(reserve::<E>)
        } else {
            None
        },
        unreserve: if has!(HOOK_UNRESERVE) {
            Some(unreserve::<E>)
        } else {
            None
        },
        permit: if has!(HOOK_PERMIT) {
            Some(permit::<E>)
        } else {
            None
        },
        pre_bind: if has!(HOOK_PRE_BIND) {
            Some(pre_bind::<E>)
        } else {
            None
        },
        pre_enqueue: if has!(HOOK_PRE_ENQUEUE) {
            Some(pre_enqueue::<E>)
        } else {
            None
        },
    }
}

/// What create() allocates: the plugin and the host, for logging.
struct Instance<P> {
    plugin: P,
    host: *const schedplug_host,
    // The declared pod keys the settings point to: the host copies them
    // after create() returns, so they live with the instance.
    _keys: DeclaredKeys,
}

/// The keys of [`Settings`] and the views the host's settings point to.
#[derive(Default)]
struct DeclaredKeys {
    _owned: [Vec<String>; 2],
    _views: [Vec<schedplug_str>; 2],
}

fn key_views(keys: &[String]) -> Vec<schedplug_str> {
    keys.iter()
        .map(|k| schedplug_str {
            data: k.as_ptr() as *const c_char,
            len: k.len() as u64,
        })
        .collect()
}

/// # Safety
/// `instance` is what create::<E> stored.
unsafe fn instance<'a, E: Export>(instance: *mut c_void) -> &'a Instance<E::Plugin> {
    &*(instance as *const Instance<E::Plugin>)
}

fn panic_message(payload: &(dyn Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "a panic payload that is not a string"
    }
}

fn panicked<E: Export>(hook: &str, payload: Box<dyn Any + Send>) -> String {
    let msg = format!(
        "plugin {} panicked in {}: {}",
        E::NAME,
        hook,
        panic_message(&*payload)
    );
    // A payload whose Drop panics must not unwind into the host either.
    let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
    msg
}

/// Runs `body`, writes its status into `reason`; a panic becomes ERROR.
///
/// # Safety
/// `reason` is NULL or a host reason buffer.
unsafe fn guarded<E: Export>(
    hook: &str,
    reason: *mut schedplug_reason,
    body: impl FnOnce() -> Status,
) -> schedplug_code {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(status) => status.report(reason),
        Err(payload) => {
            set_reason(reason, &panicked::<E>(hook, payload));
            SCHEDPLUG_ERROR
        }
    }
}

/// Writes `value` at the offset of `$field` when the host's `$ty` (struct_size
/// first) has the field; returns whether it did.
macro_rules! write_field {
    ($view:expr, $ty:ident, $field:ident, $value:expr) => {{
        let view: *mut $ty = $view;
        match read_field!(view as *const $ty, $ty, $field) {
            Some(_) => {
                let (offset, witness) = $crate::view::field_layout!($ty, $field);
                let value = $value;
                // SAFETY: read_field! found the field within struct_size.
                #[allow(unused_unsafe)]
                let () = unsafe { write_like(view as *mut u8, offset, witness, value) };
                true
            }
            None => false,
        }
    }};
}

unsafe fn write_like<T>(base: *mut u8, offset: usize, _witness: *const T, value: T) {
    (base.add(offset) as *mut T).write(value)
}

/// The settings create() may write (v1.1), when the host sent them.
unsafe fn settings_of(host: *const schedplug_host) -> *mut schedplug_settings {
    read_field!(host, schedplug_host, settings).unwrap_or(std::ptr::null_mut())
}

/// Writes `wanted` into the host's settings (the fields the host has) and
/// returns the keys they point to, which must live with the instance.
///
/// # Safety
/// `settings` is NULL or the host's settings, writable during create().
unsafe fn apply_settings(
    settings: *mut schedplug_settings,
    wanted: &Settings,
) -> Result<DeclaredKeys, Status> {
    let old_host = Status::error(
        "this plugin reads pod or node data (DATA) that this host cannot send (it predates \
         ABI v1.2); update schedplug-host",
    );
    if settings.is_null() {
        // A v1.0 host: the descriptor's values are all it uses.
        return if wanted.data != 0 {
            Err(old_host)
        } else {
            Ok(DeclaredKeys::default())
        };
    }
    write_field!(
        settings,
        schedplug_settings,
        refresh_period_ms,
        wanted.refresh_period_ms
    );
    write_field!(settings, schedplug_settings, events, wanted.events);
    write_field!(
        settings,
        schedplug_settings,
        normalize_policy,
        wanted.normalize.policy()
    );
    if wanted.data != 0 && !write_field!(settings, schedplug_settings, data, wanted.data) {
        return Err(old_host);
    }
    // Hints are promises a host may use; one that predates them does not.
    write_field!(settings, schedplug_settings, hints, wanted.hints);
    // v1.4 keys; a host without the fields refuses the hint anyway.
    let owned = [
        wanted.pod_label_keys.clone(),
        wanted.pod_annotation_keys.clone(),
    ];
    let views = [key_views(&owned[0]), key_views(&owned[1])];
    if !views[0].is_empty() {
        write_field!(
            settings,
            schedplug_settings,
            pod_label_keys,
            views[0].as_ptr()
        );
        write_field!(
            settings,
            schedplug_settings,
            pod_label_key_count,
            views[0].len() as u64
        );
    }
    if !views[1].is_empty() {
        write_field!(
            settings,
            schedplug_settings,
            pod_annotation_keys,
            views[1].as_ptr()
        );
        write_field!(
            settings,
            schedplug_settings,
            pod_annotation_key_count,
            views[1].len() as u64
        );
    }
    Ok(DeclaredKeys {
        _owned: owned,
        _views: views,
    })
}

unsafe extern "C" fn create<E: Export>(
    args_json: *const c_char,
    args_len: u64,
    host: *const schedplug_host,
    instance_out: *mut *mut c_void,
    error: *mut schedplug_reason,
) -> schedplug_code {
    if instance_out.is_null() {
        set_reason(error, "create() called without instance_out");
        return SCHEDPLUG_ERROR;
    }
    *instance_out = std::ptr::null_mut();
    let made = catch_unwind(AssertUnwindSafe(|| -> Result<*mut c_void, Status> {
        let json = if args_json.is_null() || args_len == 0 {
            "{}"
        } else {
            let bytes = std::slice::from_raw_parts(args_json as *const u8, args_len as usize);
            std::str::from_utf8(bytes)
                .map_err(|e| Status::error(format!("the plugin's args are not UTF-8: {e}")))?
        };
        let ctx = Create {
            args_json: json,
            host,
        };
        let plugin = <E::Plugin as Plugin>::create(&ctx)?;
        let settings = settings_of(host);
        let mut wanted = Settings::of::<E::Plugin>();
        // Bits the host set before create() stay, as in the C++ layer.
        if !settings.is_null() {
            wanted.data |= read_field!(settings as *const _, schedplug_settings, data).unwrap_or(0);
            wanted.hints |=
                read_field!(settings as *const _, schedplug_settings, hints).unwrap_or(0);
        }
        plugin.configure(&mut wanted);
        let keys = apply_settings(settings, &wanted)?;
        Ok(Box::into_raw(Box::new(Instance {
            plugin,
            host,
            _keys: keys,
        })) as *mut c_void)
    }));
    match made {
        Ok(Ok(instance)) => {
            *instance_out = instance;
            SCHEDPLUG_SUCCESS
        }
        Ok(Err(status)) => {
            set_reason(error, status.reason());
            if status.code() == SCHEDPLUG_SUCCESS {
                SCHEDPLUG_ERROR
            } else {
                status.code()
            }
        }
        Err(payload) => {
            set_reason(error, &panicked::<E>("create", payload));
            SCHEDPLUG_ERROR
        }
    }
}

unsafe extern "C" fn destroy<E: Export>(instance: *mut c_void) {
    if instance.is_null() {
        return;
    }
    let host = self::instance::<E>(instance).host;
    let dropped = catch_unwind(AssertUnwindSafe(|| {
        drop(Box::from_raw(instance as *mut Instance<E::Plugin>))
    }));
    if let Err(payload) = dropped {
        log(host, LogLevel::Error, &panicked::<E>("destroy", payload));
    }
}

unsafe extern "C" fn applies<E: Export>(instance: *mut c_void, pod: *const schedplug_pod) -> i32 {
    let inst = self::instance::<E>(instance);
    let pod = Pod::from_raw(pod);
    match catch_unwind(AssertUnwindSafe(|| inst.plugin.applies(&pod))) {
        Ok(applies) => i32::from(applies),
        Err(payload) => {
            // applies has no status: let filter/score run and report.
            let msg = panicked::<E>("applies", payload);
            log(
                inst.host,
                LogLevel::Error,
                &format!("{msg}; treating the pod as applicable"),
            );
            1
        }
    }
}

/// For a v1.0 host, which calls applies instead of pod_begin: the pod
/// applies when a gate of a hook the plugin has stays open.
unsafe extern "C" fn applies_from_begin<E: Export>(
    instance: *mut c_void,
    pod: *const schedplug_pod,
) -> i32 {
    let inst = self::instance::<E>(instance);
    let pod = Pod::from_raw(pod);
    let run = catch_unwind(AssertUnwindSafe(|| {
        let mut gates = Gates::default();
        match inst.plugin.pod_begin(&pod, &mut gates) {
            Err(s) if s.code() == SCHEDPLUG_SKIP => false,
            Err(_) => true, // filter / score report the error themselves
            Ok(_) => {
                (E::HOOKS & HOOK_FILTER != 0 && gates.filter)
                    || (E::HOOKS & HOOK_SCORE != 0 && gates.score)
            }
        }
    }));
    match run {
        Ok(applies) => i32::from(applies),
        Err(payload) => {
            let msg = panicked::<E>("pod_begin", payload);
            log(
                inst.host,
                LogLevel::Error,
                &format!("{msg}; treating the pod as applicable"),
            );
            1
        }
    }
}

/// Runs `body` with the pod's state: the one pod_begin built, or, on a
/// host that sent none, one built for this call (then a closed `gate` or a
/// Skip returns `closed`, and a failed pod_begin its status).
fn with_state<P: Plugin, R>(
    plugin: &P,
    pod: &Pod<'_>,
    gate: fn(&Gates) -> bool,
    closed: R,
    failed: fn(Status) -> R,
    body: impl FnOnce(&P::PodState) -> R,
) -> R {
    let state = pod.state_ptr();
    if !state.is_null() {
        // SAFETY: a non-NULL state is what pod_begin::<E> boxed for this
        // plugin; the host keeps it alive until pod_end.
        return body(unsafe { &*(state as *const P::PodState) });
    }
    let mut gates = Gates::default();
    match plugin.pod_begin(pod, &mut gates) {
        Err(s) if s.code() == SCHEDPLUG_SKIP => closed,
        Err(s) => failed(s),
        Ok(_) if !gate(&gates) => closed,
        Ok(local) => body(&local),
    }
}

unsafe extern "C" fn filter<E: Export>(
    instance: *mut c_void,
    pod: *const schedplug_pod,
    node: *const schedplug_node,
    reason: *mut schedplug_reason,
) -> schedplug_code {
    guarded::<E>("filter", reason, || {
        let p = &self::instance::<E>(instance).plugin;
        let (pod, node) = (Pod::from_raw(pod), Node::from_raw(node));
        with_state(
            p,
            &pod,
            |g| g.filter,
            Status::success(),
            |s| s,
            |state| p.filter(&pod, &node, state),
        )
    })
}

unsafe extern "C" fn score<E: Export>(
    instance: *mut c_void,
    pod: *const schedplug_pod,
    node: *const schedplug_node,
    out: *mut i64,
    reason: *mut schedplug_reason,
) -> schedplug_code {
    guarded::<E>("score", reason, || {
        let p = &self::instance::<E>(instance).plugin;
        let (pod, node) = (Pod::from_raw(pod), Node::from_raw(node));
        let scored = with_state(
            p,
            &pod,
            |g| g.score,
            Ok(0),
            Err,
            |state| p.score(&pod, &node, state),
        );
        match scored {
            Ok(value) => {
                if !out.is_null() {
                    *out = value;
                }
                Status::success()
            }
            Err(status) => status,
        }
    })
}

unsafe extern "C" fn pod_begin<E: Export>(
    instance: *mut c_void,
    pod: *const schedplug_pod,
    out: *mut schedplug_pod_begin_result,
    reason: *mut schedplug_reason,
) -> schedplug_code {
    guarded::<E>("pod_begin", reason, || {
        let p = &self::instance::<E>(instance).plugin;
        let pod = Pod::from_raw(pod);
        let mut gates = Gates::default();
        let skip_all = SCHEDPLUG_SKIP_FILTER | SCHEDPLUG_SKIP_SCORE;
        match p.pod_begin(&pod, &mut gates) {
            Err(s) if s.code() == SCHEDPLUG_SKIP => {
                if !out.is_null() {
                    write_field!(out, schedplug_pod_begin_result, skip, skip_all);
                }
                Status::success()
            }
            Err(s) => s,
            Ok(state) => {
                if out.is_null() {
                    return Status::success();
                }
                let skip = if gates.filter {
                    0
                } else {
                    SCHEDPLUG_SKIP_FILTER
                } | if gates.score { 0 } else { SCHEDPLUG_SKIP_SCORE };
                write_field!(out, schedplug_pod_begin_result, skip, skip);
                let boxed = Box::into_raw(Box::new(state)) as *mut c_void;
                if !write_field!(out, schedplug_pod_begin_result, state, boxed) {
                    // No room for it: filter/score build their own.
                    drop(Box::from_raw(boxed as *mut <E::Plugin as Plugin>::PodState));
                }
                Status::success()
            }
        }
    })
}

unsafe extern "C" fn pod_end<E: Export>(instance: *mut c_void, state: *mut c_void) {
    if state.is_null() {
        return;
    }
    let dropped = catch_unwind(AssertUnwindSafe(|| {
        drop(Box::from_raw(state as *mut <E::Plugin as Plugin>::PodState))
    }));
    if let Err(payload) = dropped {
        let host = if instance.is_null() {
            std::ptr::null()
        } else {
            self::instance::<E>(instance).host
        };
        log(host, LogLevel::Error, &panicked::<E>("pod_end", payload));
    }
}

unsafe extern "C" fn normalize_score<E: Export>(
    instance: *mut c_void,
    pod: *const schedplug_pod,
    scores: *mut schedplug_node_score,
    count: u64,
    reason: *mut schedplug_reason,
) -> schedplug_code {
    guarded::<E>("normalize_score", reason, || {
        let p = &self::instance::<E>(instance).plugin;
        let pod = Pod::from_raw(pod);
        let stride = pod.node_score_size();
        let count = if scores.is_null() { 0 } else { count as usize };
        let at = |i: usize| (scores as *mut u8).add(i * stride) as *mut schedplug_node_score;
        // A packed copy with names as &str, whatever the host's stride.
        let mut packed: Vec<NodeScore<'_>> = (0..count)
            .map(|i| {
                let e = at(i).read();
                let name = if e.node_name.data.is_null() {
                    &[][..]
                } else {
                    std::slice::from_raw_parts(
                        e.node_name.data as *const u8,
                        e.node_name.len as usize,
                    )
                };
                NodeScore {
                    node_name: std::str::from_utf8(name).unwrap_or(""),
                    score: e.score,
                }
            })
            .collect();
        // The state pod_begin built (the host passes it to normalize_score
        // too), or one built here on a host that sent none.
        let status = with_state(
            p,
            &pod,
            |g| g.score,
            Status::success(),
            |s| s,
            |state| p.normalize_score(&pod, state, &mut packed),
        );
        for (i, s) in packed.iter().enumerate() {
            (*at(i)).score = s.score;
        }
        status
    })
}

unsafe extern "C" fn refresh<E: Export>(
    instance: *mut c_void,
    error: *mut schedplug_reason,
) -> schedplug_code {
    guarded::<E>("refresh", error, || {
        self::instance::<E>(instance).plugin.refresh()
    })
}

/// The descriptor of a [`Plugin`] type, as a `&'static schedplug_plugin`,
/// without exporting it (for tests and hosts in Rust; a plugin uses
/// [`export_plugin!`](crate::export_plugin)). Same arguments.
unsafe extern "C" fn reserve<E: Export>(
    instance: *mut c_void,
    pod: *const schedplug_pod,
    node: *const schedplug_node,
    reason: *mut schedplug_reason,
) -> schedplug_code {
    guarded::<E>("reserve", reason, || {
        let p = &self::instance::<E>(instance).plugin;
        p.reserve(&Pod::from_raw(pod), &Node::from_raw(node))
    })
}

/// unreserve cannot fail: a panic is logged and ignored.
unsafe extern "C" fn unreserve<E: Export>(
    instance: *mut c_void,
    pod: *const schedplug_pod,
    node: *const schedplug_node,
) {
    let inst = self::instance::<E>(instance);
    let (pod, node) = (Pod::from_raw(pod), Node::from_raw(node));
    if let Err(payload) = catch_unwind(AssertUnwindSafe(|| inst.plugin.unreserve(&pod, &node))) {
        let msg = panicked::<E>("unreserve", payload);
        log(
            inst.host,
            LogLevel::Error,
            &format!(
                "{msg} (pod {}/{} on node {}; ignored: unreserve cannot fail, release what \
                 reserve took without panicking)",
                pod.namespace(),
                pod.name(),
                node.name()
            ),
        );
    }
}

unsafe extern "C" fn permit<E: Export>(
    instance: *mut c_void,
    pod: *const schedplug_pod,
    node: *const schedplug_node,
    out: *mut schedplug_permit_result,
    reason: *mut schedplug_reason,
) -> schedplug_code {
    guarded::<E>("permit", reason, || {
        let p = &self::instance::<E>(instance).plugin;
        let status = p.permit(&Pod::from_raw(pod), &Node::from_raw(node));
        if status.code() != SCHEDPLUG_WAIT {
            return status;
        }
        let ms = status.timeout().as_millis();
        if ms < 1 || ms > u128::from(SCHEDPLUG_PERMIT_TIMEOUT_MAX_MS) {
            return Status::error(format!(
                "permit returned Status::wait({ms} ms); the timeout must be from 1 ms to \
                 {SCHEDPLUG_PERMIT_TIMEOUT_MAX_MS} ms (15 minutes, kube-scheduler's limit)"
            ));
        }
        if !out.is_null() {
            write_field!(out, schedplug_permit_result, timeout_ms, ms as u64);
        }
        status
    })
}

unsafe extern "C" fn pre_bind<E: Export>(
    instance: *mut c_void,
    pod: *const schedplug_pod,
    node: *const schedplug_node,
    patch: *mut schedplug_pod_patch,
    reason: *mut schedplug_reason,
) -> schedplug_code {
    guarded::<E>("pre_bind", reason, || {
        let p = &self::instance::<E>(instance).plugin;
        let mut patch = PodPatch::from_raw(patch);
        p.pre_bind(&Pod::from_raw(pod), &Node::from_raw(node), &mut patch)
    })
}

unsafe extern "C" fn pre_enqueue<E: Export>(
    instance: *mut c_void,
    pod: *const schedplug_pod,
    reason: *mut schedplug_reason,
) -> schedplug_code {
    guarded::<E>("pre_enqueue", reason, || {
        self::instance::<E>(instance)
            .plugin
            .pre_enqueue(&Pod::from_raw(pod))
    })
}

#[macro_export]
macro_rules! plugin_descriptor {
    ($ty:ty, name = $name:literal, version = $version:literal,
     hooks = [$($hook:ident),* $(,)?] $(,)?) => {{
        struct SchedplugExport;
        impl $crate::export::Export for SchedplugExport {
            type Plugin = $ty;
            const NAME: &'static str = $name;
            const NAME_C: &'static [u8] = concat!($name, "\0").as_bytes();
            const VERSION_C: &'static [u8] = concat!($version, "\0").as_bytes();
            const HOOKS: u32 = 0 $(| $crate::__schedplug_hook!($hook))*;
        }
        static DESCRIPTOR: $crate::export::StaticDescriptor =
            $crate::export::StaticDescriptor($crate::export::descriptor::<SchedplugExport>());
        &DESCRIPTOR.0
    }};
}

/// Exports a [`Plugin`] type as the shared object's plugin:
///
/// ```ignore
/// schedplug::export_plugin!(ZoneRequired, name = "ZoneRequired",
///                           version = "1.0.0", hooks = [filter]);
/// ```
///
/// `hooks` lists the hooks the plugin offers, of applies, pod_begin,
/// filter, score, normalize_score and refresh; the others stay NULL. It
/// defines `schedplug_plugin_v1`, so use it once per `cdylib`. Broken
/// combinations (normalize_score without score, refresh without
/// REFRESH_PERIOD_MS, a name that is not UpperCamelCase, ...) fail the
/// build:
///
/// ```compile_fail
/// # use schedplug::{Create, Plugin, Status};
/// struct P;
/// impl Plugin for P {
///     type PodState = ();
///     fn create(_: &Create<'_>) -> Result<Self, Status> { Ok(P) }
/// }
/// // normalize_score needs a score hook
/// schedplug::export_plugin!(P, name = "P", version = "1", hooks = [normalize_score]);
/// # fn main() {}
/// ```
///
/// ```compile_fail
/// # use schedplug::{Create, Plugin, Status};
/// # struct P;
/// # impl Plugin for P {
/// #     type PodState = ();
/// #     fn create(_: &Create<'_>) -> Result<Self, Status> { Ok(P) }
/// # }
/// // plugin name must be UpperCamelCase
/// schedplug::export_plugin!(P, name = "my-plugin", version = "1", hooks = []);
/// # fn main() {}
/// ```
///
/// ```compile_fail
/// # use schedplug::{Create, Plugin, Status};
/// # struct P;
/// # impl Plugin for P {
/// #     type PodState = ();
/// #     fn create(_: &Create<'_>) -> Result<Self, Status> { Ok(P) }
/// # }
/// // unknown schedplug hook `prefilter`
/// schedplug::export_plugin!(P, name = "P", version = "1", hooks = [prefilter]);
/// # fn main() {}
/// ```
///
/// ```compile_fail
/// # use schedplug::{Create, Plugin, Status};
/// struct P;
/// impl Plugin for P {
///     type PodState = ();
///     fn create(_: &Create<'_>) -> Result<Self, Status> { Ok(P) }
/// }
/// // a plugin with a refresh hook needs REFRESH_PERIOD_MS > 0
/// schedplug::export_plugin!(P, name = "P", version = "1", hooks = [refresh]);
/// # fn main() {}
/// ```
///
/// ```compile_fail
/// # use schedplug::{Create, Plugin, Status};
/// struct P;
/// impl Plugin for P {
///     type PodState = ();
///     const HINTS: u64 = schedplug::abi::SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY;
///     fn create(_: &Create<'_>) -> Result<Self, Status> { Ok(P) }
/// }
/// // SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY is a promise about score
/// schedplug::export_plugin!(P, name = "P", version = "1", hooks = [filter]);
/// # fn main() {}
/// ```
///
/// ```compile_fail
/// # use schedplug::{Create, Node, Plugin, Pod, Status};
/// struct P;
/// impl Plugin for P {
///     type PodState = ();
///     const REFRESH_PERIOD_MS: u32 = 1000;
///     const HINTS: u64 = schedplug::abi::SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY;
///     fn create(_: &Create<'_>) -> Result<Self, Status> { Ok(P) }
///     fn score(&self, _: &Pod<'_>, _: &Node<'_>, _: &()) -> Result<i64, Status> { Ok(1) }
///     fn refresh(&self) -> Status { Status::success() }
/// }
/// // SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY excludes a refresh hook
/// schedplug::export_plugin!(P, name = "P", version = "1", hooks = [score, refresh]);
/// # fn main() {}
/// ```
///
/// ```compile_fail
/// # use schedplug::{Create, Plugin, Status};
/// struct P;
/// impl Plugin for P {
///     type PodState = ();
///     const POD_LABEL_KEYS: &'static [&'static str] = &["team"];
///     fn create(_: &Create<'_>) -> Result<Self, Status> { Ok(P) }
/// }
/// // POD_LABEL_KEYS ... go with SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS
/// schedplug::export_plugin!(P, name = "P", version = "1", hooks = [filter]);
/// # fn main() {}
/// ```
///
/// ```compile_fail
/// # use schedplug::{Create, Plugin, Status};
/// struct P;
/// impl Plugin for P {
///     type PodState = ();
///     fn create(_: &Create<'_>) -> Result<Self, Status> { Ok(P) }
/// }
/// // unreserve undoes what reserve or permit did
/// schedplug::export_plugin!(P, name = "P", version = "1", hooks = [unreserve]);
/// # fn main() {}
/// ```
///
/// ```
/// # use schedplug::{Create, Plugin, Status};
/// struct P;
/// impl Plugin for P {
///     type PodState = ();
///     fn create(_: &Create<'_>) -> Result<Self, Status> { Ok(P) }
/// }
/// // The same with permit (or reserve) compiles.
/// schedplug::export_plugin!(P, name = "P", version = "1", hooks = [permit, unreserve]);
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! export_plugin {
    ($($args:tt)*) => {
        /// The schedplug entry point: this plugin's descriptor.
        #[no_mangle]
        pub extern "C" fn schedplug_plugin_v1() -> *const $crate::abi::schedplug_plugin {
            $crate::plugin_descriptor!($($args)*)
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __schedplug_hook {
    (applies) => {
        $crate::export::HOOK_APPLIES
    };
    (pod_begin) => {
        $crate::export::HOOK_POD_BEGIN
    };
    (filter) => {
        $crate::export::HOOK_FILTER
    };
    (score) => {
        $crate::export::HOOK_SCORE
    };
    (normalize_score) => {
        $crate::export::HOOK_NORMALIZE_SCORE
    };
    (refresh) => {
        $crate::export::HOOK_REFRESH
    };
    (reserve) => {
        $crate::export::HOOK_RESERVE
    };
    (unreserve) => {
        $crate::export::HOOK_UNRESERVE
    };
    (permit) => {
        $crate::export::HOOK_PERMIT
    };
    (pre_bind) => {
        $crate::export::HOOK_PRE_BIND
    };
    (pre_enqueue) => {
        $crate::export::HOOK_PRE_ENQUEUE
    };
    ($other:ident) => {
        compile_error!(concat!(
            "unknown schedplug hook `",
            stringify!($other),
            "`; the hooks are applies, pod_begin, filter, score, normalize_score, refresh, \
             reserve, unreserve, permit, pre_bind, pre_enqueue"
        ))
    };
}
