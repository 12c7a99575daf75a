//! The host's rules (`sdk/internal/schedplug/runtime.hpp`, which
//! schedplug-host and the C++ kit compile): which descriptors and settings
//! it accepts, with its sentences, its UTF-8 repair of plugin text, and its
//! normalization. Rust cannot include that header, so the rules are written
//! again here and checked against the same vectors as the host
//! (`proto/testdata/descriptor_vectors.json`, `settings_vectors.json`,
//! `normalize_vectors.json`; the tests in `rules_tests.rs`).
//!
//! One file, although over 400 lines: it mirrors runtime.hpp's rules one
//! for one, so that the two read side by side.

use crate::abi::*;
use std::ffi::CStr;
use std::mem::size_of;
use std::os::raw::c_char;
use std::ptr;

/// The size of the descriptor as ABI version 1 first defined it
/// (runtime::kV1DescriptorSize).
fn v1_descriptor_size() -> usize {
    crate::view::field_layout!(schedplug_plugin, events).0 + size_of::<u64>()
}

/// The length of the well-formed UTF-8 character (RFC 3629) at the start
/// of `s`, or 0 (runtime::utf8_char_length).
fn utf8_char_length(s: &[u8]) -> usize {
    let c = match s.first() {
        Some(&c) => c,
        None => return 0,
    };
    if c < 0x80 {
        return 1;
    }
    let (n, lo, hi) = match c {
        0xC2..=0xDF => (2, 0x80, 0xBF),
        0xE0 => (3, 0xA0, 0xBF), // overlong
        0xED => (3, 0x80, 0x9F), // surrogates
        0xE1..=0xEF => (3, 0x80, 0xBF),
        0xF0 => (4, 0x90, 0xBF), // overlong
        0xF4 => (4, 0x80, 0x8F), // above U+10FFFF
        0xF1..=0xF3 => (4, 0x80, 0xBF),
        _ => return 0,
    };
    if s.len() < n || s[1] < lo || s[1] > hi {
        return 0;
    }
    if s[2..n].iter().all(|&b| b & 0xC0 == 0x80) {
        n
    } else {
        0
    }
}

/// `s` as valid UTF-8, as the host copies plugin text (runtime::valid_utf8):
/// an incomplete character at the very end (text cut at a byte limit) is
/// dropped; every other byte that starts no well-formed character becomes
/// U+FFFD.
pub(super) fn valid_utf8(s: &[u8]) -> String {
    if let Ok(t) = std::str::from_utf8(s) {
        return t.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    let mut at = 0;
    while at < s.len() {
        let n = utf8_char_length(&s[at..]);
        if n > 0 {
            out.push_str(&String::from_utf8_lossy(&s[at..at + n]));
            at += n;
            continue;
        }
        // The tail is the start of one character that was cut off: drop it.
        let rest = &s[at..];
        let wanted = match rest[0] {
            0xF0..=0xFF => 4,
            0xE0..=0xEF => 3,
            0xC2..=0xDF => 2,
            _ => 0,
        };
        if wanted > rest.len() && rest[1..].iter().all(|&b| b & 0xC0 == 0x80) {
            break;
        }
        out.push('\u{FFFD}');
        at += 1;
    }
    out
}

fn is_upper_camel_case(name: &[u8]) -> bool {
    name.first().map_or(false, u8::is_ascii_uppercase) && name.iter().all(u8::is_ascii_alphanumeric)
}

fn upper_camel_case_of(name: &[u8]) -> String {
    let mut out = String::new();
    let mut upper_next = true;
    for &c in name {
        if !c.is_ascii_alphanumeric() {
            upper_next = true;
            continue;
        }
        out.push(if upper_next {
            c.to_ascii_uppercase()
        } else {
            c
        } as char);
        upper_next = false;
    }
    if is_upper_camel_case(out.as_bytes()) {
        out
    } else {
        String::new()
    }
}

/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn c_bytes<'a>(p: *const c_char) -> &'a [u8] {
    if p.is_null() {
        &[]
    } else {
        CStr::from_ptr(p).to_bytes()
    }
}

/// A descriptor string as the kit shows it (valid UTF-8).
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
pub(super) unsafe fn c_text(p: *const c_char) -> String {
    valid_utf8(c_bytes(p))
}

/// The bytes of a view string.
///
/// # Safety
/// `s.data` is valid for `s.len` bytes when not NULL.
unsafe fn str_bytes<'a>(s: schedplug_str) -> &'a [u8] {
    if s.data.is_null() || s.len == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(s.data as *const u8, s.len as usize)
    }
}

