//! The hooks of plugins that own a resource (ABI v1.6) in the Rust layer
//! and kit: Slots hands out numbered slots per node (label
//! "slots.example.com/count"; a pod wants the annotation
//! "slots.example.com/want"), makes gangs wait in permit, writes its
//! choice in pre_bind and gates held pods. Its careless mode (args
//! `{"careless": true}`) makes the mistakes the kit must report.

use schedplug::abi::*;
use schedplug::testing::{self, Node, Pod};
use schedplug::{Create, Host, LogLevel, Plugin, PodPatch, Status};
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

type PodView<'a> = schedplug::Pod<'a>;
type NodeView<'a> = schedplug::Node<'a>;

/// Pod uid -> (node, slots).
type Held = BTreeMap<String, (String, Vec<u32>)>;

struct Slots {
    careless: bool,
    host: Host,
    // The reservations; the pods waiting in permit.
    state: Mutex<(Held, Vec<String>)>,
}

fn number(text: Option<&str>) -> u32 {
    text.and_then(|t| t.parse().ok()).unwrap_or(0)
}

impl Slots {
    fn free(held: &Held, node: &NodeView<'_>) -> Vec<u32> {
        let count = number(node.labels().get("slots.example.com/count"));
        (0..count)
            .filter(|i| {
                !held
                    .values()
                    .any(|(n, s)| n == node.name() && s.contains(i))
            })
            .collect()
    }
}

impl Plugin for Slots {
    type PodState = ();
    fn create(ctx: &Create<'_>) -> Result<Self, Status> {
        Ok(Slots {
            careless: ctx.args_json().contains("\"careless\": true"),
            host: ctx.host(),
            state: Mutex::new(Default::default()),
        })
    }
    fn filter(&self, pod: &PodView<'_>, node: &NodeView<'_>, _: &()) -> Status {
        let want = number(pod.annotations().get("slots.example.com/want"));
        let state = self.state.lock().unwrap();
        if Slots::free(&state.0, node).len() >= want as usize {
            Status::success()
        } else {
            Status::unschedulable("node(s) had too few free slots")
        }
    }
    fn reserve(&self, pod: &PodView<'_>, node: &NodeView<'_>) -> Status {
        if pod.annotations().get("slots.example.com/panic").is_some() {
            panic!("reserve broke");
        }
        let want = number(pod.annotations().get("slots.example.com/want")) as usize;
        let mut state = self.state.lock().unwrap();
        let mut free = Slots::free(&state.0, node);
        if free.len() < want {
            return Status::unschedulable("node(s) had too few free slots");
        }
        free.truncate(want);
        state
            .0
            .insert(pod.uid().to_string(), (node.name().to_string(), free));
        Status::success()
    }
    fn unreserve(&self, pod: &PodView<'_>, node: &NodeView<'_>) {
        if pod.annotations().get("slots.example.com/panic").is_some() {
            panic!("unreserve broke");
        }
        let mut state = self.state.lock().unwrap();
        if self.careless {
            // Frees some reservation on the node, the pod's or another's.
            let any = state
                .0
                .iter()
                .find(|(_, (n, _))| n == node.name())
                .map(|(uid, _)| uid.clone());
            if let Some(uid) = any {
                state.0.remove(&uid);
            }
        } else {
            state.0.remove(pod.uid());
        }
    }
    fn permit(&self, pod: &PodView<'_>, _: &NodeView<'_>) -> Status {
        let gang = number(pod.annotations().get("slots.example.com/gang")) as usize;
        if gang == 0 {
            return Status::success();
        }
        let mut state = self.state.lock().unwrap();
        if state.1.len() + 1 < gang {
            state.1.push(pod.uid().to_string());
            let wait = if self.careless { 1200 } else { 30 };
            return Status::wait(Duration::from_secs(wait));
        }
        for uid in state.1.drain(..) {
            self.host.permit_allow(&uid);
        }
        Status::success()
    }
    fn pre_bind(&self, pod: &PodView<'_>, _: &NodeView<'_>, patch: &mut PodPatch<'_>) -> Status {
        let state = self.state.lock().unwrap();
        let slots = match state.0.get(pod.uid()) {
            Some((_, s)) => s,
            None => return Status::error("no slots reserved for the pod"),
        };
        let join = |sep: &str| {
            slots
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(sep)
        };
        let label = join(if self.careless { "," } else { "-" });
        let s = patch.set_label("slots.example.com/assigned", &label);
        if !s.is_success() {
            return s;
        }
        patch.set_annotation("slots.example.com/assigned", &join(","))
    }
    fn pre_enqueue(&self, pod: &PodView<'_>) -> Status {
        if pod.annotations().get("slots.example.com/hold").is_some() {
            return Status::unschedulable_and_unresolvable("pod is held");
        }
        Status::success()
    }
}

