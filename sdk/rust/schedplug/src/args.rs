//! Typed access to a plugin's pluginConfig args (the JSON create()
//! receives), with the C++ layer's rules and messages
//! (`sdk/include/schedplug/cpp/args.hpp`, which schedplug-host also uses for
//! C plugins): errors name the arg, with its path in nested objects, and
//! what it should be; a misspelt arg is an error that suggests the closest
//! known one.
//!
//! ```
//! use schedplug::{Args, ArgsError};
//! use std::time::Duration;
//!
//! # fn main() -> Result<(), ArgsError> {
//! let args = Args::parse(r#"{"zoneLabel": "zone", "maxPods": 30, "period": "1m30s",
//!                           "limits": {"strict": true}}"#)?;
//! args.allow_only(&["zoneLabel", "maxPods", "period", "limits"])?;
//! assert_eq!(args.get_str("zoneLabel")?, Some("zone"));
//! assert_eq!(args.get_int("maxPods", 1, 110)?, Some(30));
//! assert_eq!(args.get_int("minPods", 0, 110)?.unwrap_or(0), 0); // absent
//! assert_eq!(args.get_duration("period")?, Some(Duration::from_secs(90)));
//! let limits = args.get_object("limits")?.unwrap_or_default();
//! assert_eq!(limits.get_bool("strict")?, Some(true));
//!
//! let err = Args::parse(r#"{"maxPods": "30"}"#)?.get_int("maxPods", 1, 110).unwrap_err();
//! assert_eq!(err.to_string(), r#"arg "maxPods" must be an integer from 1 to 110, got "30""#);
//! # Ok(())
//! # }
//! ```
//!
//! In create(), `ctx.args()?` parses them, and an [`ArgsError`] converts
//! into the error [`Status`] that stops the host with its sentence.

// One file, although over 800 lines: the JSON parser, the closest-key
// suggestion and the typed getters make each sentence together, and those must
// match args.hpp's.

use crate::status::Status;
use std::collections::BTreeMap;
use std::time::Duration;

/// A wrong arg: a sentence naming it and what it should be.
#[derive(Clone, PartialEq, Eq)]
pub struct ArgsError(pub String);

impl std::fmt::Display for ArgsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::fmt::Debug for ArgsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ArgsError {}

impl From<ArgsError> for Status {
    fn from(e: ArgsError) -> Status {
        Status::error(e.0)
    }
}

/// A JSON value, with integers apart from other numbers as nlohmann/json
/// (the C++ layer's parser) keeps them.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Int(i64),
    /// An integer above i64::MAX.
    UInt(u64),
    Float(f64),
    String(String),
    Array(Vec<Json>),
    /// Sorted by key, as nlohmann/json's objects are (a repeated key keeps
    /// its last value).
    Object(BTreeMap<String, Json>),
}

impl Json {
    /// Compact JSON text, as in the errors' "got ...".
    pub fn dump(&self) -> String {
        let mut out = String::new();
        self.dump_into(&mut out);
        out
    }

    fn dump_into(&self, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Int(i) => out.push_str(&i.to_string()),
            Json::UInt(u) => out.push_str(&u.to_string()),
            Json::Float(f) => out.push_str(&format!("{f:?}")),
            Json::String(s) => dump_string(s, out),
            Json::Array(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.dump_into(out);
                }
                out.push(']');
            }
            Json::Object(map) => {
                out.push('{');
                for (i, (k, v)) in map.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    dump_string(k, out);
                    out.push(':');
                    v.dump_into(out);
                }
                out.push('}');
            }
        }
    }

    /// nlohmann/json's type_name().
    fn type_name(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "boolean",
            Json::Int(_) | Json::UInt(_) | Json::Float(_) => "number",
            Json::String(_) => "string",
            Json::Array(_) => "array",
            Json::Object(_) => "object",
        }
    }
}