/// runtime::accept_descriptor: checks what schedplug_plugin_v1() returned
/// and copies it into a zero-filled descriptor of this crate's size.
///
/// # Safety
/// `entry` is NULL or points to a descriptor valid for its struct_size.
pub(super) unsafe fn accept_descriptor(
    entry: *const schedplug_plugin,
) -> Result<schedplug_plugin, String> {
    if entry.is_null() {
        return Err(
            "`schedplug_plugin_v1()` returned NULL; it must return a pointer to \
                    the plugin's static descriptor"
                .to_string(),
        );
    }
    let abi_version = (entry as *const u32).read();
    if abi_version != SCHEDPLUG_ABI_VERSION {
        return Err(format!(
            "built for schedplug ABI version {abi_version}, this host speaks version \
             {SCHEDPLUG_ABI_VERSION}; rebuild the plugin against this host's SDK"
        ));
    }
    let struct_size = (entry as *const u32).add(1).read() as usize;
    if struct_size < v1_descriptor_size() {
        return Err(format!(
            "the descriptor is {struct_size} bytes, smaller than the {} bytes of ABI \
             version 1's schedplug_plugin; set struct_size to sizeof(schedplug_plugin) \
             and rebuild against this host's SDK",
            v1_descriptor_size()
        ));
    }
    let mut d = schedplug_plugin::default();
    // Only the fields both sides know.
    ptr::copy_nonoverlapping(
        entry as *const u8,
        &mut d as *mut schedplug_plugin as *mut u8,
        struct_size.min(size_of::<schedplug_plugin>()),
    );
    let name_bytes = c_bytes(d.name);
    if name_bytes.is_empty() {
        return Err(
            "the plugin reports an empty name; set the descriptor's `name` to the \
                    UpperCamelCase name profiles enable, e.g. \"HwEncrypt\""
                .to_string(),
        );
    }
    let name = valid_utf8(name_bytes);
    if !is_upper_camel_case(name_bytes) {
        let hint = upper_camel_case_of(name_bytes);
        let hint = if hint.is_empty() {
            hint
        } else {
            format!(" (e.g. \"{hint}\")")
        };
        return Err(format!(
            "the plugin name \"{name}\" is not UpperCamelCase ([A-Z][A-Za-z0-9]*, as \
             kube-scheduler plugin names are); rename it{hint} and enable it under that name"
        ));
    }
    let version = c_bytes(d.version);
    if version.is_empty() {
        return Err(format!(
            "plugin \"{name}\" reports no version string; set the descriptor's `version`, \
             e.g. \"1.0.0\""
        ));
    }
    if std::str::from_utf8(version).is_err() {
        return Err(format!(
            "plugin \"{name}\" reports a version string that is not valid UTF-8 (\"{}\"); \
             set the descriptor's `version` to text such as \"1.0.0\"",
            valid_utf8(version)
        ));
    }
    if d.create.is_none() {
        return Err(format!(
            "plugin \"{name}\" has no create() hook; every plugin must set `create`"
        ));
    }
    if d.normalize_score.is_some() && d.score.is_none() {
        return Err(format!(
            "plugin \"{name}\" implements NormalizeScore but not Score; set `score` too, or \
             remove `normalize_score`"
        ));
    }
    if d.normalize_policy > SCHEDPLUG_NORMALIZE_REVERSE {
        return Err(format!(
            "plugin \"{name}\" declares normalize_policy {}, which is not one of NONE (0), \
             LINEAR (1), REVERSE (2)",
            d.normalize_policy
        ));
    }
    if d.normalize_score.is_some() && d.normalize_policy != SCHEDPLUG_NORMALIZE_NONE {
        return Err(format!(
            "plugin \"{name}\" sets both normalize_score and a normalize_policy; use one: \
             drop normalize_score or set the policy to SCHEDPLUG_NORMALIZE_NONE"
        ));
    }
    if d.refresh.is_some() && d.refresh_period_ms == 0 {
        return Err(format!(
            "plugin \"{name}\" has a refresh() hook but refresh_period_ms is 0; set how \
             often the host should call it"
        ));
    }
    Ok(d)
}