fn slots(args: &str) -> testing::Plugin {
    let d = schedplug::plugin_descriptor!(
        Slots,
        name = "Slots",
        version = "1",
        hooks = [filter, reserve, unreserve, permit, pre_bind, pre_enqueue]
    );
    testing::Plugin::from_descriptor(d, args).unwrap()
}

fn wanting(name: &str, slots: &str) -> Pod {
    Pod::new(name)
        .uid(&format!("uid-{name}"))
        .annotation("slots.example.com/want", slots)
}

fn node(count: &str) -> Node {
    Node::new("n1").label("slots.example.com/count", count)
}

#[test]
fn only_the_listed_hooks_are_set() {
    let d = schedplug::plugin_descriptor!(Slots, name = "Slots", version = "1", hooks = [filter]);
    assert!(d.reserve.is_none() && d.unreserve.is_none() && d.permit.is_none());
    assert!(d.pre_bind.is_none() && d.pre_enqueue.is_none());
    assert_eq!(
        d.struct_size as usize,
        std::mem::size_of::<schedplug_plugin>()
    );
    let p = slots("{}");
    assert!(p.has_reserve() && p.has_unreserve() && p.has_permit());
    assert!(p.has_pre_bind() && p.has_pre_enqueue());
}

#[test]
fn reserve_unreserve_and_pre_bind_the_assignment() {
    let p = slots("{}");
    let (a, b, n) = (wanting("a", "2"), wanting("b", "2"), node("3"));
    assert_eq!(p.reserve(&a.view(), &n.view()), Status::success());
    assert_eq!(
        p.filter(&b.view(), &n.view()).code(),
        SCHEDPLUG_UNSCHEDULABLE
    );
    let bound = p.pre_bind(&a.view(), &n.view());
    assert_eq!(bound.status, Status::success());
    assert_eq!(bound.labels["slots.example.com/assigned"], "0-1");
    assert_eq!(bound.annotations["slots.example.com/assigned"], "0,1");
    p.unreserve(&a.view(), &n.view());
    assert!(p.filter(&b.view(), &n.view()).is_success());
    assert_eq!(
        p.pre_bind(&a.view(), &n.view()).status,
        Status::error("no slots reserved for the pod")
    );
    assert_eq!(p.unreserve_problem(&b, &n), None);
}

#[test]
fn permit_waits_and_decisions_are_answered_as_the_host_does() {
    let p = slots("{}");
    let n = node("2");
    let g1 = wanting("g1", "1").annotation("slots.example.com/gang", "2");
    let g2 = wanting("g2", "1").annotation("slots.example.com/gang", "2");
    let waits = p.permit(&g1.view(), &n.view());
    assert_eq!(waits.status.code(), SCHEDPLUG_WAIT);
    assert_eq!(waits.timeout_ms, 30000);
    assert!(p.permit(&g2.view(), &n.view()).status.is_success());
    let d = p.permit_decisions();
    assert_eq!(d.len(), 1);
    assert_eq!((d[0].uid.as_str(), d[0].allow), ("uid-g1", true));
    assert_eq!(d[0].answer, SCHEDPLUG_SUCCESS);
    // Waiting again, then unreserved: a decision on it is SKIP.
    assert_eq!(
        p.permit(&g1.view(), &n.view()).status.code(),
        SCHEDPLUG_WAIT
    );
    p.unreserve(&g1.view(), &n.view());
    assert!(p.permit(&g2.view(), &n.view()).status.is_success());
    assert_eq!(p.permit_decisions().last().unwrap().answer, SCHEDPLUG_SKIP);
}

#[test]
fn pre_enqueue_gates() {
    let p = slots("{}");
    assert!(p.pre_enqueue(&wanting("a", "1").view()).is_success());
    let held = wanting("a", "1").annotation("slots.example.com/hold", "1");
    assert_eq!(
        p.pre_enqueue(&held.view()),
        Status::unschedulable_and_unresolvable("pod is held")
    );
}

