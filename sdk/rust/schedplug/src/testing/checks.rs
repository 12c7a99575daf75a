//! The test kit's checks of what a plugin promised: the filter and score
//! hints (SCHEDPLUG_HINT_*: node pods, pod identity, declared pod keys) and
//! the data it declared (SCHEDPLUG_DATA_*: a hook that answers differently
//! with a bit it did not declare is named with the bit to declare). Methods
//! of [`Plugin`](super::Plugin); the declared events' checks are in
//! `events.rs`.

use super::*;

impl Plugin {
    /// The promises of the filter hints for `given` on `node` (sent),
    /// whose filter answered `v` for `pod` (sent, with its state): the
    /// node's pods, then the pod's identity and its undeclared keys. The
    /// first one broken, in a sentence.
    pub(super) fn filter_promise_problem(
        &self,
        given: &schedplug_pod,
        pod: &schedplug_pod,
        node: &schedplug_node,
        v: &Status,
    ) -> Option<String> {
        if self.settings.hints & SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS != 0 {
            let mut bare = *node;
            bare.requested = schedplug_resource_list::default();
            bare.pod_count = 0;
            bare.pod_list = ptr::null();
            bare.pod_list_count = 0;
            let without = self.filter_once(pod, &bare);
            if without != *v {
                return Some(format!(
                    "{} promised SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS (HINTS), but its \
                     filter on node \"{}\" answered {} with the node's pods and {} without \
                     them; drop the hint, or read nothing of node->requested, pod_count and \
                     pod_list",
                    self.name,
                    text(node.name),
                    said(v),
                    said(&without)
                ));
            }
        }
        self.pod_promise_problem(given, node)
    }

    /// None when the hooks answer the same for `pod` over `nodes` with the
    /// declared data only and with each undeclared SCHEDPLUG_DATA_* bit the
    /// test gave (the pod and nodes carry it); else a sentence: which bits
    /// change the answers, where (hook, node), and to declare them.
    pub fn undeclared_data_problem(&self, pod: &Pod, nodes: &[Node]) -> Option<String> {
        let mut given = carried_pod(pod.view().raw());
        for node in nodes {
            given |= carried_node(node.view().raw());
        }
        let undeclared = given & !self.data() & SCHEDPLUG_DATA_ALL;
        if undeclared == 0 {
            return None;
        }
        let host = self.run_sending(pod, nodes, self.data(), false);
        let mut reads = 0;
        let mut first = None;
        for bit in (0..64).map(|i| 1u64 << i).filter(|b| undeclared & b != 0) {
            let d = self.cycle_difference(
                &host,
                &self.run_sending(pod, nodes, self.data() | bit, false),
            );
            if d.is_some() {
                reads |= bit;
                first = first.or(d);
            }
        }
        if reads == 0 {
            reads = undeclared; // only together, if at all
        }
        let all = self.run_sending(pod, nodes, self.data() | reads, false);
        let (whence, with) = self.cycle_difference(&host, &all).or(first)?;
        let names = data_bit_names(reads);
        let it = if reads.count_ones() == 1 {
            "it"
        } else {
            "them"
        };
        Some(format!(
            "{} reads data it did not declare ({names}): {whence} without {it} (as schedplug-host \
             sends it) and {with} with {it} (as the test gave it); add {names} to the data it \
             declares (DATA in its impl Plugin, or settings.data in configure)",
            self.name
        ))
    }