/// runtime::settings_problem: the rules of plugin.h for the settings
/// create() returned.
///
/// # Safety
/// The key arrays of `s` are valid for their counts (the instance's).
pub(super) unsafe fn settings_problem(
    d: &schedplug_plugin,
    s: &schedplug_settings,
) -> Option<String> {
    if s.normalize_policy > SCHEDPLUG_NORMALIZE_REVERSE {
        return Some(format!(
            "normalize_policy {} is not one of NONE (0), LINEAR (1), REVERSE (2)",
            s.normalize_policy
        ));
    }
    if d.normalize_score.is_some() && s.normalize_policy != SCHEDPLUG_NORMALIZE_NONE {
        return Some(
            "a normalize_policy was set but the plugin implements normalize_score; use one \
             of them"
                .to_string(),
        );
    }
    if d.refresh.is_some() && s.refresh_period_ms == 0 {
        return Some(
            "refresh_period_ms is 0 but the plugin has a refresh() hook; set how often the \
             host should call it"
                .to_string(),
        );
    }
    for (field, bits, known, names) in [
        ("data", s.data, SCHEDPLUG_DATA_ALL, "SCHEDPLUG_DATA_*"),
        ("hints", s.hints, SCHEDPLUG_HINT_ALL, "SCHEDPLUG_HINT_*"),
        ("events", s.events, SCHEDPLUG_EVENT_ALL, "SCHEDPLUG_EVENT_*"),
    ] {
        if bits & !known != 0 {
            return Some(format!(
                "{field} has bits {:#x} that are not {names} values",
                bits & !known
            ));
        }
    }
    // A refresh hook changes what the answers depend on over time, which
    // both identity hints rule out (plugin.h).
    for (bit, hint, answers) in [
        (
            SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY,
            "SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY",
            "verdicts",
        ),
        (
            SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY,
            "SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY",
            "scores",
        ),
    ] {
        if s.hints & bit != 0 && d.refresh.is_some() && s.refresh_period_ms > 0 {
            return Some(format!(
                "hints has {hint}, which promises {answers} that do not change over time, but \
                 the plugin has a refresh() hook (every {} ms) that can change them; drop the \
                 hint, or the refresh hook",
                s.refresh_period_ms
            ));
        }
    }
    if s.hints & SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY != 0 && d.score.is_none() {
        return Some(
            "hints has SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY, a promise about score() and \
             normalize_score(), but the plugin has no score() hook; drop the hint, or \
             implement score()"
                .to_string(),
        );
    }
    for (field, count_field, keys, count) in [
        (
            "pod_label_keys",
            "pod_label_key_count",
            s.pod_label_keys,
            s.pod_label_key_count,
        ),
        (
            "pod_annotation_keys",
            "pod_annotation_key_count",
            s.pod_annotation_keys,
            s.pod_annotation_key_count,
        ),
    ] {
        if count == 0 {
            continue;
        }
        if keys.is_null() {
            return Some(format!(
                "{field} is NULL but {count_field} is {count}; point {field} at the {count} \
                 keys, or set the count to 0"
            ));
        }
        if count > u64::from(SCHEDPLUG_POD_KEYS_MAX) {
            return Some(format!(
                "{count_field} is {count}, more than the {SCHEDPLUG_POD_KEYS_MAX} keys a list \
                 may hold; declare at most {SCHEDPLUG_POD_KEYS_MAX}, or drop \
                 SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS and the keys"
            ));
        }
        for i in 0..count as usize {
            let k = keys.add(i).read();
            if k.len == 0 {
                return Some(format!(
                    "{field}[{i}] is an empty key; list only the non-empty keys the plugin \
                     reads (an empty list declares none)"
                ));
            }
            if k.data.is_null() {
                return Some(format!(
                    "{field}[{i}] has NULL data and length {}; point it at the key's bytes",
                    k.len
                ));
            }
            let b = str_bytes(k);
            if std::str::from_utf8(b).is_err() {
                return Some(format!(
                    "{field}[{i}] (\"{}\") is not valid UTF-8, so no pod's key can equal \
                     it; list the keys as Kubernetes writes them",
                    valid_utf8(b)
                ));
            }
        }
        if s.hints & SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS == 0 {
            return Some(format!(
                "{field} lists {count} {} (the first is \"{}\") but hints lacks \
                 SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS, which the keys go with; set \
                 the hint, or leave {field} empty",
                if count == 1 { "key" } else { "keys" },
                valid_utf8(str_bytes(keys.read()))
            ));
        }
    }
    None
}

