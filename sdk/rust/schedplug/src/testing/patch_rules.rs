//! The host's rules for the hooks of plugins that own a resource (ABI
//! v1.6), the kit's copy of `sdk/internal/schedplug/resource_hooks.hpp`
//! with the same sentences: Kubernetes label and annotation syntax, the
//! pod patch's limits, the codes each hook may return and the permit
//! timeout's limit.

use crate::abi::*;
use crate::status::Status;
use std::collections::BTreeMap;

/// Why `s` is not a DNS-1123 subdomain (a qualified name's prefix).
fn dns_subdomain_problem(s: &str) -> Option<String> {
    if s.is_empty() {
        return Some("the prefix before '/' is empty".to_string());
    }
    if s.len() > 253 {
        return Some("the prefix before '/' is longer than 253 characters".to_string());
    }
    let alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    let bad = s.split('.').any(|part| {
        let b = part.as_bytes();
        b.is_empty()
            || !alnum(b[0])
            || !alnum(b[b.len() - 1])
            || !b.iter().all(|&c| alnum(c) || c == b'-')
    });
    if bad {
        return Some(format!(
            "the prefix \"{s}\" is not a DNS subdomain (lowercase letters, digits, '-' and \
             '.', each part between dots beginning and ending with a letter or digit)"
        ));
    }
    None
}

/// Why `s` is not a label value / a qualified name's name part.
fn name_part_problem(s: &str, what: &str, empty_ok: bool) -> Option<String> {
    if s.is_empty() {
        return if empty_ok {
            None
        } else {
            Some(format!("{what} is empty"))
        };
    }
    if s.len() > 63 {
        return Some(format!(
            "{what} is {} characters long, more than 63",
            s.len()
        ));
    }
    let b = s.as_bytes();
    let ok = b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_' || c == b'.');
    if ok {
        None
    } else {
        Some(format!(
            "{what} must consist of letters, digits, '-', '_' and '.', and begin and end with a \
             letter or digit"
        ))
    }
}

fn qualified_name_problem(key: &str) -> Option<String> {
    match key.find('/') {
        None => name_part_problem(key, "the name", false),
        Some(slash) if key[slash + 1..].contains('/') => {
            Some("it has more than one '/'".to_string())
        }
        Some(slash) => dns_subdomain_problem(&key[..slash])
            .or_else(|| name_part_problem(&key[slash + 1..], "the name after '/'", false)),
    }
}

/// Why Kubernetes would refuse the pod label `key`=`value`, in a sentence.
pub fn pod_label_problem(key: &str, value: &str) -> Option<String> {
    if let Some(p) = qualified_name_problem(key) {
        return Some(format!(
            "the label key \"{key}\" is not a qualified name ([prefix/]name, e.g. \
             example.com/device): {p}"
        ));
    }
    name_part_problem(value, "the value", true).map(|p| {
        let shown: String = value.chars().take(80).collect();
        format!("the label {key}=\"{shown}\" is not a valid label value: {p}")
    })
}

/// Why the pod annotation `key`=`value` is refused, in a sentence.
pub fn pod_annotation_problem(key: &str, value: &str) -> Option<String> {
    let lower = match key.find('/') {
        Some(slash) => format!("{}{}", key[..slash].to_ascii_lowercase(), &key[slash..]),
        None => key.to_string(),
    };
    if let Some(p) = qualified_name_problem(&lower) {
        return Some(format!(
            "the annotation key \"{key}\" is not a qualified name ([prefix/]name, e.g. \
             example.com/device): {p}"
        ));
    }
    if value.len() > SCHEDPLUG_POD_PATCH_VALUE_MAX as usize {
        return Some(format!(
            "the annotation {key} has a value of {} bytes, more than the \
             {SCHEDPLUG_POD_PATCH_VALUE_MAX} a pre_bind() may set",
            value.len()
        ));
    }
    None
}

/// What one pre_bind() call recorded, checked entry by entry.
#[derive(Default)]
pub(super) struct PatchBook {
    pub(super) labels: BTreeMap<String, String>,
    pub(super) annotations: BTreeMap<String, String>,
    /// The first refusal's sentence.
    pub(super) refused: Option<String>,
}

impl PatchBook {
    /// Records `key`=`value` as a label (or an annotation), or refuses it.
    pub(super) fn put(&mut self, label: bool, key: &[u8], value: &[u8]) -> schedplug_code {
        let (key, value) = match (std::str::from_utf8(key), std::str::from_utf8(value)) {
            (Ok(k), Ok(v)) => (k, v),
            _ => {
                return self.refuse(format!(
                    "the {} {} is not valid UTF-8",
                    if label { "label" } else { "annotation" },
                    String::from_utf8_lossy(key)
                ))
            }
        };
        let problem = if label {
            pod_label_problem(key, value)
        } else {
            pod_annotation_problem(key, value)
        };
        let into = if label {
            &self.labels
        } else {
            &self.annotations
        };
        let problem = problem.or_else(|| {
            let full =
                self.labels.len() + self.annotations.len() >= SCHEDPLUG_POD_PATCH_MAX as usize;
            (full && !into.contains_key(key)).then(|| {
                format!(
                    "setting {key} would make the patch hold more than \
                     {SCHEDPLUG_POD_PATCH_MAX} labels and annotations"
                )
            })
        });
        if let Some(p) = problem {
            return self.refuse(p);
        }
        let into = if label {
            &mut self.labels
        } else {
            &mut self.annotations
        };
        into.insert(key.to_string(), value.to_string());
        SCHEDPLUG_SUCCESS
    }