    /// Where two cycles of one pod first differ, in words: "on node \"n\"
    /// its filter answered X" for the first, and the second's answer. None
    /// when they answered the same.
    pub(super) fn cycle_difference(&self, a: &Cycle, b: &Cycle) -> Option<(String, String)> {
        let gate = |c: &Cycle| {
            format!(
                "{} filter, {} score",
                if c.filter_skipped { "skipped" } else { "ran" },
                if c.score_skipped { "skipped" } else { "ran" }
            )
        };
        if a.filter_skipped != b.filter_skipped || a.score_skipped != b.score_skipped {
            let hook = if self.d.pod_begin.is_some() {
                "pod_begin"
            } else {
                "applies"
            };
            return Some((format!("its {hook} {}", gate(a)), gate(b)));
        }
        let said = |s: &Status| {
            if s.reason().is_empty() {
                code_name(s.code()).to_string()
            } else {
                format!("{} (\"{}\")", code_name(s.code()), s.reason())
            }
        };
        let raw = |r: &NodeResult| {
            if r.scored {
                r.raw.to_string()
            } else {
                "no score".to_string()
            }
        };
        for (x, y) in a.nodes.iter().zip(&b.nodes) {
            let on = format!("on node \"{}\" its", x.node);
            if x.filter.code() != y.filter.code() || x.filter.reason() != y.filter.reason() {
                return Some((
                    format!("{on} filter answered {}", said(&x.filter)),
                    said(&y.filter),
                ));
            }
            if x.scored != y.scored || x.raw != y.raw {
                return Some((format!("{on} score answered {}", raw(x)), raw(y)));
            }
            if x.score != y.score {
                return Some((
                    format!("{on} score normalized to {}", x.score),
                    y.score.to_string(),
                ));
            }
        }
        if a.nodes.len() != b.nodes.len() || a.error != b.error {
            let failed = |c: &Cycle| match &c.error {
                None => "no error".to_string(),
                Some(e) => format!("the error \"{e}\""),
            };
            return Some((format!("its cycle had {}", failed(a)), failed(b)));
        }
        None
    }

    /// The promises about the pod (identity, then undeclared keys): the
    /// first one broken on `node`, in a sentence.
    pub(super) fn pod_promise_problem(
        &self,
        given: &schedplug_pod,
        node: &schedplug_node,
    ) -> Option<String> {
        self.identity_problem(given, node)
            .or_else(|| self.undeclared_keys_problem(given, node))
    }

    /// For a plugin that promised SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY:
    /// begins `given` afresh and filters it on `node`, then does the same
    /// for a copy named "twin-of-<name>" with the uid "twin-of-<uid>"; a
    /// sentence naming what differed (None also without the promise).
    pub fn identity_problem(&self, given: &schedplug_pod, node: &schedplug_node) -> Option<String> {
        if self.settings.hints & SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY == 0 {
            return None;
        }
        let node = sent_node(node, self.data());
        with_twin(given, |again, twin| {
            let got = self.outcome(again, &node);
            let twin_got = self.outcome(twin, &node);
            (got != twin_got).then(|| {
                twin_differs(
                    "SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY",
                    &self.name,
                    &format!("on node \"{}\" ", text(node.name)),
                    given,
                    &got,
                    &twin_got,
                    "applies, pod_begin and filter",
                )
            })
        })
    }

    /// For a plugin that promised SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY:
    /// begins `given` afresh, scores it on `nodes` (sent) and, when
    /// `normalized`, normalizes those scores; then does the same for a copy
    /// named "twin-of-<name>" with the uid "twin-of-<uid>"; a sentence
    /// naming what differed (None also without the promise).
    pub fn score_identity_problem(
        &self,
        given: &schedplug_pod,
        nodes: &[schedplug_node],
        normalized: bool,
    ) -> Option<String> {
        if self.settings.hints & SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY == 0 {
            return None;
        }
        with_twin(given, |again, twin| {
            let got = self.score_outcome(again, nodes, normalized);
            let twin_got = self.score_outcome(twin, nodes, normalized);
            (got != twin_got).then(|| {
                twin_differs(
                    "SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY",
                    &self.name,
                    "",
                    given,
                    &got,
                    &twin_got,
                    "applies, pod_begin, score and normalize_score",
                )
            })
        })
    }