/// runtime::PodKeys::copy: sorted, without duplicates.
///
/// # Safety
/// `keys` is NULL or valid for `count` views.
pub(super) unsafe fn copy_keys(keys: *const schedplug_str, count: u64) -> Vec<String> {
    if keys.is_null() {
        return Vec::new();
    }
    let mut out: Vec<String> = (0..count as usize)
        .map(|i| valid_utf8(str_bytes(keys.add(i).read())))
        .collect();
    out.sort();
    out.dedup();
    out
}

pub(super) fn no_reason(reason: &str) -> &str {
    if reason.is_empty() {
        "(no reason given)"
    } else {
        reason
    }
}

/// runtime::min_max: min-max onto [0, 100], reversed for REVERSE; every
/// node gets 100 when all raw scores are equal. Exact for any i64 values,
/// rounded to nearest.
fn min_max(scores: &mut [schedplug_node_score], reverse: bool) {
    let lo = match scores.iter().map(|s| s.score).min() {
        Some(lo) => lo,
        None => return,
    };
    let hi = scores.iter().map(|s| s.score).max().unwrap_or(lo);
    if lo == hi {
        for s in scores.iter_mut() {
            s.score = 100;
        }
        return;
    }
    // Differences of i64 values fit in u64 (wrapping gives the exact
    // distance when hi >= lo); the product needs 128 bits.
    let range = (hi as u64).wrapping_sub(lo as u64);
    for s in scores.iter_mut() {
        let offset = if reverse {
            (hi as u64).wrapping_sub(s.score as u64)
        } else {
            (s.score as u64).wrapping_sub(lo as u64)
        };
        s.score = ((u128::from(offset) * 100 + u128::from(range / 2)) / u128::from(range)) as i64;
    }
}

/// runtime::apply_policy: a declared policy (NONE leaves the values).
pub(super) fn apply_policy(
    policy: schedplug_normalize_policy,
    scores: &mut [schedplug_node_score],
) {
    if policy == SCHEDPLUG_NORMALIZE_LINEAR {
        min_max(scores, false);
    } else if policy == SCHEDPLUG_NORMALIZE_REVERSE {
        min_max(scores, true);
    }
}

/// runtime::out_of_range: the host never clamps; a score outside [0, 100]
/// is an error naming the plugin and the first such node.
pub(super) fn out_of_range<'a>(
    plugin: &str,
    custom_normalize: bool,
    scores: impl IntoIterator<Item = (&'a str, i64)>,
) -> Option<String> {
    let (node, score) = scores.into_iter().find(|&(_, s)| !(0..=100).contains(&s))?;
    let how = if custom_normalize {
        "after its normalize_score()"
    } else {
        "with normalize policy NONE (declare LINEAR or REVERSE, or implement \
         normalize_score, to map raw values)"
    };
    Some(format!(
        "plugin {plugin} gave node \"{node}\" the score {score} {how}; scores must be in [0, 100]"
    ))
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;