fn dump_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Parses one JSON document (RFC 8259); None when it is not valid JSON.
pub fn parse_json(text: &str) -> Option<Json> {
    let mut p = Parser {
        b: text.as_bytes(),
        i: 0,
        depth: 0,
    };
    let v = p.value()?;
    p.ws();
    if p.i == p.b.len() {
        Some(v)
    } else {
        None
    }
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
    depth: u32,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn eat(&mut self, word: &[u8]) -> bool {
        if self.b[self.i..].starts_with(word) {
            self.i += word.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Option<Json> {
        self.ws();
        // Deep nesting would overflow the stack; no real args nest so far.
        if self.depth > 256 {
            return None;
        }
        match self.peek()? {
            b'{' => {
                self.i += 1;
                self.depth += 1;
                let mut map = BTreeMap::new();
                self.ws();
                if self.peek() == Some(b'}') {
                    self.i += 1;
                } else {
                    loop {
                        self.ws();
                        let key = self.string()?;
                        self.ws();
                        if !self.eat(b":") {
                            return None;
                        }
                        let v = self.value()?;
                        map.insert(key, v);
                        self.ws();
                        match self.peek()? {
                            b',' => self.i += 1,
                            b'}' => {
                                self.i += 1;
                                break;
                            }
                            _ => return None,
                        }
                    }
                }
                self.depth -= 1;
                Some(Json::Object(map))
            }
            b'[' => {
                self.i += 1;
                self.depth += 1;
                let mut items = Vec::new();
                self.ws();
                if self.peek() == Some(b']') {
                    self.i += 1;
                } else {
                    loop {
                        items.push(self.value()?);
                        self.ws();
                        match self.peek()? {
                            b',' => self.i += 1,
                            b']' => {
                                self.i += 1;
                                break;
                            }
                            _ => return None,
                        }
                    }
                }
                self.depth -= 1;
                Some(Json::Array(items))
            }
            b'"' => self.string().map(Json::String),
            b't' if self.eat(b"true") => Some(Json::Bool(true)),
            b'f' if self.eat(b"false") => Some(Json::Bool(false)),
            b'n' if self.eat(b"null") => Some(Json::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while self.peek().map_or(false, |c| c.is_ascii_digit()) {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> Option<Json> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        let int_start = self.i;
        let n = self.digits();
        if n == 0 || (n > 1 && self.b[int_start] == b'0') {
            return None;
        }
        let mut integer = true;
        if self.peek() == Some(b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return None;
            }
            integer = false;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return None;
            }
            integer = false;
        }
        let text = std::str::from_utf8(&self.b[start..self.i]).ok()?;
        if integer {
            if let Ok(i) = text.parse::<i64>() {
                return Some(Json::Int(i));
            }
            if let Ok(u) = text.parse::<u64>() {
                return Some(Json::UInt(u));
            }
        }
        text.parse::<f64>().ok().map(Json::Float)
    }

    fn hex4(&mut self) -> Option<u32> {
        let h = self.b.get(self.i..self.i + 4)?;
        let v = u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()?;
        self.i += 4;
        Some(v)
    }

    fn string(&mut self) -> Option<String> {
        if !self.eat(b"\"") {
            return None;
        }
        let mut out: Vec<u8> = Vec::new();
        loop {
            let c = self.peek()?;
            self.i += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let e = self.peek()?;
                    self.i += 1;
                    let ch = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4()?;
                            let code = if (0xd800..0xdc00).contains(&hi) {
                                if !self.eat(b"\\u") {
                                    return None;
                                }
                                let lo = self.hex4()?;
                                if !(0xdc00..0xe000).contains(&lo) {
                                    return None;
                                }
                                0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00)
                            } else {
                                hi
                            };
                            char::from_u32(code)?
                        }
                        _ => return None,
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                c if c < 0x20 => return None,
                c => out.push(c),
            }
        }
        String::from_utf8(out).ok()
    }
}

/// The known key `typed` most likely meant: one differing only in case,
/// else the nearest within max(1, length / 4) edits (C++ closest_key).
fn closest_key<'k>(typed: &str, known: &[&'k str]) -> Option<&'k str> {
    if let Some(k) = known.iter().find(|k| k.eq_ignore_ascii_case(typed)) {
        return Some(k);
    }
    let limit = std::cmp::max(1, typed.len() / 4);
    let mut best = None;
    let mut best_distance = limit + 1;
    for k in known {
        let d = edit_distance(typed.as_bytes(), k.as_bytes());
        if d < best_distance {
            best = Some(*k);
            best_distance = d;
        }
    }
    best
}