    /// For a plugin that promised
    /// SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS: begins `given` afresh
    /// and filters it on `node`, then does the same for a copy that keeps
    /// only the labels and annotations whose keys the plugin declared and
    /// gains the label and annotation [`UNDECLARED_KEY`]: "x"; a sentence
    /// naming what differed (None also without the promise).
    pub fn undeclared_keys_problem(
        &self,
        given: &schedplug_pod,
        node: &schedplug_node,
    ) -> Option<String> {
        if self.settings.hints & SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS == 0 {
            return None;
        }
        let node = sent_node(node, self.data());
        let declared =
            |keys: &[String], k: &str| keys.binary_search_by(|x| x.as_str().cmp(k)).is_ok();
        let mut extra = UNDECLARED_KEY.to_string();
        while declared(&self.label_keys, &extra) || declared(&self.annotation_keys, &extra) {
            extra.push('-');
        }
        let value = "x";
        let kv_size = read_field!(given as *const schedplug_pod, schedplug_pod, kv_size)
            .map_or(0, |n| n as usize)
            .max(size_of::<schedplug_kv>());
        let mut again = *given;
        again.state = ptr::null_mut();
        let mut copy = again;
        let (labels, dropped_labels, _label_store) =
            only_declared(given.labels, kv_size, &self.label_keys, &extra, value);
        let (annotations, dropped_annotations, _annotation_store) = only_declared(
            given.annotations,
            kv_size,
            &self.annotation_keys,
            &extra,
            value,
        );
        copy.labels = labels;
        copy.annotations = annotations;
        let got = self.outcome(&again, &node);
        let copy_got = self.outcome(&copy, &node);
        if got == copy_got {
            return None;
        }
        let listed = |keys: &[String]| {
            if keys.is_empty() {
                "none".to_string()
            } else {
                keys.iter()
                    .map(|k| format!("\"{k}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        Some(format!(
            "{} promised SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS (HINTS), but on node \
             \"{}\" pod \"{}\" got {got} and a copy without its undeclared labels ({}) and \
             annotations ({}) and with the undeclared label and annotation \"{extra}\": \
             \"{value}\" got {copy_got}; declare every pod label and annotation key the plugin \
             reads in applies, pod_begin and filter (declared label keys: {}; annotation keys: \
             {}), or drop the hint",
            self.name,
            text(node.name),
            text(given.name),
            listed(&dropped_labels),
            listed(&dropped_annotations),
            listed(&self.label_keys),
            listed(&self.annotation_keys)
        ))
    }
}

/// Calls `f` with `given` begun afresh (no state) and a copy named
/// "twin-of-<name>" with the uid "twin-of-<uid>", for the identity
/// promises.
pub(super) fn with_twin<R>(
    given: &schedplug_pod,
    f: impl FnOnce(&schedplug_pod, &schedplug_pod) -> R,
) -> R {
    let twin_name = format!("twin-of-{}", text(given.name));
    let twin_uid = format!("twin-of-{}", text(given.uid));
    let mut again = *given;
    again.state = ptr::null_mut();
    let mut twin = again;
    twin.name = st(&twin_name);
    twin.uid = st(&twin_uid);
    f(&again, &twin)
}

/// The sentence for `plugin`'s broken `hint`: `place` (empty or ending in
/// a space) pod `given` got `got` and its twin `twin_got`; the advice
/// names the `hooks` that must not read name and uid.
pub(super) fn twin_differs(
    hint: &str,
    plugin: &str,
    place: &str,
    given: &schedplug_pod,
    got: &str,
    twin_got: &str,
    hooks: &str,
) -> String {
    let (name, uid) = (text(given.name), text(given.uid));
    format!(
        "{plugin} promised {hint} (HINTS), but {place}pod \"{name}\" (uid \"{uid}\") got {got} \
         and a copy named \"twin-of-{name}\" (uid \"twin-of-{uid}\") got {twin_got}; drop the \
         hint, or read neither the pod's name nor its uid in {hooks}"
    )
}
