//! Settings per instance (`Plugin::configure`): keys, hints, data and
//! events that depend on the args, as the host receives them and as the
//! kit holds the plugin to them.

use schedplug::abi::*;
use schedplug::testing::{self, Node, NodePod, Pod, Row};
use schedplug::{Create, Gates, Plugin, Settings, Status};

type PodView<'a> = schedplug::Pod<'a>;
type NodeView<'a> = schedplug::Node<'a>;

/// Keeps a pod off nodes that already run a pod of its app. The app's
/// label key is an arg, so the declared key comes from the args too: read
/// once per pod in pod_begin, under the declared-keys hint.
struct OnePerNode {
    app_label: String,
    // Test-only knobs that break the settings on purpose.
    declare: Option<String>,
    hint: bool,
    events: u64,
}

impl Plugin for OnePerNode {
    type PodState = Option<String>;
    const DATA: u64 = SCHEDPLUG_DATA_NODE_PODS;

    fn create(ctx: &Create<'_>) -> Result<Self, Status> {
        let args = ctx.args()?;
        args.allow_only(&["appLabel", "declare", "hint", "podDeleteOnly"])?;
        Ok(OnePerNode {
            app_label: args.get_str("appLabel")?.unwrap_or("app").to_string(),
            declare: args.get_str("declare")?.map(str::to_string),
            hint: args.get_bool("hint")?.unwrap_or(true),
            events: if args.get_bool("podDeleteOnly")?.unwrap_or(false) {
                SCHEDPLUG_EVENT_POD_DELETE
            } else {
                SCHEDPLUG_EVENT_POD_DELETE | SCHEDPLUG_EVENT_NODE_ADD
            },
        })
    }

    fn configure(&self, settings: &mut Settings) {
        let key = self.declare.as_ref().unwrap_or(&self.app_label);
        settings.pod_label_keys = vec![key.clone()];
        if self.hint {
            settings.hints |= SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS
                | SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY;
        }
        settings.events = self.events;
    }

    fn pod_begin(&self, pod: &PodView<'_>, gates: &mut Gates) -> Result<Option<String>, Status> {
        let app = pod.labels().get(&self.app_label).map(str::to_string);
        gates.filter = app.is_some();
        gates.score = false;
        Ok(app)
    }

    fn filter(&self, _pod: &PodView<'_>, node: &NodeView<'_>, app: &Option<String>) -> Status {
        let taken = node
            .pods()
            .iter()
            .any(|p| p.labels().get(&self.app_label) == app.as_deref());
        if taken {
            Status::unschedulable("node(s) already run a pod of the app")
        } else {
            Status::success()
        }
    }
}

fn one_per_node(args: &str) -> Result<testing::Plugin, testing::Error> {
    testing::Plugin::from_descriptor(
        schedplug::plugin_descriptor!(
            OnePerNode,
            name = "OnePerNode",
            version = "1",
            hooks = [pod_begin, filter]
        ),
        args,
    )
}

fn nodes(key: &str) -> Vec<Node> {
    vec![
        Node::new("n1").pod(NodePod::new("web-1").label(key, "web")),
        Node::new("n2").pod(NodePod::new("db-1").label(key, "db")),
    ]
}

