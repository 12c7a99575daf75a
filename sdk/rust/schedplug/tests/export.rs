//! Drives the descriptors export_plugin! / plugin_descriptor! build through
//! their extern "C" functions, with hand-built abi structs, as the host
//! would. The plugins themselves use no `unsafe`.
//!
//! One file, although over 700 lines: the plugins under test and the hand-built
//! host below serve every test after them.

use schedplug::abi::*;
use schedplug::{Create, Gates, LogLevel, Node, NodeScore, Normalize, Plugin, Pod, Status};
use std::ffi::{c_void, CStr};
use std::mem::size_of;
use std::os::raw::c_char;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

// ---------------------------------------------------------------------------
// Plugins under test (no unsafe in any of them)
// ---------------------------------------------------------------------------

/// Requires the node's zone label to equal the pod's "zone" annotation.
struct ZoneRequired {
    label: String,
}

impl Plugin for ZoneRequired {
    type PodState = ();
    const EVENTS: u64 = SCHEDPLUG_EVENT_NODE_ADD | SCHEDPLUG_EVENT_NODE_UPDATE_LABEL;

    fn create(ctx: &Create<'_>) -> Result<Self, Status> {
        let json = ctx.args_json();
        if json.contains("bad") {
            return Err(Status::error("arg \"bad\" is not allowed"));
        }
        ctx.log(LogLevel::Info, "created");
        Ok(ZoneRequired {
            label: "topology.kubernetes.io/zone".to_string(),
        })
    }

    fn filter(&self, pod: &Pod<'_>, node: &Node<'_>, _state: &()) -> Status {
        match pod.annotations().get("zone") {
            None => Status::success(),
            Some(zone) if node.labels().get(&self.label) == Some(zone) => Status::success(),
            Some(_) => Status::unschedulable("node(s) in another zone"),
        }
    }
}

schedplug::export_plugin!(
    ZoneRequired,
    name = "ZoneRequired",
    version = "1.2.3",
    hooks = [filter]
);

/// Panics in every hook it has.
struct Panicky;

impl Plugin for Panicky {
    type PodState = ();
    const REFRESH_PERIOD_MS: u32 = 1000;

    fn create(ctx: &Create<'_>) -> Result<Self, Status> {
        if ctx.args_json().contains("panic") {
            panic!("create exploded");
        }
        Ok(Panicky)
    }
    fn applies(&self, _pod: &Pod<'_>) -> bool {
        panic!("applies exploded")
    }
    fn filter(&self, _pod: &Pod<'_>, _node: &Node<'_>, _state: &()) -> Status {
        panic!("boom in filter {}", 42)
    }
    fn score(&self, _pod: &Pod<'_>, _node: &Node<'_>, _state: &()) -> Result<i64, Status> {
        std::panic::panic_any(7u32)
    }
    fn normalize_score(
        &self,
        _pod: &Pod<'_>,
        _state: &(),
        _scores: &mut [NodeScore<'_>],
    ) -> Status {
        panic!("normalize exploded")
    }
    fn refresh(&self) -> Status {
        let v: Vec<u8> = Vec::new();
        Status::error(format!("{}", v[3]))
    }
}

fn panicky() -> &'static schedplug_plugin {
    schedplug::plugin_descriptor!(
        Panicky,
        name = "Panicky",
        version = "0.0.1",
        hooks = [applies, filter, score, normalize_score, refresh],
    )
}

// Stateful's tests count pod_begin calls and state drops: one at a time.
static STATEFUL_TESTS: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    STATEFUL_TESTS.lock().unwrap_or_else(|e| e.into_inner())
}

static BEGINS: AtomicUsize = AtomicUsize::new(0);
static ENDS: AtomicUsize = AtomicUsize::new(0);

/// Parses the pod's "min-cpu" annotation once per pod.
#[derive(Default)]
struct MinCpu {
    min: i64,
}

impl Drop for MinCpu {
    fn drop(&mut self) {
        ENDS.fetch_add(1, Ordering::SeqCst);
    }
}

struct Stateful;

impl Plugin for Stateful {
    type PodState = MinCpu;
    const NORMALIZE: Normalize = Normalize::Linear;

    fn create(_ctx: &Create<'_>) -> Result<Self, Status> {
        Ok(Stateful)
    }

