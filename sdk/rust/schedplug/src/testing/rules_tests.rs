//! The kit's rules on the host's test vectors (proto/testdata), which the
//! C++ rules (sdk/tests/rules_vectors_test.cpp, host/tests/core) and the
//! shim's normalization (Go) check too. No JSON crate: the crate has no
//! dependencies, so a small reader for the vectors' JSON is below.
//!
//! One file, although over 400 lines: the reader and the three vector
//! tests serve only each other.

use super::*;
use std::collections::BTreeMap;
use std::ffi::{c_void, CString};

#[derive(Clone, Debug, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    /// The number's text: the vectors hold i64 values beyond f64's 2^53.
    Number(String),
    Str(String),
    List(Vec<Json>),
    Object(BTreeMap<String, Json>),
}

impl Json {
    fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(m) => m.get(key),
            _ => None,
        }
    }
    fn at(&self, key: &str) -> &Json {
        self.get(key)
            .unwrap_or_else(|| panic!("the vector has no \"{key}\": {self:?}"))
    }
    fn str(&self) -> &str {
        match self {
            Json::Str(s) => s,
            _ => panic!("not a string: {self:?}"),
        }
    }
    fn i64(&self) -> i64 {
        match self {
            Json::Number(n) => n.parse().unwrap_or_else(|_| panic!("not an i64: {n}")),
            _ => panic!("not a number: {self:?}"),
        }
    }
    fn u64(&self) -> u64 {
        match self {
            Json::Number(n) => n.parse().unwrap_or_else(|_| panic!("not a u64: {n}")),
            _ => panic!("not a number: {self:?}"),
        }
    }
    fn list(&self) -> &[Json] {
        match self {
            Json::List(l) => l,
            _ => panic!("not a list: {self:?}"),
        }
    }
    fn u64_or(&self, key: &str, default: u64) -> u64 {
        self.get(key).map_or(default, Json::u64)
    }
}

/// Reads the JSON the vectors are written in (RFC 8259; numbers kept as
/// text).
struct Reader<'a> {
    s: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn parse(text: &str) -> Json {
        let mut r = Reader {
            s: text.as_bytes(),
            at: 0,
        };
        let v = r.value();
        r.space();
        assert_eq!(r.at, r.s.len(), "text after the JSON value");
        v
    }
    fn space(&mut self) {
        while self.at < self.s.len() && self.s[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        self.space();
        if self.s.get(self.at) == Some(&c) {
            self.at += 1;
            true
        } else {
            false
        }
    }
    fn word(&mut self, w: &str, v: Json) -> Json {
        assert!(
            self.s[self.at..].starts_with(w.as_bytes()),
            "bad JSON at byte {}",
            self.at
        );
        self.at += w.len();
        v
    }
    fn value(&mut self) -> Json {
        self.space();
        match self.s.get(self.at) {
            Some(b'{') => {
                self.at += 1;
                let mut m = BTreeMap::new();
                if !self.eat(b'}') {
                    loop {
                        self.space();
                        let k = self.string();
                        assert!(self.eat(b':'), "no ':' at byte {}", self.at);
                        m.insert(k, self.value());
                        if self.eat(b'}') {
                            break;
                        }
                        assert!(self.eat(b','), "no ',' at byte {}", self.at);
                    }
                }
                Json::Object(m)
            }
            Some(b'[') => {
                self.at += 1;
                let mut l = Vec::new();
                if !self.eat(b']') {
                    loop {
                        l.push(self.value());
                        if self.eat(b']') {
                            break;
                        }
                        assert!(self.eat(b','), "no ',' at byte {}", self.at);
                    }
                }
                Json::List(l)
            }
            Some(b'"') => Json::Str(self.string()),
            Some(b'n') => self.word("null", Json::Null),
            Some(b't') => self.word("true", Json::Bool(true)),
            Some(b'f') => self.word("false", Json::Bool(false)),
            _ => {
                let start = self.at;
                while self.at < self.s.len() && b"+-.eE0123456789".contains(&self.s[self.at]) {
                    self.at += 1;
                }
                assert!(self.at > start, "bad JSON at byte {start}");
                Json::Number(String::from_utf8(self.s[start..self.at].to_vec()).unwrap())
            }
        }
    }
    fn hex4(&mut self) -> u32 {
        let t = std::str::from_utf8(&self.s[self.at..self.at + 4]).unwrap();
        self.at += 4;
        u32::from_str_radix(t, 16).unwrap()
    }
    fn string(&mut self) -> String {
        assert_eq!(self.s[self.at], b'"', "no string at byte {}", self.at);
        self.at += 1;
        let mut out = Vec::new();
        loop {
            let c = self.s[self.at];
            self.at += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let e = self.s[self.at];
                    self.at += 1;
                    let ch = match e {
                        b'n' => '\n',
                        b't' => '\t',
                        b'r' => '\r',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'u' => {
                            let mut u = self.hex4();
                            if (0xD800..0xDC00).contains(&u) {
                                self.at += 2; // \u of the low surrogate
                                u = 0x10000 + ((u - 0xD800) << 10) + (self.hex4() - 0xDC00);
                            }
                            char::from_u32(u).unwrap()
                        }
                        other => other as char,
                    };
                    let mut b = [0; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut b).as_bytes());
                }
                _ => out.push(c),
            }
        }
        String::from_utf8(out).unwrap()
    }
}