#[test]
fn keys_from_the_args_are_declared_and_pass_the_kit() {
    let key = "app.kubernetes.io/name";
    let plugin = one_per_node(&format!(r#"{{"appLabel": "{key}"}}"#)).unwrap();
    assert_eq!(plugin.pod_keys(), (&[key.to_string()][..], &[][..]));
    let s = plugin.settings();
    assert_eq!(
        s.hints,
        SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS | SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY
    );
    assert_eq!(s.data, SCHEDPLUG_DATA_NODE_PODS);
    assert_eq!(
        s.events,
        SCHEDPLUG_EVENT_POD_DELETE | SCHEDPLUG_EVENT_NODE_ADD
    );
    // The pod carries labels the plugin never reads: the kit's copy without
    // them gets the same answers, so the promise holds.
    let pod = Pod::new("web-2")
        .label(key, "web")
        .label("pod-template-hash", "5d8f");
    plugin.run(&pod, &nodes(key)).assert_rows(&[
        Row::new("n1").filter(
            SCHEDPLUG_UNSCHEDULABLE,
            "node(s) already run a pod of the app",
        ),
        Row::new("n2"),
    ]);
    // The default key, declared the same way.
    let plugin = one_per_node("{}").unwrap();
    assert_eq!(plugin.pod_keys().0, &["app".to_string()][..]);
}

#[test]
fn events_from_the_args_reach_the_host() {
    let plugin = one_per_node(r#"{"podDeleteOnly": true}"#).unwrap();
    assert_eq!(plugin.settings().events, SCHEDPLUG_EVENT_POD_DELETE);
    assert_eq!(plugin.requeue_events(), SCHEDPLUG_EVENT_POD_DELETE);
}

#[test]
fn a_key_declared_but_not_read_breaks_the_promise_in_the_kit() {
    // Declares "team" but reads "app": the kit's copy without the
    // undeclared "app" label is filtered differently.
    let plugin = one_per_node(r#"{"declare": "team"}"#).unwrap();
    let pod = Pod::new("web-2").label("app", "web");
    let err = plugin.run(&pod, &nodes("app")).error.unwrap();
    assert!(
        err.starts_with(
            "OnePerNode promised SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS (HINTS), but"
        ),
        "{err}"
    );
    assert!(
        err.ends_with("(declared label keys: \"team\"; annotation keys: none), or drop the hint"),
        "{err}"
    );
}

#[test]
fn broken_settings_from_configure_are_the_hosts_sentence() {
    let err = one_per_node(r#"{"hint": false}"#).err().unwrap();
    assert_eq!(
        err.to_string(),
        "OnePerNode (schedplug_plugin_v1()) returned broken settings from create(): \
         pod_label_keys lists 1 key (the first is \"app\") but hints lacks \
         SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS, which the keys go with; set the hint, \
         or leave pod_label_keys empty (args given: {\"hint\": false})"
    );
    // An empty key cannot come from the args: get_str refuses "".
    let err = one_per_node(r#"{"appLabel": ""}"#).err().unwrap();
    assert!(
        err.to_string()
            .contains("arg \"appLabel\" must be a non-empty string, got \"\""),
        "{err}"
    );
}

/// The raw settings a v1.4 host sees after create(), without the kit.
#[test]
fn the_exported_create_writes_the_configured_settings() {
    let d = schedplug::plugin_descriptor!(
        OnePerNode,
        name = "OnePerNode",
        version = "1",
        hooks = [pod_begin, filter]
    );
    let mut settings = schedplug_settings {
        struct_size: std::mem::size_of::<schedplug_settings>() as u32,
        events: d.events,
        ..Default::default()
    };
    let host = schedplug_host {
        struct_size: std::mem::size_of::<schedplug_host>() as u32,
        settings: &mut settings,
        ..Default::default()
    };
    let args = br#"{"appLabel": "tier"}"#;
    let mut instance = std::ptr::null_mut();
    let code = unsafe {
        (d.create.unwrap())(
            args.as_ptr() as *const std::os::raw::c_char,
            args.len() as u64,
            &host,
            &mut instance,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(code, SCHEDPLUG_SUCCESS);
    assert_eq!(settings.pod_label_key_count, 1);
    let key = unsafe { settings.pod_label_keys.read() };
    let key = unsafe { std::slice::from_raw_parts(key.data as *const u8, key.len as usize) };
    assert_eq!(key, b"tier");
    assert_eq!(settings.data, SCHEDPLUG_DATA_NODE_PODS);
    unsafe { (d.destroy.unwrap())(instance) };
}