    fn pod_begin(&self, pod: &Pod<'_>, gates: &mut Gates) -> Result<MinCpu, Status> {
        BEGINS.fetch_add(1, Ordering::SeqCst);
        let min = match pod.annotations().get("min-cpu") {
            None => return Err(Status::skip()),
            Some(v) => v
                .parse()
                .map_err(|_| Status::error(format!("min-cpu {v:?} is not a number")))?,
        };
        gates.score = pod.labels().get("score") == Some("yes");
        Ok(MinCpu { min })
    }

    fn filter(&self, _pod: &Pod<'_>, node: &Node<'_>, state: &MinCpu) -> Status {
        if node.allocatable().get("cpu") >= state.min {
            Status::success()
        } else {
            Status::unschedulable_and_unresolvable("node(s) have too few CPUs")
        }
    }

    fn score(&self, _pod: &Pod<'_>, node: &Node<'_>, state: &MinCpu) -> Result<i64, Status> {
        Ok(node.allocatable().get("cpu") - state.min)
    }
}

fn stateful() -> &'static schedplug_plugin {
    schedplug::plugin_descriptor!(
        Stateful,
        name = "Stateful",
        version = "1",
        hooks = [pod_begin, filter, score]
    )
}

/// Normalizes by itself; reads declared data; makes promises.
struct Custom;

impl Plugin for Custom {
    type PodState = ();
    const DATA: u64 = SCHEDPLUG_DATA_NODE_UNSCHEDULABLE;
    const HINTS: u64 = SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS;

    fn create(_ctx: &Create<'_>) -> Result<Self, Status> {
        Ok(Custom)
    }
    fn score(&self, _pod: &Pod<'_>, node: &Node<'_>, _state: &()) -> Result<i64, Status> {
        if node.unschedulable() {
            Err(Status::error("x".repeat(1000)))
        } else {
            Ok(node.name().len() as i64)
        }
    }
    fn normalize_score(&self, _pod: &Pod<'_>, _state: &(), scores: &mut [NodeScore<'_>]) -> Status {
        for s in scores.iter_mut() {
            s.score = if s.node_name == "best" {
                100
            } else {
                s.score * 10
            };
        }
        Status::success()
    }
}

fn custom() -> &'static schedplug_plugin {
    schedplug::plugin_descriptor!(
        Custom,
        name = "Custom",
        version = "1",
        hooks = [score, normalize_score]
    )
}

// ---------------------------------------------------------------------------
// A hand-built host
// ---------------------------------------------------------------------------

static LOG: Mutex<Vec<String>> = Mutex::new(Vec::new());

unsafe extern "C" fn host_log(_ctx: *mut c_void, level: schedplug_log_level, msg: schedplug_str) {
    let bytes = std::slice::from_raw_parts(msg.data as *const u8, msg.len as usize);
    LOG.lock()
        .unwrap()
        .push(format!("{level}: {}", String::from_utf8_lossy(bytes)));
}

fn logged(needle: &str) -> bool {
    LOG.lock().unwrap().iter().any(|l| l.contains(needle))
}

fn s(v: &str) -> schedplug_str {
    schedplug_str {
        data: v.as_ptr() as *const c_char,
        len: v.len() as u64,
    }
}

fn kv(k: &'static str, v: &'static str) -> schedplug_kv {
    schedplug_kv {
        key: s(k),
        value: s(v),
    }
}

fn kv_list(items: &[schedplug_kv]) -> schedplug_kv_list {
    schedplug_kv_list {
        items: items.as_ptr(),
        count: items.len() as u64,
    }
}

fn full_pod() -> schedplug_pod {
    schedplug_pod {
        struct_size: size_of::<schedplug_pod>() as u32,
        namespace_name: s("default"),
        name: s("p"),
        ..Default::default()
    }
}

fn full_node(name: &'static str) -> schedplug_node {
    schedplug_node {
        struct_size: size_of::<schedplug_node>() as u32,
        name: s(name),
        ..Default::default()
    }
}

/// A reason buffer as the host provides one.
struct Reason {
    buf: Vec<u8>,
    raw: schedplug_reason,
}

