//! The host's rules for the hooks of plugins that own a resource (ABI
//! v1.6), the kit's copy of `sdk/internal/schedplug/resource_hooks.hpp`
//! with the same sentences: Kubernetes label and annotation syntax, the
//! pod patch's limits, the codes each hook may return and the permit
//! timeout's limit.

use crate::abi::*;
use crate::status::Status;
use std::collections::BTreeMap;

fn alnum(c: u8) -> bool {
    c.is_ascii_alphanumeric()
}

fn lower_alnum(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

/// [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])? of at most 63 characters.
fn is_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && alnum(b[0])
        && alnum(b[b.len() - 1])
        && b.iter()
            .all(|&c| alnum(c) || c == b'-' || c == b'_' || c == b'.')
}

/// A DNS-1123 subdomain: lowercase labels of [a-z0-9-], alphanumeric at
/// both ends, at most 63 characters each, joined by '.', at most 253.
fn is_dns_subdomain(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|label| {
            let b = label.as_bytes();
            !b.is_empty()
                && b.len() <= 63
                && lower_alnum(b[0])
                && lower_alnum(b[b.len() - 1])
                && b.iter().all(|&c| lower_alnum(c) || c == b'-')
        })
}

/// A key or value as a message shows it: cut at 80 bytes.
fn shown(s: &str) -> String {
    if s.len() <= 80 {
        return s.to_string();
    }
    let mut n = 80;
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    format!("{}...", &s[..n])
}

fn qualified_name_problem(key: &str) -> Option<String> {
    let name = match key.find('/') {
        Some(slash) => {
            let prefix = &key[..slash];
            if !is_dns_subdomain(prefix) {
                return Some(format!(
                    "its prefix \"{}\" is not a DNS subdomain (lowercase letters, digits, '-' \
                     and '.', at most 253 characters)",
                    shown(prefix)
                ));
            }
            &key[slash + 1..]
        }
        None => key,
    };
    (!is_name_part(name)).then(|| {
        format!(
            "its name \"{}\" is not a qualified name (1 to 63 characters: letters, digits, \
             '-', '_' and '.', beginning and ending with a letter or digit)",
            shown(name)
        )
    })
}

/// Why the host refuses the pod label `key`=`value`, in a sentence naming
/// the key.
pub fn pod_label_problem(key: &str, value: &str) -> Option<String> {
    if let Some(p) = qualified_name_problem(key) {
        return Some(format!("the label key \"{}\" was refused: {p}", shown(key)));
    }
    (!value.is_empty() && !is_name_part(value)).then(|| {
        format!(
            "the label \"{}\" was refused: its value \"{}\" is not valid (a label value is \
             empty or 1 to 63 characters: letters, digits, '-', '_' and '.', beginning and \
             ending with a letter or digit)",
            shown(key),
            shown(value)
        )
    })
}

/// Why the host refuses the pod annotation `key`=`value`, in a sentence
/// naming the key.
pub fn pod_annotation_problem(key: &str, value: &str) -> Option<String> {
    if let Some(p) = qualified_name_problem(key) {
        return Some(format!(
            "the annotation key \"{}\" was refused: {p}",
            shown(key)
        ));
    }
    (value.len() > SCHEDPLUG_POD_PATCH_VALUE_MAX as usize).then(|| {
        format!(
            "the annotation \"{}\" was refused: its value is {} bytes, more than \
             SCHEDPLUG_POD_PATCH_VALUE_MAX ({SCHEDPLUG_POD_PATCH_VALUE_MAX})",
            shown(key),
            value.len()
        )
    })
}

/// What one pre_bind() call set, checked entry by entry.
#[derive(Default)]
pub(super) struct PatchBook {
    pub(super) labels: BTreeMap<String, String>,
    pub(super) annotations: BTreeMap<String, String>,
    /// The first refusal's sentence.
    pub(super) refused: Option<String>,
}

impl PatchBook {
    /// Keeps `key`=`value` as a label (or an annotation), or refuses it.
    pub(super) fn put(&mut self, label: bool, key: &[u8], value: &[u8]) -> schedplug_code {
        let (key, value) = match (std::str::from_utf8(key), std::str::from_utf8(value)) {
            (Ok(k), Ok(v)) => (k, v),
            _ => {
                return self.refuse(format!(
                    "the {} \"{}\" was refused: its value is not valid UTF-8",
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
                    "the {} \"{}\" was refused: the patch already holds \
                     {SCHEDPLUG_POD_PATCH_MAX} labels and annotations, the most one pre_bind() \
                     may set (SCHEDPLUG_POD_PATCH_MAX)",
                    if label { "label" } else { "annotation" },
                    shown(key)
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
/// as the host reads it: SKIP is success; WAIT (without a reason) only from
/// permit() (`may_wait`); any other unknown code an error naming the plugin.
pub(super) fn resource_hook_verdict(
    plugin: &str,
    hook: &str,
    code: schedplug_code,
    reason: String,
    may_wait: bool,
) -> Status {
    match code {
        SCHEDPLUG_SUCCESS | SCHEDPLUG_SKIP => Status::success(),
        SCHEDPLUG_WAIT if may_wait => Status::new(SCHEDPLUG_WAIT, ""),
        SCHEDPLUG_WAIT => Status::error(format!(
            "plugin {plugin} returned the code WAIT, which only permit() may return, from \
             {hook}()"
        )),
        SCHEDPLUG_ERROR | SCHEDPLUG_UNSCHEDULABLE | SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE => {
            Status::new(code, reason)
        }
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
        assert!(pod_label_problem(&format!("{}.com/a", "p".repeat(64)), "a").is_some());
        assert_eq!(
            pod_label_problem("a/b/c", "v").unwrap(),
            "the label key \"a/b/c\" was refused: its name \"b/c\" is not a qualified name (1 \
             to 63 characters: letters, digits, '-', '_' and '.', beginning and ending with a \
             letter or digit)"
        );
    }

    #[test]
    fn annotation_keys_qualified_values_bounded() {
        assert_eq!(
            pod_annotation_problem("example.com/Key", "any, text: \n"),
            None
        );
        assert!(pod_annotation_problem("Example.COM/Key", "v").is_some());
        let max = SCHEDPLUG_POD_PATCH_VALUE_MAX as usize;
        assert_eq!(pod_annotation_problem("k", &"v".repeat(max)), None);
        assert_eq!(
            pod_annotation_problem("k", &"v".repeat(max + 1)).unwrap(),
            "the annotation \"k\" was refused: its value is 4097 bytes, more than \
             SCHEDPLUG_POD_PATCH_VALUE_MAX (4096)"
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
            Some(
                "the annotation \"k99\" was refused: the patch already holds 16 labels and \
                 annotations, the most one pre_bind() may set (SCHEDPLUG_POD_PATCH_MAX)"
            )
        );
    }

    #[test]
    fn codes_as_the_host_reads_them() {
        let v = |code, hook, may_wait| resource_hook_verdict("P", hook, code, "x".into(), may_wait);
        assert_eq!(v(SCHEDPLUG_SKIP, "reserve", false), Status::success());
        assert_eq!(
            v(SCHEDPLUG_WAIT, "permit", true),
            Status::new(SCHEDPLUG_WAIT, "")
        );
        assert_eq!(
            v(SCHEDPLUG_WAIT, "reserve", false).reason(),
            "plugin P returned the code WAIT, which only permit() may return, from reserve()"
        );
        assert_eq!(
            v(9, "pre_enqueue", false).reason(),
            "plugin P returned the unknown status code 9 from pre_enqueue()"
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