#[test]
fn the_careless_modes_mistakes_are_reported() {
    let p = slots(r#"{"careless": true}"#);
    let n = node("2");
    assert!(p
        .reserve(&wanting("other", "2").view(), &n.view())
        .is_success());
    let problem = p.unreserve_problem(&wanting("b", "1"), &n).unwrap();
    assert!(
        problem.starts_with(
            "plugin Slots's unreserve() is not tolerant: pod \"b\" on node \"n1\" got filter \
             Unschedulable (\"node(s) had too few free slots\") before, and filter Success after"
        ),
        "{problem}"
    );
    let a = wanting("a", "2");
    assert!(p.reserve(&a.view(), &n.view()).is_success());
    let bound = p.pre_bind(&a.view(), &n.view());
    assert!(
        bound.status.reason().starts_with(
            "plugin Slots's pre_bind(): the label \"slots.example.com/assigned\" was refused: its \
             value \"0,1\" is not valid (a label value is empty or 1 to 63 characters: letters, \
             digits, '-', '_' and '.', beginning and ending with a letter or digit) (the plugin \
             says: the host refused the pod label"
        ),
        "{}",
        bound.status.reason()
    );
    assert!(bound.labels.is_empty());
    let g = wanting("g", "1").annotation("slots.example.com/gang", "2");
    assert_eq!(
        p.permit(&g.view(), &n.view()).status,
        Status::error(
            "permit returned Status::wait(1200000 ms); the timeout must be from 1 ms to 900000 \
             ms (15 minutes, kube-scheduler's limit)"
        )
    );
}

#[test]
fn panics_are_errors_and_unreserves_are_logged() {
    let p = slots("{}");
    let pod = wanting("a", "1").annotation("slots.example.com/panic", "1");
    let n = node("2");
    assert_eq!(
        p.reserve(&pod.view(), &n.view()),
        Status::error("plugin Slots panicked in reserve: reserve broke")
    );
    p.unreserve(&pod.view(), &n.view());
    assert_eq!(
        p.logs(),
        vec![
            "error: plugin Slots panicked in unreserve: unreserve broke (pod default/a on node \
              n1; ignored: unreserve cannot fail, release what reserve took without panicking)"
        ]
    );
}

/// Reports what permit_allow("u1") answered, as its filter's reason.
struct Asks(Host);

impl Plugin for Asks {
    type PodState = ();
    fn create(ctx: &Create<'_>) -> Result<Self, Status> {
        ctx.host().log(LogLevel::Info, "created");
        Ok(Asks(ctx.host()))
    }
    fn filter(&self, _: &PodView<'_>, _: &NodeView<'_>, _: &()) -> Status {
        Status::unschedulable(format!("answer {}", self.0.permit_allow("u1")))
    }
}

#[test]
fn permit_services_answer_as_the_host_and_are_errors_on_an_older_host() {
    let d = schedplug::plugin_descriptor!(Asks, name = "Asks", version = "1", hooks = [filter]);
    let kit = testing::Plugin::from_descriptor(d, "{}").unwrap();
    let (pod, n) = (Pod::new("p"), Node::new("n"));
    // The kit, like the host, answers SKIP for a pod that does not wait.
    assert_eq!(kit.filter(&pod.view(), &n.view()).reason(), "answer 5");
    assert_eq!(kit.permit_decisions()[0].answer, SCHEDPLUG_SKIP);

    // A v1.5 host's struct ends before permit_allow and permit_reject.
    let fns = 2 * std::mem::size_of::<usize>();
    let old = schedplug_host {
        struct_size: (std::mem::size_of::<schedplug_host>() - fns) as u32,
        ..Default::default()
    };
    let mut instance = std::ptr::null_mut();
    let mut text = [0u8; 256];
    let mut reason = schedplug_reason {
        text: text.as_mut_ptr() as *mut std::os::raw::c_char,
        capacity: 256,
    };
    unsafe {
        assert_eq!(
            d.create.unwrap()(b"{}\0".as_ptr() as _, 2, &old, &mut instance, &mut reason),
            SCHEDPLUG_SUCCESS
        );
        let code = d.filter.unwrap()(instance, pod.view().raw(), n.view().raw(), &mut reason);
        assert_eq!(code, SCHEDPLUG_UNSCHEDULABLE);
        d.destroy.unwrap()(instance);
    }
    assert_eq!(&text[..8], b"answer 1");
}