fn vectors(file: &str) -> Vec<Json> {
    let path = format!(
        "{}/../../../proto/testdata/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    let v = Reader::parse(&text).at("vectors").list().to_vec();
    assert!(v.len() >= 10, "{path} holds only {} vectors", v.len());
    v
}

/// Text as a vector gives it: a string, or {"hex": bytes}.
fn bytes_of(v: &Json) -> Vec<u8> {
    match v {
        Json::Str(s) => s.as_bytes().to_vec(),
        _ => {
            let hex = v.at("hex").str();
            (0..hex.len() / 2)
                .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
                .collect()
        }
    }
}

// Hooks the vectors set; never called.
unsafe extern "C" fn create_hook(
    _: *const c_char,
    _: u64,
    _: *const schedplug_host,
    _: *mut *mut c_void,
    _: *mut schedplug_reason,
) -> schedplug_code {
    SCHEDPLUG_ERROR
}
unsafe extern "C" fn score_hook(
    _: *mut c_void,
    _: *const schedplug_pod,
    _: *const schedplug_node,
    _: *mut i64,
    _: *mut schedplug_reason,
) -> schedplug_code {
    SCHEDPLUG_ERROR
}
unsafe extern "C" fn normalize_hook(
    _: *mut c_void,
    _: *const schedplug_pod,
    _: *mut schedplug_node_score,
    _: u64,
    _: *mut schedplug_reason,
) -> schedplug_code {
    SCHEDPLUG_ERROR
}
unsafe extern "C" fn refresh_hook(_: *mut c_void, _: *mut schedplug_reason) -> schedplug_code {
    SCHEDPLUG_ERROR
}

fn set_hooks(hooks: &Json, d: &mut schedplug_plugin) {
    for h in hooks.list() {
        match h.str() {
            "create" => d.create = Some(create_hook),
            "score" => d.score = Some(score_hook),
            "normalize_score" => d.normalize_score = Some(normalize_hook),
            "refresh" => d.refresh = Some(refresh_hook),
            other => panic!("unknown hook {other}"),
        }
    }
}

#[test]
fn descriptor_vectors() {
    for v in vectors("descriptor_vectors.json") {
        let name = v.at("name").str();
        let input = v.at("descriptor");
        let mut texts: Vec<CString> = Vec::new();
        let mut text_of = |t: &Json| -> *const c_char {
            match t {
                Json::Null => ptr::null(),
                _ => {
                    texts.push(CString::new(bytes_of(t)).unwrap());
                    texts.last().unwrap().as_ptr()
                }
            }
        };
        let mut d = schedplug_plugin::default();
        let entry: *const schedplug_plugin = if *input == Json::Null {
            ptr::null()
        } else {
            d.abi_version = input.u64_or("abi_version", u64::from(SCHEDPLUG_ABI_VERSION)) as u32;
            d.struct_size = match input.get("struct_size") {
                None => size_of::<schedplug_plugin>() as u32,
                Some(Json::Str(v1)) if v1 == "v1" => v1_descriptor_size() as u32,
                Some(n) => n.u64() as u32,
            };
            d.name = text_of(input.at("name"));
            d.version = text_of(input.at("version"));
            set_hooks(input.at("hooks"), &mut d);
            d.normalize_policy = input.u64_or("normalize_policy", 0) as u32;
            d.refresh_period_ms = input.u64_or("refresh_period_ms", 0) as u32;
            &d
        };
        // SAFETY: `entry` is NULL or `d`, whose strings live in `texts`.
        let got = unsafe { accept_descriptor(entry) }
            .err()
            .unwrap_or_default();
        assert_eq!(got, v.at("error").str(), "vector \"{name}\"");
    }
}

fn hints_of(hints: Option<&Json>) -> u64 {
    let mut bits = 0;
    for h in hints.map_or(&[][..], Json::list) {
        bits |= match h {
            Json::Number(_) => h.u64(),
            _ => match h.str() {
                "SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS" => {
                    SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS
                }
                "SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY" => {
                    SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY
                }
                "SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS" => {
                    SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS
                }
                "SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY" => {
                    SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY
                }
                other => panic!("unknown hint {other}"),
            },
        };
    }
    bits
}

/// A key list as a vector gives it: its bytes, views of them (NULL for
/// null) and the count (the list's length unless `count_field` says
/// otherwise).
struct KeyList {
    _bytes: Vec<Vec<u8>>,
    views: Vec<schedplug_str>,
    null: bool,
    count: u64,
}

fn key_list(s: &Json, field: &str, count_field: &str) -> KeyList {
    let mut k = KeyList {
        _bytes: Vec::new(),
        views: Vec::new(),
        null: true,
        count: 0,
    };
    if let Some(Json::List(keys)) = s.get(field) {
        k.null = false;
        for key in keys {
            if let Some(len) = key.get("null_data_len") {
                k.views.push(schedplug_str {
                    data: ptr::null(),
                    len: len.u64(),
                });
                continue;
            }
            k._bytes.push(bytes_of(key));
            let b = k._bytes.last().unwrap();
            k.views.push(schedplug_str {
                data: b.as_ptr() as *const c_char,
                len: b.len() as u64,
            });
        }
        k.count = k.views.len() as u64;
    }
    k.count = s.u64_or(count_field, k.count);
    k
}

impl KeyList {
    fn ptr(&self) -> *const schedplug_str {
        if self.null {
            ptr::null()
        } else {
            self.views.as_ptr()
        }
    }
}

#[test]
fn settings_vectors() {
    for v in vectors("settings_vectors.json") {
        let name = v.at("name").str();
        let mut d = schedplug_plugin {
            create: Some(create_hook),
            ..Default::default()
        };
        set_hooks(v.at("hooks"), &mut d);
        let input = v.at("settings");
        let labels = key_list(input, "pod_label_keys", "pod_label_key_count");
        let annotations = key_list(input, "pod_annotation_keys", "pod_annotation_key_count");
        let s = schedplug_settings {
            struct_size: size_of::<schedplug_settings>() as u32,
            normalize_policy: input.u64_or("normalize_policy", 0) as u32,
            refresh_period_ms: input.u64_or("refresh_period_ms", 0) as u32,
            data: input.u64_or("data", 0),
            events: input.u64_or("events", 0),
            hints: hints_of(input.get("hints")),
            pod_label_keys: labels.ptr(),
            pod_label_key_count: labels.count,
            pod_annotation_keys: annotations.ptr(),
            pod_annotation_key_count: annotations.count,
            ..Default::default()
        };
        // SAFETY: the arrays live in `labels` and `annotations`; a count
        // larger than a list is refused before any key is read.
        let got = unsafe { settings_problem(&d, &s) }.unwrap_or_default();
        assert_eq!(got, v.at("error").str(), "vector \"{name}\"");
    }
}

#[test]
fn normalize_vectors() {
    for v in vectors("normalize_vectors.json") {
        let name = v.at("name").str();
        let policy = match v.at("policy").str() {
            "NONE" => SCHEDPLUG_NORMALIZE_NONE,
            "LINEAR" => SCHEDPLUG_NORMALIZE_LINEAR,
            "REVERSE" => SCHEDPLUG_NORMALIZE_REVERSE,
            other => panic!("unknown policy {other}"),
        };
        let raw: Vec<i64> = v.at("raw").list().iter().map(Json::i64).collect();
        let nodes: Vec<String> = (0..raw.len()).map(|i| format!("n{i}")).collect();
        let mut scores: Vec<schedplug_node_score> = raw
            .iter()
            .zip(&nodes)
            .map(|(&score, n)| schedplug_node_score {
                node_name: schedplug_str {
                    data: n.as_ptr() as *const c_char,
                    len: n.len() as u64,
                },
                score,
            })
            .collect();
        apply_policy(policy, &mut scores);
        let got: Vec<i64> = scores.iter().map(|s| s.score).collect();
        let error = out_of_range(
            "P",
            false,
            nodes.iter().map(String::as_str).zip(got.iter().copied()),
        );
        match v.get("error") {
            Some(want) => assert_eq!(error.as_deref(), Some(want.str()), "vector \"{name}\""),
            None => {
                assert_eq!(error, None, "vector \"{name}\"");
                let want: Vec<i64> = v.at("want").list().iter().map(Json::i64).collect();
                assert_eq!(got, want, "vector \"{name}\"");
            }
        }
    }
}

#[test]
fn valid_utf8_repairs_as_the_host_does() {
    // The cases runtime::valid_utf8's comment names: a character cut at the
    // end is dropped, any other bad byte becomes U+FFFD.
    assert_eq!(valid_utf8(b"ok"), "ok");
    assert_eq!(valid_utf8(b"cut \xe2\x82"), "cut ");
    assert_eq!(valid_utf8(b"bad \xff end"), "bad \u{fffd} end");
    assert_eq!(valid_utf8(b"\xed\xa0\x80"), "\u{fffd}\u{fffd}\u{fffd}");
}