/// Byte-wise edit distance with adjacent swaps ("nmae" -> "name" is 1).
fn edit_distance(a: &[u8], b: &[u8]) -> usize {
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for i in 0..=a.len() {
        d[i * w] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(w) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let sub = d[(i - 1) * w + j - 1] + usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[(i - 1) * w + j] + 1).min(d[i * w + j - 1] + 1).min(sub);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = best;
        }
    }
    d[a.len() * w + b.len()]
}

/// Parses a duration as Go's time.ParseDuration does (Kubernetes'
/// metav1.Duration): one or more <decimal><unit>, e.g. "1m30s", "1.5h",
/// "250ms"; None when malformed, negative or beyond i64 nanoseconds.
pub fn parse_duration_ns(s: &str) -> Option<i64> {
    const UNITS: [(&str, u128); 8] = [
        ("ns", 1),
        ("us", 1_000),
        ("\u{b5}s", 1_000),
        ("\u{3bc}s", 1_000),
        ("ms", 1_000_000),
        ("s", 1_000_000_000),
        ("m", 60_000_000_000),
        ("h", 3_600_000_000_000),
    ];
    let mut s = s.as_bytes();
    if s.is_empty() {
        return None;
    }
    if s[0] == b'+' {
        s = &s[1..];
    }
    if s == b"0" {
        return Some(0);
    }
    // Whole nanoseconds exactly; the fractions' nanoseconds summed apart
    // and rounded once at the end.
    let mut whole: u128 = 0;
    let mut fraction: f64 = 0.0;
    let mut any = false;
    while !s.is_empty() {
        let n = s.iter().take_while(|c| c.is_ascii_digit()).count();
        let int_part = &s[..n];
        s = &s[n..];
        let mut frac_part: &[u8] = &[];
        if s.first() == Some(&b'.') {
            let m = s[1..].iter().take_while(|c| c.is_ascii_digit()).count();
            frac_part = &s[1..1 + m];
            s = &s[1 + m..];
        }
        if int_part.is_empty() && frac_part.is_empty() {
            return None;
        }
        let u = s
            .iter()
            .take_while(|c| !c.is_ascii_digit() && **c != b'.')
            .count();
        let unit = &s[..u];
        s = &s[u..];
        let per = UNITS.iter().find(|(name, _)| name.as_bytes() == unit)?.1;
        let mut value: u128 = 0;
        for d in int_part {
            value = value.checked_mul(10)?.checked_add(u128::from(d - b'0'))?;
        }
        whole = whole.checked_add(value.checked_mul(per)?)?;
        let mut scale = 0.1;
        for d in frac_part {
            fraction += f64::from(d - b'0') * scale * per as f64;
            scale /= 10.0;
        }
        any = true;
    }
    let total = whole.checked_add(fraction.round() as u128)?;
    if !any || total > i64::MAX as u128 {
        return None;
    }
    Some(total as i64)
}

/// One object of the args: the root, or a nested object whose errors name
/// "outer.key".
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Args {
    obj: BTreeMap<String, Json>,
    path: String,
}

impl Args {
    /// Parses the args, which must be a JSON object ("{}" when there are
    /// none; "" reads as "{}").
    pub fn parse(json: &str) -> Result<Args, ArgsError> {
        let json = if json.trim().is_empty() { "{}" } else { json };
        match parse_json(json) {
            None => {
                let shown: String = json.chars().take(120).collect();
                Err(ArgsError(format!("args are not valid JSON: {shown}")))
            }
            Some(Json::Object(obj)) => Ok(Args {
                obj,
                path: String::new(),
            }),
            Some(other) => Err(ArgsError(format!(
                "args must be an object of named values, got {}",
                other.type_name()
            ))),
        }
    }