impl Reason {
    fn new() -> Box<Reason> {
        let mut r = Box::new(Reason {
            buf: vec![0; SCHEDPLUG_REASON_MAX as usize],
            raw: schedplug_reason::default(),
        });
        r.raw = schedplug_reason {
            text: r.buf.as_mut_ptr() as *mut c_char,
            capacity: r.buf.len() as u64,
        };
        r
    }
    fn ptr(&mut self) -> *mut schedplug_reason {
        &mut self.raw
    }
    fn text(&self) -> String {
        let end = self.buf.iter().position(|&b| b == 0).unwrap();
        String::from_utf8(self.buf[..end].to_vec()).unwrap()
    }
}

struct Host {
    settings: Box<schedplug_settings>,
    raw: Box<schedplug_host>,
}

fn host() -> Host {
    let mut settings = Box::new(schedplug_settings {
        struct_size: size_of::<schedplug_settings>() as u32,
        ..Default::default()
    });
    let raw = Box::new(schedplug_host {
        struct_size: size_of::<schedplug_host>() as u32,
        log: Some(host_log),
        settings: &mut *settings,
        ..Default::default()
    });
    Host { settings, raw }
}

fn create(d: &schedplug_plugin, host: &Host, args: &str) -> Result<*mut c_void, (i32, String)> {
    let mut reason = Reason::new();
    let mut instance = std::ptr::null_mut();
    let code = unsafe {
        d.create.unwrap()(
            args.as_ptr() as *const c_char,
            args.len() as u64,
            &*host.raw,
            &mut instance,
            reason.ptr(),
        )
    };
    if code == SCHEDPLUG_SUCCESS {
        Ok(instance)
    } else {
        assert!(instance.is_null());
        Err((code, reason.text()))
    }
}

fn filter(
    d: &schedplug_plugin,
    inst: *mut c_void,
    pod: &schedplug_pod,
    node: &schedplug_node,
) -> (i32, String) {
    let mut reason = Reason::new();
    let code = unsafe { d.filter.unwrap()(inst, pod, node, reason.ptr()) };
    (code, reason.text())
}

fn score(
    d: &schedplug_plugin,
    inst: *mut c_void,
    pod: &schedplug_pod,
    node: &schedplug_node,
) -> (i32, i64, String) {
    let mut reason = Reason::new();
    let mut value = -1;
    let code = unsafe { d.score.unwrap()(inst, pod, node, &mut value, reason.ptr()) };
    (code, value, reason.text())
}

fn cstr(p: *const c_char) -> &'static str {
    unsafe { CStr::from_ptr(p) }.to_str().unwrap()
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[test]
fn exported_entry_returns_the_descriptor() {
    let d = unsafe { &*schedplug_plugin_v1() };
    assert_eq!(d.abi_version, SCHEDPLUG_ABI_VERSION);
    assert_eq!(d.struct_size as usize, size_of::<schedplug_plugin>());
    assert_eq!(cstr(d.name), "ZoneRequired");
    assert_eq!(cstr(d.version), "1.2.3");
    assert!(d.create.is_some() && d.destroy.is_some() && d.filter.is_some());
    assert!(d.applies.is_none() && d.score.is_none() && d.normalize_score.is_none());
    assert!(d.refresh.is_none() && d.pod_begin.is_none() && d.pod_end.is_none());
    assert_eq!(d.normalize_policy, SCHEDPLUG_NORMALIZE_NONE);
    assert_eq!(
        d.events,
        SCHEDPLUG_EVENT_NODE_ADD | SCHEDPLUG_EVENT_NODE_UPDATE_LABEL
    );
    // The same static every call.
    assert_eq!(schedplug_plugin_v1(), schedplug_plugin_v1());
    // The symbol is exported under the header's name.
    let entry: schedplug_plugin_v1_fn = Some(schedplug_plugin_v1);
    assert!(entry.is_some());
    assert_eq!(SCHEDPLUG_ENTRY_SYMBOL, "schedplug_plugin_v1");
}