    fn refuse(&mut self, problem: String) -> schedplug_code {
        self.refused.get_or_insert(problem);
        SCHEDPLUG_ERROR
    }
}

/// What reserve(), permit(), pre_bind() or pre_enqueue() (`hook`) returned,
/// as the host reads it.
pub(super) fn resource_hook_verdict(
    plugin: &str,
    hook: &str,
    code: schedplug_code,
    reason: String,
) -> Status {
    match code {
        SCHEDPLUG_WAIT if hook != "permit" => Status::error(format!(
            "plugin {plugin} returned SCHEDPLUG_WAIT from {hook}(); only permit() may make a pod \
             wait"
        )),
        SCHEDPLUG_SUCCESS
        | SCHEDPLUG_ERROR
        | SCHEDPLUG_UNSCHEDULABLE
        | SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE
        | SCHEDPLUG_WAIT
        | SCHEDPLUG_SKIP => Status::new(code, reason),
        _ => Status::error(format!(
            "plugin {plugin} returned the unknown status code {code} from {hook}()"
        )),
    }
}

/// How long a pod waits after permit() returned WAIT with `timeout_ms`
/// (0: the most), or the problem when it is longer than allowed.
pub(super) fn permit_wait_ms(plugin: &str, timeout_ms: u64) -> Result<u64, String> {
    let max = u64::from(SCHEDPLUG_PERMIT_TIMEOUT_MAX_MS);
    match timeout_ms {
        0 => Ok(max),
        t if t > max => Err(format!(
            "plugin {plugin}'s permit() made the pod wait {t} ms, longer than the {max} ms (15 \
             minutes) kube-scheduler allows; set timeout_ms to at most \
             SCHEDPLUG_PERMIT_TIMEOUT_MAX_MS (0 means that much)"
        )),
        t => Ok(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_as_kubernetes_validates_them() {
        assert_eq!(pod_label_problem("app", ""), None);
        assert_eq!(pod_label_problem("example.com/a_b.c-d", "A-1_b.2"), None);
        assert_eq!(pod_label_problem("x", &"v".repeat(63)), None);
        for (k, v) in [
            ("x", "v".repeat(64)),
            ("x", "-a".to_string()),
            ("x", "a b".to_string()),
            ("", "a".to_string()),
            ("Example.com/a", "a".to_string()),
            ("a/b/c", "a".to_string()),
            ("example..com/a", "a".to_string()),
            ("example.com/", "a".to_string()),
        ] {
            assert!(pod_label_problem(k, &v).is_some(), "{k}={v}");
        }
        assert!(pod_label_problem(&format!("{}/b", "a".repeat(254)), "a").is_some());
        assert_eq!(
            pod_label_problem("a/b/c", "v").unwrap(),
            "the label key \"a/b/c\" is not a qualified name ([prefix/]name, e.g. \
             example.com/device): it has more than one '/'"
        );
    }

    #[test]
    fn annotation_keys_qualified_values_bounded() {
        assert_eq!(
            pod_annotation_problem("Example.COM/Key", "any, text: \n"),
            None
        );
        let max = SCHEDPLUG_POD_PATCH_VALUE_MAX as usize;
        assert_eq!(pod_annotation_problem("k", &"v".repeat(max)), None);
        assert_eq!(
            pod_annotation_problem("k", &"v".repeat(max + 1)).unwrap(),
            "the annotation k has a value of 4097 bytes, more than the 4096 a pre_bind() may set"
        );
        assert!(pod_annotation_problem("bad key", "v").is_some());
    }

    #[test]
    fn the_book_refuses_the_seventeenth_entry_and_keeps_the_last_value() {
        let mut book = PatchBook::default();
        for i in 0..SCHEDPLUG_POD_PATCH_MAX {
            let key = format!("k{i}");
            assert_eq!(
                book.put(i % 2 == 0, key.as_bytes(), b"v"),
                SCHEDPLUG_SUCCESS
            );
        }
        assert_eq!(book.put(true, b"k0", b"again"), SCHEDPLUG_SUCCESS);
        assert_eq!(book.labels["k0"], "again");
        assert_eq!(book.put(false, b"k99", b"v"), SCHEDPLUG_ERROR);
        assert_eq!(book.put(true, b"bad key", b"v"), SCHEDPLUG_ERROR);
        assert_eq!(
            book.refused.as_deref(),
            Some("setting k99 would make the patch hold more than 16 labels and annotations")
        );
    }

    #[test]
    fn permit_timeouts() {
        assert_eq!(permit_wait_ms("P", 0), Ok(900000));
        assert_eq!(permit_wait_ms("P", 900000), Ok(900000));
        assert!(permit_wait_ms("P", 900001)
            .unwrap_err()
            .contains("longer than the 900000 ms"));
    }
}
