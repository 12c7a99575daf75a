//! The test kit's results and assertions: one scheduling cycle's rows
//! (Cycle, NodeResult), the expected rows (Row) and compare(), which says
//! which cells differ.

use super::*;
/// The name kube-scheduler gives a status code.
pub fn code_name(code: schedplug_code) -> &'static str {
    match code {
        SCHEDPLUG_SUCCESS => "Success",
        SCHEDPLUG_ERROR => "Error",
        SCHEDPLUG_UNSCHEDULABLE => "Unschedulable",
        SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE => "UnschedulableAndUnresolvable",
        SCHEDPLUG_SKIP => "Skip",
        _ => "Unknown",
    }
}

/// One node's row of a scheduling cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeResult {
    pub node: String,
    /// SKIP: the plugin has no filter, or skipped it for the pod.
    pub filter: Status,
    /// false: filtered out, or Score skipped.
    pub scored: bool,
    /// score() as returned.
    pub raw: i64,
    /// After normalization, in [0, 100].
    pub score: i64,
}

/// One pod through one plugin, as schedplug-host runs it in a cycle.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cycle {
    /// Set when the cycle failed as a whole: pod_begin failed, a filter or
    /// score returned ERROR, normalization did, or a hint's promise was
    /// broken (the host's message, or the kit's).
    pub error: Option<String>,
    /// The plugin's gates skipped the hook (or it has none).
    pub filter_skipped: bool,
    pub score_skipped: bool,
    /// In the order given.
    pub nodes: Vec<NodeResult>,
}

impl Cycle {
    /// The nodes that passed Filter.
    pub fn feasible(&self) -> Vec<&str> {
        self.nodes
            .iter()
            .filter(|n| matches!(n.filter.code(), SCHEDPLUG_SUCCESS | SCHEDPLUG_SKIP))
            .map(|n| n.node.as_str())
            .collect()
    }

    /// The row of `node`.
    pub fn row(&self, node: &str) -> Option<&NodeResult> {
        self.nodes.iter().find(|n| n.node == node)
    }

    /// A printable table: the cycle's error, then one line per node:
    /// filter verdict and reason, raw and normalized score ("-" when not
    /// scored).
    pub fn table(&self) -> String {
        match &self.error {
            Some(e) => format!("error: {e}\n{}", self.rows()),
            None => self.rows(),
        }
    }

    /// The table without the error line. A row whose reason is the
    /// cycle's error says so instead of repeating it.
    pub fn rows(&self) -> String {
        let mut out = String::new();
        for n in &self.nodes {
            out += &format!("{}  {}", n.node, code_name(n.filter.code()));
            if self.error.as_deref() == Some(n.filter.reason()) {
                out += " (the cycle's error)";
            } else if !n.filter.reason().is_empty() {
                out += &format!(" ({})", n.filter.reason());
            }
            if n.scored {
                out += &format!("  raw={} score={}\n", n.raw, n.score);
            } else {
                out += "  score=-\n";
            }
        }
        out
    }

    /// Panics with [`compare`]'s difference unless the rows match.
    #[track_caller]
    pub fn assert_rows(&self, expected: &[Row]) {
        let diff = compare(self, expected);
        if !diff.is_empty() {
            panic!("the cycle differs from the expected rows:\n{diff}");
        }
    }
}

/// An expected row for [`compare`]: `Row::new("n1")` passes Filter and is
/// not scored; `.filter(code, reason)` and `.score(n)` say otherwise.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub node: String,
    pub filter: schedplug_code,
    pub reason: String,
    /// None: not scored.
    pub score: Option<i64>,
}

impl Row {
    pub fn new(node: &str) -> Row {
        Row {
            node: node.to_string(),
            filter: SCHEDPLUG_SUCCESS,
            reason: String::new(),
            score: None,
        }
    }
    pub fn filter(mut self, code: schedplug_code, reason: &str) -> Row {
        self.filter = code;
        self.reason = reason.to_string();
        self
    }
    pub fn score(mut self, score: i64) -> Row {
        self.score = Some(score);
        self
    }
}

/// Compares a cycle with the expected rows (same nodes, same order).
/// Returns "" when they match, else one line per difference and the whole
/// table, with the cycle's error once (a row with that reason refers to
/// it).
pub fn compare(cycle: &Cycle, expected: &[Row]) -> String {
    let mut diff = String::new();
    if let Some(e) = &cycle.error {
        diff += &format!("the cycle failed: {e}\n");
    }
    if cycle.nodes.len() != expected.len() {
        diff += &format!(
            "expected {} nodes, the cycle has {}\n",
            expected.len(),
            cycle.nodes.len()
        );
    }
    for (i, (got, want)) in cycle.nodes.iter().zip(expected).enumerate() {
        if got.node != want.node {
            diff += &format!("row {i}: expected node {}, got {}\n", want.node, got.node);
            continue;
        }
        if got.filter.code() != want.filter || got.filter.reason() != want.reason {
            let reason = if cycle.error.as_deref() == Some(got.filter.reason()) {
                "(the cycle's error)".to_string()
            } else {
                format!("\"{}\"", got.filter.reason())
            };
            diff += &format!(
                "{}: expected filter {} \"{}\", got {} {reason}\n",
                want.node,
                code_name(want.filter),
                want.reason,
                code_name(got.filter.code()),
            );
        }
        let want_score = want.score.map_or("-".to_string(), |s| s.to_string());
        let got_score = if got.scored {
            got.score.to_string()
        } else {
            "-".to_string()
        };
        if got_score != want_score {
            diff += &format!(
                "{}: expected score {want_score}, got {got_score}\n",
                want.node
            );
        }
    }
    if diff.is_empty() {
        return diff;
    }
    diff + "the cycle:\n" + &cycle.rows()
}