#[test]
fn filter_reads_the_views_and_reports_reasons() {
    let d = unsafe { &*schedplug_plugin_v1() };
    let h = host();
    let inst = create(d, &h, "{}").unwrap();
    assert!(logged("created"));
    let ann = [kv("zone", "a")];
    let mut pod = full_pod();
    pod.annotations = kv_list(&ann);
    let labels_a = [kv("topology.kubernetes.io/zone", "a")];
    let labels_b = [
        kv("kubernetes.io/hostname", "n2"),
        kv("topology.kubernetes.io/zone", "b"),
    ];
    let mut a = full_node("n1");
    a.labels = kv_list(&labels_a);
    let mut b = full_node("n2");
    b.labels = kv_list(&labels_b);
    assert_eq!(
        filter(d, inst, &pod, &a),
        (SCHEDPLUG_SUCCESS, String::new())
    );
    assert_eq!(
        filter(d, inst, &pod, &b),
        (
            SCHEDPLUG_UNSCHEDULABLE,
            "node(s) in another zone".to_string()
        )
    );
    // A pod without the annotation fits anywhere.
    assert_eq!(filter(d, inst, &full_pod(), &b).0, SCHEDPLUG_SUCCESS);
    unsafe { d.destroy.unwrap()(inst) };
}

#[test]
fn create_errors_and_args() {
    let d = unsafe { &*schedplug_plugin_v1() };
    let h = host();
    assert_eq!(
        create(d, &h, r#"{"bad": 1}"#),
        Err((SCHEDPLUG_ERROR, "arg \"bad\" is not allowed".to_string()))
    );
    // Empty args are "{}".
    let inst = create(d, &h, "").unwrap();
    unsafe { d.destroy.unwrap()(inst) };
    // Args that are not UTF-8.
    let mut reason = Reason::new();
    let mut instance = std::ptr::null_mut();
    let bad = [0xffu8, 0xfe];
    let code = unsafe {
        d.create.unwrap()(
            bad.as_ptr() as *const c_char,
            2,
            &*h.raw,
            &mut instance,
            reason.ptr(),
        )
    };
    assert_eq!(code, SCHEDPLUG_ERROR);
    assert!(reason.text().contains("not UTF-8"), "{}", reason.text());
}

#[test]
fn every_panic_becomes_an_error_naming_the_plugin_and_hook() {
    let d = panicky();
    let h = host();
    assert_eq!(
        create(d, &h, "panic"),
        Err((
            SCHEDPLUG_ERROR,
            "plugin Panicky panicked in create: create exploded".to_string()
        ))
    );
    let inst = create(d, &h, "{}").unwrap();
    let (pod, node) = (full_pod(), full_node("n"));
    assert_eq!(
        filter(d, inst, &pod, &node),
        (
            SCHEDPLUG_ERROR,
            "plugin Panicky panicked in filter: boom in filter 42".to_string()
        )
    );
    let (code, _, reason) = score(d, inst, &pod, &node);
    assert_eq!(code, SCHEDPLUG_ERROR);
    assert_eq!(
        reason,
        "plugin Panicky panicked in score: a panic payload that is not a string"
    );

    let mut r = Reason::new();
    let mut scores = [schedplug_node_score {
        node_name: s("n"),
        score: 5,
    }];
    let code = unsafe { d.normalize_score.unwrap()(inst, &pod, scores.as_mut_ptr(), 1, r.ptr()) };
    assert_eq!(code, SCHEDPLUG_ERROR);
    assert_eq!(
        r.text(),
        "plugin Panicky panicked in normalize_score: normalize exploded"
    );

    let mut r = Reason::new();
    assert_eq!(
        unsafe { d.refresh.unwrap()(inst, r.ptr()) },
        SCHEDPLUG_ERROR
    );
    assert!(
        r.text()
            .starts_with("plugin Panicky panicked in refresh: index out of bounds"),
        "{}",
        r.text()
    );
    assert_eq!(d.refresh_period_ms, 1000);

    // applies has no reason: the pod applies, and the host's log says why.
    assert_eq!(unsafe { d.applies.unwrap()(inst, &pod) }, 1);
    assert!(logged(
        "plugin Panicky panicked in applies: applies exploded; treating the pod as applicable"
    ));
    unsafe { d.destroy.unwrap()(inst) };
}

#[test]
fn pod_begin_state_reaches_filter_and_score_and_pod_end_frees_it() {
    let _serial = one_at_a_time();
    let d = stateful();
    assert!(d.pod_begin.is_some() && d.pod_end.is_some() && d.applies.is_some());
    assert_eq!(d.normalize_policy, SCHEDPLUG_NORMALIZE_LINEAR);
    assert!(d.normalize_score.is_none());
    let h = host();
    let inst = create(d, &h, "{}").unwrap();

    let ann = [kv("min-cpu", "2000")];
    let labels = [kv("score", "yes")];
    let mut pod = full_pod();
    pod.annotations = kv_list(&ann);
    pod.labels = kv_list(&labels);
    let mut result = schedplug_pod_begin_result {
        struct_size: size_of::<schedplug_pod_begin_result>() as u32,
        ..Default::default()
    };
    let mut r = Reason::new();
    let begins = BEGINS.load(Ordering::SeqCst);
    let ends = ENDS.load(Ordering::SeqCst);
    let code = unsafe { d.pod_begin.unwrap()(inst, &pod, &mut result, r.ptr()) };
    assert_eq!(code, SCHEDPLUG_SUCCESS);
    assert_eq!(result.skip, 0);
    assert!(!result.state.is_null());
    pod.state = result.state;

    let cpu = [schedplug_resource {
        name: s("cpu"),
        value: 3000,
    }];
    let mut big = full_node("big");
    big.allocatable = schedplug_resource_list {
        items: cpu.as_ptr(),
        count: 1,
    };
    let small = full_node("small");
    assert_eq!(filter(d, inst, &pod, &big).0, SCHEDPLUG_SUCCESS);
    assert_eq!(
        filter(d, inst, &pod, &small),
        (
            SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE,
            "node(s) have too few CPUs".to_string()
        )
    );
    assert_eq!(
        score(d, inst, &pod, &big),
        (SCHEDPLUG_SUCCESS, 1000, String::new())
    );
    // The state was built once, for all those calls.
    assert_eq!(BEGINS.load(Ordering::SeqCst), begins + 1);
    assert_eq!(ENDS.load(Ordering::SeqCst), ends);
    unsafe { d.pod_end.unwrap()(inst, result.state) };
    assert_eq!(ENDS.load(Ordering::SeqCst), ends + 1);
    // pod_end with a NULL state is fine.
    unsafe { d.pod_end.unwrap()(inst, std::ptr::null_mut()) };
    unsafe { d.destroy.unwrap()(inst) };
}

#[test]
fn pod_begin_gates_skip_and_errors() {
    let _serial = one_at_a_time();
    let d = stateful();
    let h = host();
    let inst = create(d, &h, "{}").unwrap();
    let begin = |pod: &schedplug_pod| {
        let mut result = schedplug_pod_begin_result {
            struct_size: size_of::<schedplug_pod_begin_result>() as u32,
            ..Default::default()
        };
        let mut r = Reason::new();
        let code = unsafe { d.pod_begin.unwrap()(inst, pod, &mut result, r.ptr()) };
        (code, result, r.text())
    };
    // No "score: yes" label: the score gate closes.
    let ann = [kv("min-cpu", "1")];
    let mut pod = full_pod();
    pod.annotations = kv_list(&ann);
    let (code, result, _) = begin(&pod);
    assert_eq!(
        (code, result.skip),
        (SCHEDPLUG_SUCCESS, SCHEDPLUG_SKIP_SCORE)
    );
    unsafe { d.pod_end.unwrap()(inst, result.state) };
    // No annotation: Skip, both hooks skipped, no state.
    let (code, result, _) = begin(&full_pod());
    assert_eq!(
        (code, result.skip),
        (
            SCHEDPLUG_SUCCESS,
            SCHEDPLUG_SKIP_FILTER | SCHEDPLUG_SKIP_SCORE
        )
    );
    assert!(result.state.is_null());
    // A bad annotation: the pod fails with the plugin's reason.
    let ann = [kv("min-cpu", "lots")];
    pod.annotations = kv_list(&ann);
    let (code, result, reason) = begin(&pod);
    assert_eq!(code, SCHEDPLUG_ERROR);
    assert_eq!(reason, "min-cpu \"lots\" is not a number");
    assert!(result.state.is_null());
    unsafe { d.destroy.unwrap()(inst) };
}

#[test]
fn a_v1_0_host_without_pod_begin_still_gets_state_and_gates() {
    let _serial = one_at_a_time();
    let d = stateful();
    let h = host();
    let inst = create(d, &h, "{}").unwrap();
    // A v1.0 pod view: no state field, no element sizes.
    let v1_0 = {
        let p = std::mem::MaybeUninit::<schedplug_pod>::uninit();
        let base = p.as_ptr();
        let end = unsafe { std::ptr::addr_of!((*base).toleration_count) };
        end as usize - base as usize + 8
    };
    let ann = [kv("min-cpu", "500")];
    let mut pod = full_pod();
    pod.struct_size = v1_0 as u32;
    pod.annotations = kv_list(&ann);
    pod.state = 0x10 as *mut c_void; // beyond struct_size: must be ignored
    let cpu = [schedplug_resource {
        name: s("cpu"),
        value: 400,
    }];
    let mut node = full_node("n");
    node.allocatable = schedplug_resource_list {
        items: cpu.as_ptr(),
        count: 1,
    };
    // applies (what a v1.0 host calls) says the pod applies (filter gate).
    assert_eq!(unsafe { d.applies.unwrap()(inst, &pod) }, 1);
    assert_eq!(
        filter(d, inst, &pod, &node).0,
        SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE
    );
    // Score's gate is closed for this pod: 0, success, without calling score.
    assert_eq!(
        score(d, inst, &pod, &node),
        (SCHEDPLUG_SUCCESS, 0, String::new())
    );
    // Skip: the pod does not apply.
    let mut bare = full_pod();
    bare.struct_size = v1_0 as u32;
    assert_eq!(unsafe { d.applies.unwrap()(inst, &bare) }, 0);
    unsafe { d.destroy.unwrap()(inst) };
}

#[test]
fn normalize_score_honours_the_entry_size_and_data_and_hints_reach_settings() {
    let d = custom();
    assert!(d.normalize_score.is_some());
    assert_eq!(d.normalize_policy, SCHEDPLUG_NORMALIZE_NONE);
    let mut h = host();
    h.settings.hints = SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY;
    let inst = create(d, &h, "{}").unwrap();
    assert_eq!(h.settings.data, SCHEDPLUG_DATA_NODE_UNSCHEDULABLE);
    assert_eq!(
        h.settings.hints,
        SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY | SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS
    );

    // A newer host's 32-byte entries.
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Big {
        e: schedplug_node_score,
        extra: u64,
    }
    let mut scores = [
        Big {
            e: schedplug_node_score {
                node_name: s("n1"),
                score: 3,
            },
            extra: 77,
        },
        Big {
            e: schedplug_node_score {
                node_name: s("best"),
                score: 1,
            },
            extra: 88,
        },
    ];
    let mut pod = full_pod();
    pod.node_score_size = size_of::<Big>() as u32;
    let mut r = Reason::new();
    let code = unsafe {
        d.normalize_score.unwrap()(
            inst,
            &pod,
            scores.as_mut_ptr() as *mut schedplug_node_score,
            2,
            r.ptr(),
        )
    };
    assert_eq!(code, SCHEDPLUG_SUCCESS);
    assert_eq!((scores[0].e.score, scores[0].extra), (30, 77));
    assert_eq!((scores[1].e.score, scores[1].extra), (100, 88));

    // An error reason longer than SCHEDPLUG_REASON_MAX is cut.
    let mut node = full_node("n");
    node.unschedulable = 1;
    let (code, _, reason) = score(d, inst, &pod, &node);
    assert_eq!(code, SCHEDPLUG_ERROR);
    assert_eq!(reason, "x".repeat(SCHEDPLUG_REASON_MAX as usize - 1));
    assert_eq!(score(d, inst, &pod, &full_node("abc")).1, 3);
    unsafe { d.destroy.unwrap()(inst) };
}

#[test]
fn declared_data_needs_a_host_that_can_send_it() {
    let _serial = one_at_a_time();
    let d = custom();
    let mut h = host();
    // A v1.1 host: its settings end before `data`.
    h.settings.struct_size = 24;
    let (code, reason) = create(d, &h, "{}").unwrap_err();
    assert_eq!(code, SCHEDPLUG_ERROR);
    assert!(reason.contains("predates ABI v1.2"), "{reason}");
    // A v1.0 host: no settings at all.
    h.raw.struct_size = 24;
    assert!(create(d, &h, "{}").is_err());
    // A plugin without DATA is fine there.
    let inst = create(stateful(), &h, "{}").unwrap();
    unsafe { stateful().destroy.unwrap()(inst) };
}