    /// The full name of `key` in errors: "key", or "outer.key" when nested.
    pub fn name_of(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    /// Whether `key` is present.
    pub fn has(&self, key: &str) -> bool {
        self.obj.contains_key(key)
    }

    /// Whether there are no args.
    pub fn is_empty(&self) -> bool {
        self.obj.is_empty()
    }

    /// The raw value of `key`.
    pub fn get(&self, key: &str) -> Option<&Json> {
        self.obj.get(key)
    }

    /// An error when an arg other than `known` is present, naming it and
    /// the closest known key, so a misspelt arg is never silently ignored.
    pub fn allow_only(&self, known: &[&str]) -> Result<(), ArgsError> {
        let key = match self.obj.keys().find(|k| !known.contains(&k.as_str())) {
            Some(k) => k,
            None => return Ok(()),
        };
        if known.is_empty() {
            let under = if self.path.is_empty() {
                String::new()
            } else {
                format!(" under \"{}\"", self.path)
            };
            return Err(ArgsError(format!(
                "unknown arg \"{}\"; this plugin takes no args{under}",
                self.name_of(key)
            )));
        }
        let mut msg = format!("unknown arg \"{}\"", self.name_of(key));
        let close = closest_key(key, known);
        if let Some(close) = close {
            msg += &format!("; did you mean \"{}\"?", self.name_of(close));
            if close.eq_ignore_ascii_case(key) {
                return Err(ArgsError(msg + " arg names are case-sensitive"));
            }
        }
        msg += if close.is_some() {
            " known args: "
        } else {
            "; known args: "
        };
        let names: Vec<String> = known.iter().map(|k| self.name_of(k)).collect();
        Err(ArgsError(msg + &names.join(", ")))
    }

    fn describe(&self, key: &str, v: &Json, want: &str) -> ArgsError {
        describe_full(&self.name_of(key), v, want)
    }

    /// A non-empty string; None when absent. `""` (like `null` or a
    /// number) is an error naming the arg, not the default; read the raw
    /// value with [`Args::get`] where an empty string means something.
    pub fn get_str(&self, key: &str) -> Result<Option<&str>, ArgsError> {
        match self.obj.get(key) {
            None => Ok(None),
            Some(Json::String(s)) if !s.is_empty() => Ok(Some(s)),
            Some(v) => Err(self.describe(key, v, "a non-empty string")),
        }
    }

    /// A non-empty string that must be there.
    pub fn required_str(&self, key: &str) -> Result<&str, ArgsError> {
        self.get_str(key)?.ok_or_else(|| {
            ArgsError(format!(
                "missing arg \"{}\" (a non-empty string)",
                self.name_of(key)
            ))
        })
    }

    /// true or false; None when absent.
    pub fn get_bool(&self, key: &str) -> Result<Option<bool>, ArgsError> {
        match self.obj.get(key) {
            None => Ok(None),
            Some(Json::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(self.describe(key, v, "true or false")),
        }
    }

    /// An integer in [min, max] (1.0 is not an integer); None when absent.
    pub fn get_int(&self, key: &str, min: i64, max: i64) -> Result<Option<i64>, ArgsError> {
        match self.obj.get(key) {
            None => Ok(None),
            Some(Json::Int(i)) if (min..=max).contains(i) => Ok(Some(*i)),
            Some(v) => Err(self.describe(key, v, &format!("an integer from {min} to {max}"))),
        }
    }

    /// A number in [min, max]; None when absent.
    pub fn get_float(&self, key: &str, min: f64, max: f64) -> Result<Option<f64>, ArgsError> {
        let want = || format!("a number from {} to {}", fmt_number(min), fmt_number(max));
        let d = match self.obj.get(key) {
            None => return Ok(None),
            Some(Json::Int(i)) => *i as f64,
            Some(Json::UInt(u)) => *u as f64,
            Some(Json::Float(f)) => *f,
            Some(v) => return Err(self.describe(key, v, &want())),
        };
        if d >= min && d <= max {
            Ok(Some(d))
        } else {
            Err(self.describe(key, &self.obj[key], &want()))
        }
    }

    /// A duration > 0 written as Kubernetes does ("5s", "250ms", "1m30s");
    /// None when absent.
    pub fn get_duration(&self, key: &str) -> Result<Option<Duration>, ArgsError> {
        const WANT: &str = "a duration such as \"5s\", \"250ms\" or \"1m30s\" (units ns, us, ms, \
                            s, m, h), greater than 0";
        match self.obj.get(key) {
            None => Ok(None),
            Some(Json::String(s)) => match parse_duration_ns(s) {
                Some(ns) if ns > 0 => Ok(Some(Duration::from_nanos(ns as u64))),
                _ => Err(self.describe(key, &self.obj[key], WANT)),
            },
            Some(v) => Err(self.describe(key, v, WANT)),
        }
    }

    /// A list of non-empty strings (may be empty); None when absent.
    pub fn get_str_list(&self, key: &str) -> Result<Option<Vec<&str>>, ArgsError> {
        let items = match self.obj.get(key) {
            None => return Ok(None),
            Some(Json::Array(items)) => items,
            Some(v) => return Err(self.describe(key, v, "a list of non-empty strings")),
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            match item {
                Json::String(s) if !s.is_empty() => out.push(s.as_str()),
                _ => {
                    return Err(describe_full(
                        &format!("{}[{i}]", self.name_of(key)),
                        item,
                        "a non-empty string",
                    ))
                }
            }
        }
        Ok(Some(out))
    }

    /// A nested object, whose own errors name "key.inner"; None when
    /// absent (`.unwrap_or_default()` gives an empty one).
    pub fn get_object(&self, key: &str) -> Result<Option<Args>, ArgsError> {
        match self.obj.get(key) {
            None => Ok(None),
            Some(Json::Object(obj)) => Ok(Some(Args {
                obj: obj.clone(),
                path: self.name_of(key),
            })),
            Some(v) => Err(self.describe(key, v, "an object of named values")),
        }
    }
}

fn describe_full(full_name: &str, v: &Json, want: &str) -> ArgsError {
    let mut got = v.dump();
    if got.len() > 60 {
        let mut cut = 57;
        while !got.is_char_boundary(cut) {
            cut -= 1;
        }
        got.truncate(cut);
        got.push_str("...");
    }
    ArgsError(format!("arg \"{full_name}\" must be {want}, got {got}"))
}

/// A bound in an error: whole numbers without a fraction (C++ fmt).
fn fmt_number(d: f64) -> String {
    if d == d.floor() && d.abs() < 1e15 {
        format!("{}", d as i64)
    } else {
        format!("{d}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(json: &str) -> Args {
        Args::parse(json).unwrap()
    }

    #[test]
    fn json_is_parsed_strictly() {
        let v = parse_json(r#" {"a": [1, -2, 3.5, 1e2, 18446744073709551615, true, null, "\u00e9\ud83d\ude00\n"]} "#)
            .unwrap();
        assert_eq!(
            v.dump(),
            "{\"a\":[1,-2,3.5,100.0,18446744073709551615,true,null,\"é😀\\n\"]}"
        );
        for bad in [
            "",
            "{",
            "{\"a\":}",
            "[1,]",
            "01",
            "1.",
            "\"\t\"",
            "{} x",
            "tru",
            "\"\\ud800\"",
        ] {
            assert_eq!(parse_json(bad), None, "{bad}");
        }
        assert_eq!(parse_json(&"[".repeat(100_000)), None);
        assert_eq!(
            Args::parse("{").unwrap_err().0,
            "args are not valid JSON: {"
        );
        assert_eq!(
            Args::parse("[1]").unwrap_err().0,
            "args must be an object of named values, got array"
        );
        assert!(Args::parse("").unwrap().is_empty());
    }

    #[test]
    fn getters_tell_absent_from_wrong() {
        let a = args(
            r#"{"s": "x", "e": "", "b": true, "i": 7, "f": 1.0, "d": "250ms",
                         "l": ["a", "b"], "o": {"k": 1}, "big": 18446744073709551615}"#,
        );
        assert_eq!(a.get_str("s"), Ok(Some("x")));
        assert_eq!(a.get_str("none"), Ok(None));
        assert_eq!(
            a.get_str("e").unwrap_err().0,
            "arg \"e\" must be a non-empty string, got \"\""
        );
        assert_eq!(
            a.required_str("none").unwrap_err().0,
            "missing arg \"none\" (a non-empty string)"
        );
        assert_eq!(a.get_bool("b"), Ok(Some(true)));
        assert_eq!(
            a.get_bool("i").unwrap_err().0,
            "arg \"i\" must be true or false, got 7"
        );
        assert_eq!(a.get_int("i", 0, 10), Ok(Some(7)));
        assert_eq!(
            a.get_int("i", 8, 10).unwrap_err().0,
            "arg \"i\" must be an integer from 8 to 10, got 7"
        );
        assert_eq!(
            a.get_int("f", 0, 10).unwrap_err().0,
            "arg \"f\" must be an integer from 0 to 10, got 1.0"
        );
        assert!(a.get_int("big", 0, i64::MAX).is_err());
        assert_eq!(a.get_float("i", 0.0, 10.0), Ok(Some(7.0)));
        assert_eq!(
            a.get_float("f", 2.0, 2.5).unwrap_err().0,
            "arg \"f\" must be a number from 2 to 2.5, got 1.0"
        );
        assert_eq!(a.get_duration("d"), Ok(Some(Duration::from_millis(250))));
        assert_eq!(
            a.get_duration("s").unwrap_err().0,
            "arg \"s\" must be a duration such as \"5s\", \"250ms\" or \"1m30s\" (units ns, \
             us, ms, s, m, h), greater than 0, got \"x\""
        );
        assert_eq!(a.get_str_list("l"), Ok(Some(vec!["a", "b"])));
        let o = a.get_object("o").unwrap().unwrap();
        assert_eq!(
            o.get_str("k").unwrap_err().0,
            "arg \"o.k\" must be a non-empty string, got 1"
        );
        assert_eq!(
            args(r#"{"l": ["a", ""]}"#).get_str_list("l").unwrap_err().0,
            "arg \"l[1]\" must be a non-empty string, got \"\""
        );
        let long = args(&format!("{{\"s\": {:?}}}", "x".repeat(100)));
        assert!(long.get_int("s", 0, 1).unwrap_err().0.ends_with("xxx..."));
        let status: Status = a.get_bool("i").unwrap_err().into();
        assert_eq!(
            status,
            Status::error("arg \"i\" must be true or false, got 7")
        );
    }

    #[test]
    fn durations_parse_as_go_does() {
        assert_eq!(parse_duration_ns("1m30s"), Some(90_000_000_000));
        assert_eq!(parse_duration_ns("1.5h"), Some(5_400_000_000_000));
        assert_eq!(parse_duration_ns("+2us"), Some(2_000));
        assert_eq!(parse_duration_ns("3\u{b5}s"), Some(3_000));
        assert_eq!(parse_duration_ns(".5s"), Some(500_000_000));
        assert_eq!(parse_duration_ns("0"), Some(0));
        for bad in ["", "5", "-5s", "5x", "s", ".s", "1e3s", "9999999999999h"] {
            assert_eq!(parse_duration_ns(bad), None, "{bad}");
        }
        assert_eq!(
            args(r#"{"d": "0s"}"#).get_duration("d").unwrap_err().0,
            "arg \"d\" must be a duration such as \"5s\", \"250ms\" or \"1m30s\" (units ns, us, \
             ms, s, m, h), greater than 0, got \"0s\""
        );
    }

    #[test]
    fn unknown_args_suggest_the_closest() {
        let a = args(r#"{"refreshPerod": "5s"}"#);
        assert_eq!(
            a.allow_only(&["refreshPeriod", "zone"]).unwrap_err().0,
            "unknown arg \"refreshPerod\"; did you mean \"refreshPeriod\"? known args: \
             refreshPeriod, zone"
        );
        assert_eq!(
            args(r#"{"Zone": 1}"#).allow_only(&["zone"]).unwrap_err().0,
            "unknown arg \"Zone\"; did you mean \"zone\"? arg names are case-sensitive"
        );
        assert_eq!(
            args(r#"{"x": 1}"#).allow_only(&["zone"]).unwrap_err().0,
            "unknown arg \"x\"; known args: zone"
        );
        let nested = args(r#"{"o": {"y": 1}}"#).get_object("o").unwrap().unwrap();
        assert_eq!(
            nested.allow_only(&[]).unwrap_err().0,
            "unknown arg \"o.y\"; this plugin takes no args under \"o\""
        );
        assert_eq!(args(r#"{"zone": 1}"#).allow_only(&["zone"]), Ok(()));
        assert_eq!(edit_distance(b"nmae", b"name"), 1);
    }
}
