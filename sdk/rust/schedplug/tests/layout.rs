//! Fails on any drift between plugin.h and src/abi.rs.
//!
//! One list below names every struct with its fields, every typedef and
//! every constant. From it the test
//!   - builds a C program that prints, with the header, each struct's sizeof
//!     and alignof, each field's offsetof and sizeof, each typedef's and
//!     each constant's type and value, compiles it with `cc` ($CC) and
//!     compares with what Rust measures of the same items;
//!   - compares each field's and typedef's C type, read from the header's
//!     text, with the Rust type (signedness and pointer constness do not
//!     show in a layout);
//!   - requires the list to cover every struct, field, typedef and
//!     `#define SCHEDPLUG_*` of the header and every public item of abi.rs,
//!     so an addition on either side that the other lacks fails too.
//!
//! SCHEDPLUG_PLUGIN_H=<path> tests another header (default: the SDK's).
//!
//! One file, although long: the item list, the header reader and the C program
//! built from them are checked against each other.

use schedplug::abi::*;
use std::collections::{BTreeMap, BTreeSet};
use std::mem::{align_of, size_of, MaybeUninit};
use std::path::{Path, PathBuf};
use std::process::Command;

/// `#define SCHEDPLUG_*` names that have no Rust constant, and why.
const EXCLUDED_DEFINES: &[&str] = &[
    // The header guard.
    "SCHEDPLUG_PLUGIN_H",
    // A visibility attribute for C compilers; #[no_mangle] exports in Rust.
    "SCHEDPLUG_EXPORT",
    // Function-like: the safe layer implements the struct_size test.
    "SCHEDPLUG_HAS_FIELD",
];

struct FieldInfo {
    name: &'static str,
    offset: usize,
    size: usize,
    ty: &'static str,
}

struct StructInfo {
    name: &'static str,
    size: usize,
    align: usize,
    fields: Vec<FieldInfo>,
}

struct ConstInfo {
    name: &'static str,
    value: i128,
    ty: &'static str,
}

fn pointee_size<T>(_: *const T) -> usize {
    size_of::<T>()
}

fn pointee_type<T>(_: *const T) -> &'static str {
    std::any::type_name::<T>()
}

fn type_of_val<T>(_: &T) -> &'static str {
    std::any::type_name::<T>()
}

/// `r#type` in Rust is `type` in C.
fn c_ident(rust: &'static str) -> &'static str {
    rust.strip_prefix("r#").unwrap_or(rust)
}

trait ConstValue {
    fn to_i128(&self) -> i128;
}

macro_rules! impl_const_value {
    ($($t:ty),*) => {
        $(impl ConstValue for $t {
            fn to_i128(&self) -> i128 {
                *self as i128
            }
        })*
    };
}
impl_const_value!(i32, u32, i64, u64);

macro_rules! field {
    ($s:ident, $f:ident) => {{
        let u = MaybeUninit::<$s>::uninit();
        let base = u.as_ptr();
        // SAFETY: addr_of! computes the field's address without reading the
        // (uninitialized) memory; offset_of! is not in Rust 1.63.
        let p = unsafe { std::ptr::addr_of!((*base).$f) };
        FieldInfo {
            name: c_ident(stringify!($f)),
            offset: p as usize - base as usize,
            size: pointee_size(p),
            ty: pointee_type(p),
        }
    }};
}

macro_rules! abi_items {
    (
        structs { $($s:ident { $($f:ident),* $(,)? })* }
        opaque { $($o:ident),* $(,)? }
        typedefs { $($t:ident),* $(,)? }
        consts { $($c:ident),* $(,)? }
        str_consts { $($sc:ident),* $(,)? }
    ) => {
        fn rust_structs() -> Vec<StructInfo> {
            vec![$(StructInfo {
                name: stringify!($s),
                size: size_of::<$s>(),
                align: align_of::<$s>(),
                fields: vec![$(field!($s, $f)),*],
            }),*]
        }

        // Never called: it only compiles when each list names every field
        // of its Rust struct (the patterns have no `..`).
        #[allow(dead_code)]
        fn rust_lists_are_exhaustive() {
            $(let _ = |v: &$s| {
                let $s { $($f: _),* } = v;
            };)*
        }

        fn rust_opaque() -> Vec<&'static str> {
            // Naming the type makes the list fail to compile without it.
            vec![$({
                let _ = std::marker::PhantomData::<$o>;
                stringify!($o)
            }),*]
        }

        fn rust_typedefs() -> Vec<(&'static str, &'static str)> {
            vec![$((stringify!($t), std::any::type_name::<$t>())),*]
        }

        fn rust_consts() -> Vec<ConstInfo> {
            vec![$(ConstInfo {
                name: stringify!($c),
                value: $c.to_i128(),
                ty: type_of_val(&$c),
            }),*]
        }

        fn rust_str_consts() -> Vec<(&'static str, &'static str)> {
            vec![$((stringify!($sc), $sc)),*]
        }
    };
}

abi_items! {
    structs {
        schedplug_str { data, len }
        schedplug_kv { key, value }
        schedplug_kv_list { items, count }
        schedplug_resource { name, value }
        schedplug_resource_list { items, count }
        schedplug_taint { key, value, effect }
        schedplug_toleration {
            key, op, value, effect, has_toleration_seconds, toleration_seconds,
        }
        schedplug_owner { kind, name, controller }
        schedplug_container_port { container_port, host_port, protocol, host_ip }
        schedplug_container { name, image, requests, limits, ports, port_count }
        schedplug_node_condition { r#type, status }
        schedplug_node_pod {
            namespace_name, name, labels, priority, requests, owner_kind,
        }
        schedplug_volume { name, source, claim_name, read_only }
        schedplug_node_image { names, name_count, size_bytes }
        schedplug_selector_requirement { key, op, values, value_count }
        schedplug_label_selector {
            present, match_labels, match_expressions, match_expression_count,
        }
        schedplug_node_selector_term {
            weight, match_expressions, match_expression_count, match_fields,
            match_field_count,
        }
        schedplug_topology_spread_constraint {
            max_skew, min_domains, topology_key, when_unsatisfiable,
            label_selector, node_affinity_policy, node_taints_policy,
            match_label_keys, match_label_key_count,
        }
        schedplug_pod_affinity_term {
            weight, topology_key, label_selector, namespaces, namespace_count,
            namespace_selector, match_label_keys, match_label_key_count,
            mismatch_label_keys, mismatch_label_key_count,
        }
        schedplug_pod {
            struct_size, namespace_name, name, uid, labels, annotations,
            priority, requests, node_selector, tolerations, toleration_count,
            kv_size, resource_size, toleration_size, node_score_size, state,
            node_name, nominated_node_name, priority_class_name, owners,
            owner_count, containers, container_count, owner_size,
            container_size, port_size, volume_size, volumes, volume_count,
            requirement_size, node_selector_term_size, topology_spread_size,
            pod_affinity_term_size, node_affinity_required,
            node_affinity_required_count, node_affinity_preferred,
            node_affinity_preferred_count, topology_spread,
            topology_spread_count, pod_affinity_required,
            pod_affinity_required_count, pod_affinity_preferred,
            pod_affinity_preferred_count, pod_anti_affinity_required,
            pod_anti_affinity_required_count, pod_anti_affinity_preferred,
            pod_anti_affinity_preferred_count,
        }
        schedplug_node {
            struct_size, name, labels, annotations, taints, taint_count,
            allocatable, requested, pod_count, kv_size, resource_size,
            taint_size, unschedulable, condition_size, conditions,
            condition_count, capacity, pod_list, pod_list_count, node_pod_size,
            image_size, images, image_count,
        }
        schedplug_reason { text, capacity }
        schedplug_node_score { node_name, score }
        schedplug_settings {
            struct_size, refresh_period_ms, events, normalize_policy, reserved,
            data, hints, pod_label_keys, pod_label_key_count,
            pod_annotation_keys, pod_annotation_key_count,
        }
        schedplug_host {
            struct_size, context, log, settings, args, args_allow_only,
            arg_string, arg_bool, arg_int, arg_float, arg_duration,
            arg_string_list, arg_object, permit_allow, permit_reject,
        }
        schedplug_pod_begin_result { struct_size, skip, state }
        schedplug_permit_result { struct_size, reserved, timeout_ms }
        schedplug_pod_patch {
            struct_size, reserved, context, set_annotation, set_label,
        }
        schedplug_plugin {
            abi_version, struct_size, name, version, create, destroy, applies,
            filter, score, normalize_score, normalize_policy, refresh,
            refresh_period_ms, events, pod_begin, pod_end, reserve, unreserve,
            permit, pre_bind, pre_enqueue,
        }
    }
    opaque { schedplug_args }
    typedefs {
        schedplug_code, schedplug_normalize_policy, schedplug_log_level,
        schedplug_plugin_v1_fn,
    }
    consts {
        SCHEDPLUG_ABI_VERSION,
        SCHEDPLUG_DATA_POD_NODE_NAME,
        SCHEDPLUG_DATA_POD_NOMINATED_NODE,
        SCHEDPLUG_DATA_POD_PRIORITY_CLASS,
        SCHEDPLUG_DATA_POD_OWNERS,
        SCHEDPLUG_DATA_POD_CONTAINERS,
        SCHEDPLUG_DATA_NODE_UNSCHEDULABLE,
        SCHEDPLUG_DATA_NODE_CONDITIONS,
        SCHEDPLUG_DATA_NODE_CAPACITY,
        SCHEDPLUG_DATA_NODE_PODS,
        SCHEDPLUG_DATA_POD_VOLUMES,
        SCHEDPLUG_DATA_NODE_IMAGES,
        SCHEDPLUG_DATA_POD_NODE_AFFINITY,
        SCHEDPLUG_DATA_POD_TOPOLOGY_SPREAD,
        SCHEDPLUG_DATA_POD_AFFINITY,
        SCHEDPLUG_DATA_ALL,
        SCHEDPLUG_SUCCESS,
        SCHEDPLUG_ERROR,
        SCHEDPLUG_UNSCHEDULABLE,
        SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE,
        SCHEDPLUG_WAIT,
        SCHEDPLUG_SKIP,
        SCHEDPLUG_REASON_MAX,
        SCHEDPLUG_NORMALIZE_NONE,
        SCHEDPLUG_NORMALIZE_LINEAR,
        SCHEDPLUG_NORMALIZE_REVERSE,
        SCHEDPLUG_EVENT_NODE_ADD,
        SCHEDPLUG_EVENT_NODE_DELETE,
        SCHEDPLUG_EVENT_NODE_UPDATE_LABEL,
        SCHEDPLUG_EVENT_NODE_UPDATE_TAINT,
        SCHEDPLUG_EVENT_NODE_UPDATE_ALLOCATABLE,
        SCHEDPLUG_EVENT_NODE_UPDATE_ANNOTATION,
        SCHEDPLUG_EVENT_NODE_UPDATE_CONDITION,
        SCHEDPLUG_EVENT_POD_ADD,
        SCHEDPLUG_EVENT_POD_DELETE,
        SCHEDPLUG_EVENT_POD_UPDATE_LABEL,
        SCHEDPLUG_EVENT_ALL,
        SCHEDPLUG_LOG_ERROR,
        SCHEDPLUG_LOG_WARNING,
        SCHEDPLUG_LOG_INFO,
        SCHEDPLUG_LOG_DEBUG,
        SCHEDPLUG_POD_KEYS_MAX,
        SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS,
        SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY,
        SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS,
        SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY,
        SCHEDPLUG_HINT_ALL,
        SCHEDPLUG_SKIP_FILTER,
        SCHEDPLUG_SKIP_SCORE,
        SCHEDPLUG_PERMIT_TIMEOUT_MAX_MS,
        SCHEDPLUG_POD_PATCH_MAX,
        SCHEDPLUG_POD_PATCH_VALUE_MAX,
        SCHEDPLUG_POD_AFFINITY_REQUIRED,
        SCHEDPLUG_POD_AFFINITY_PREFERRED,
        SCHEDPLUG_POD_ANTI_AFFINITY_REQUIRED,
        SCHEDPLUG_POD_ANTI_AFFINITY_PREFERRED,
    }
    str_consts { SCHEDPLUG_ENTRY_SYMBOL }
}

// ---------------------------------------------------------------------------
// Reading plugin.h
// ---------------------------------------------------------------------------

#[derive(Debug, PartialEq)]
enum DefineKind {
    Number,
    Str,
    FunctionLike,
    Other,
}

#[derive(Default)]
struct Header {
    /// Struct name -> its fields in order: (name, C type as Rust text).
    structs: Vec<(String, Vec<(String, String)>)>,
    /// `typedef struct X X;` without a body.
    opaque: Vec<String>,
    /// Other typedefs: (name, type as Rust text, is it a plain integer).
    typedefs: Vec<(String, String, bool)>,
    defines: BTreeMap<String, DefineKind>,
}

fn strip_comments(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'"' {
            // Copy a string literal whole: it may hold "/*".
            let start = i;
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(b.len());
            out.push_str(&text[start..i]);
        } else if b[i..].starts_with(b"/*") {
            let end = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
            // Keep line breaks so line-based #define scanning still works.
            out.extend(text[i..end].chars().filter(|&c| c == '\n'));
            out.push(' ');
            i = end;
        } else if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident(s: &str) -> bool {
    s.starts_with(is_ident_start) && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn tokenize(code: &str) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if is_ident_start(c) || c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            toks.push(chars[start..i].iter().collect());
        } else if c == '"' || c == '\'' {
            let start = i;
            i += 1;
            while i < chars.len() && chars[i] != c {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i = (i + 1).min(chars.len());
            toks.push(chars[start..i].iter().collect());
        } else {
            toks.push(c.to_string());
            i += 1;
        }
    }
    toks
}

/// What the header's C types are in Rust, as `std::any::type_name` spells
/// them once paths are dropped.
struct TypeMap {
    /// Scalar typedefs of the header: name -> underlying C type.
    scalars: BTreeMap<String, String>,
}

impl TypeMap {
    fn base(&self, c: &str) -> Result<String, String> {
        let std = match c {
            "int8_t" => "i8",
            "int16_t" => "i16",
            "int32_t" => "i32",
            "int64_t" => "i64",
            "uint8_t" => "u8",
            "uint16_t" => "u16",
            "uint32_t" => "u32",
            "uint64_t" => "u64",
            "float" => "f32",
            "double" => "f64",
            "void" => "c_void",
            // i8 or u8, as the target's C char is.
            "char" => std::any::type_name::<std::os::raw::c_char>(),
            _ => "",
        };
        if !std.is_empty() {
            return Ok(std.to_string());
        }
        if let Some(under) = self.scalars.get(c) {
            return self.base(under);
        }
        if c.starts_with("schedplug_") {
            return Ok(c.to_string());
        }
        Err(format!(
            "C type `{c}` has no Rust mapping in the layout test"
        ))
    }

    /// `const T* const*` and the like (no declarator name).
    fn plain(&self, toks: &[String]) -> Result<String, String> {
        let mut i = 0;
        let mut is_const = false;
        while i < toks.len() && toks[i] == "const" {
            is_const = true;
            i += 1;
        }
        let base = toks
            .get(i)
            .filter(|t| is_ident(t))
            .ok_or_else(|| format!("no type in `{}`", toks.join(" ")))?;
        let mut ty = self.base(base)?;
        i += 1;
        while i < toks.len() && toks[i] == "const" {
            is_const = true;
            i += 1;
        }
        while i < toks.len() {
            if toks[i] != "*" {
                return Err(format!("unsupported type `{}`", toks.join(" ")));
            }
            ty = format!("{}{}", if is_const { "*const " } else { "*mut " }, ty);
            i += 1;
            is_const = false;
            if i < toks.len() && toks[i] == "const" {
                is_const = true;
                i += 1;
            }
        }
        Ok(ty)
    }

    /// A parameter: a type and, usually, a name to drop.
    fn param(&self, toks: &[String]) -> Result<String, String> {
        let words = toks
            .iter()
            .filter(|t| is_ident(t) && t.as_str() != "const")
            .count();
        let named = words >= 2 && toks.last().map_or(false, |t| is_ident(t));
        self.plain(if named { &toks[..toks.len() - 1] } else { toks })
    }

    /// One declaration (a field or the body of a typedef): its name and
    /// its type as Rust text.
    fn declaration(&self, toks: &[String]) -> Result<(String, String), String> {
        let text = || toks.join(" ");
        let open = match toks.iter().position(|t| t == "(") {
            Some(open) => open,
            None => {
                let (name, ty) = toks
                    .split_last()
                    .ok_or_else(|| "empty declaration".to_string())?;
                if toks.iter().any(|t| t == "," || t == "[") || !is_ident(name) {
                    return Err(format!("unsupported declaration `{}`", text()));
                }
                return Ok((name.clone(), self.plain(ty)?));
            }
        };
        // A function pointer: RET ( * NAME ) ( PARAMS )
        let ret = &toks[..open];
        let name = match (toks.get(open + 1), toks.get(open + 2), toks.get(open + 3)) {
            (Some(star), Some(name), Some(close)) if star == "*" && close == ")" => name.clone(),
            _ => return Err(format!("unsupported declaration `{}`", text())),
        };
        if toks.get(open + 4).map(String::as_str) != Some("(")
            || toks.last().map(String::as_str) != Some(")")
        {
            return Err(format!("unsupported declaration `{}`", text()));
        }
        let inner = &toks[open + 5..toks.len() - 1];
        let mut params = Vec::new();
        if !inner.is_empty() && inner != ["void"] {
            for p in inner.split(|t| t == ",") {
                params.push(self.param(p)?);
            }
        }
        let ret = if ret.len() == 1 && ret[0] == "void" {
            String::new()
        } else {
            format!(" -> {}", self.plain(ret)?)
        };
        Ok((
            name,
            format!(
                "Option<unsafe extern \"C\" fn({}){}>",
                params.join(", "),
                ret
            ),
        ))
    }
}

fn parse_header(text: &str) -> Result<Header, String> {
    let text = strip_comments(text).replace("\\\n", " ");
    let mut h = Header::default();
    let mut code = String::new();
    for line in text.lines() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix('#') {
            let rest = rest.trim_start();
            if let Some(def) = rest.strip_prefix("define") {
                let def = def.trim_start();
                let name: String = def
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.starts_with("SCHEDPLUG_") {
                    continue;
                }
                let body = &def[name.len()..];
                let kind = if body.starts_with('(') {
                    DefineKind::FunctionLike
                } else if body.trim().starts_with('"') {
                    DefineKind::Str
                } else if !body.trim().is_empty()
                    && body
                        .trim()
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || " ()<<>>-+*|&~".contains(c))
                    && body
                        .trim()
                        .starts_with(|c: char| c == '(' || c.is_ascii_digit())
                {
                    DefineKind::Number
                } else {
                    DefineKind::Other
                };
                // A name defined twice (under #if / #else) keeps the first.
                h.defines.entry(name).or_insert(kind);
            }
            continue;
        }
        code.push_str(line);
        code.push('\n');
    }

    let toks = tokenize(&code);
    let mut scalars = BTreeMap::new();
    // First pass for the scalar typedefs, which field types refer to.
    for w in toks.windows(4) {
        if w[0] == "typedef" && w[3] == ";" && is_ident(&w[1]) && w[1] != "struct" {
            scalars.insert(w[2].clone(), w[1].clone());
        }
    }
    let map = TypeMap { scalars };

    let mut i = 0;
    while i < toks.len() {
        if toks[i] != "typedef" {
            i += 1;
            continue;
        }
        i += 1;
        let start = i;
        if toks.get(i).map(String::as_str) == Some("struct") {
            let tag = toks.get(i + 1).cloned().unwrap_or_default();
            if toks.get(i + 2).map(String::as_str) == Some("{") {
                let close = toks[i + 3..]
                    .iter()
                    .position(|t| t == "}")
                    .map(|p| i + 3 + p)
                    .ok_or_else(|| format!("typedef struct {tag}: no closing brace"))?;
                let body = &toks[i + 3..close];
                if body.iter().any(|t| t == "{") {
                    return Err(format!("typedef struct {tag}: nested blocks unsupported"));
                }
                let alias = toks.get(close + 1).cloned().unwrap_or_default();
                if alias != tag || toks.get(close + 2).map(String::as_str) != Some(";") {
                    return Err(format!(
                        "typedef struct {tag} {{ ... }} {alias}: expected `}} {tag};`"
                    ));
                }
                let mut fields = Vec::new();
                for decl in body.split(|t| t == ";").filter(|d| !d.is_empty()) {
                    fields.push(map.declaration(decl).map_err(|e| format!("{tag}: {e}"))?);
                }
                h.structs.push((tag, fields));
                i = close + 3;
                continue;
            }
            if toks.get(i + 2) == Some(&tag) && toks.get(i + 3).map(String::as_str) == Some(";") {
                h.opaque.push(tag);
                i += 4;
                continue;
            }
            return Err(format!("unsupported typedef struct {tag}"));
        }
        let end = toks[start..]
            .iter()
            .position(|t| t == ";")
            .map(|p| start + p)
            .ok_or("typedef without `;`")?;
        let decl = &toks[start..end];
        let (name, ty) = map.declaration(decl)?;
        let scalar = decl.len() == 2;
        h.typedefs.push((name, ty, scalar));
        i = end + 1;
    }
    Ok(h)
}

/// `core::option::Option<unsafe extern "C" fn(*mut core::ffi::c_void)>`
/// -> `Option<unsafe extern "C" fn(*mut c_void)>`, without spaces, so
/// both sides compare whatever the paths and spacing.
fn normalize_type(t: &str) -> String {
    let mut out = String::new();
    let mut word = String::new();
    let chars: Vec<char> = t.chars().collect();
    let mut i = 0;
    while i <= chars.len() {
        let c = chars.get(i).copied();
        if let Some(c) = c.filter(|c| c.is_ascii_alphanumeric() || *c == '_') {
            word.push(c);
            i += 1;
            continue;
        }
        if c == Some(':') && chars.get(i + 1) == Some(&':') {
            word.clear();
            i += 2;
            continue;
        }
        out.push_str(&word);
        word.clear();
        if let Some(c) = c.filter(|c| !c.is_whitespace()) {
            out.push(c);
        }
        i += 1;
    }
    out
}

// ---------------------------------------------------------------------------
// The C side
// ---------------------------------------------------------------------------

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn c_program(header: &Path, h: &Header) -> String {
    let in_header: BTreeMap<&str, BTreeSet<&str>> = h
        .structs
        .iter()
        .map(|(s, fs)| (s.as_str(), fs.iter().map(|(f, _)| f.as_str()).collect()))
        .collect();
    let header = header.display().to_string();
    let mut p = String::new();
    p.push_str("#include <stddef.h>\n#include <stdio.h>\n");
    p.push_str(&format!(
        "#include \"{}\"\n",
        header.replace('\\', "\\\\").replace('"', "\\\"")
    ));
    p.push_str(concat!(
        // The Rust name of a C arithmetic type (LP64).
        "#define RT(x) _Generic((x), signed char: \"i8\", short: \"i16\", int: \"i32\", ",
        "long: \"i64\", long long: \"i64\", unsigned char: \"u8\", ",
        "unsigned short: \"u16\", unsigned: \"u32\", unsigned long: \"u64\", ",
        "unsigned long long: \"u64\", float: \"f32\", double: \"f64\")\n",
        "#define S(T) printf(\"struct %s %zu %zu\\n\", #T, sizeof(T), _Alignof(T))\n",
        "#define F(T, f) printf(\"field %s %s %zu %zu\\n\", #T, #f, offsetof(T, f), ",
        "sizeof(((T*)0)->f))\n",
        "#define C(N) printf(\"const %s %s %lld %llu\\n\", #N, RT(N), (long long)(N), ",
        "(unsigned long long)(N))\n",
        "#define TD(N) printf(\"typedef %s %s\\n\", #N, RT((N)0))\n",
        "#define STR(N) printf(\"str %s %s\\n\", #N, N)\n",
        "int main(void) {\n",
    ));
    // Only what the header has, so a missing item is reported by name
    // rather than as a compile error.
    for s in rust_structs() {
        let fields = match in_header.get(s.name) {
            Some(fields) => fields,
            None => continue,
        };
        p.push_str(&format!("  S({});\n", s.name));
        for f in s.fields.iter().filter(|f| fields.contains(f.name)) {
            p.push_str(&format!("  F({}, {});\n", s.name, f.name));
        }
    }
    for (t, _) in rust_typedefs() {
        if h.typedefs.iter().any(|(n, _, scalar)| n == t && *scalar) {
            p.push_str(&format!("  TD({t});\n"));
        }
    }
    for c in rust_consts() {
        if h.defines.get(c.name) == Some(&DefineKind::Number) {
            p.push_str(&format!("  C({});\n", c.name));
        }
    }
    for (c, _) in rust_str_consts() {
        if h.defines.get(c) == Some(&DefineKind::Str) {
            p.push_str(&format!("  STR({c});\n"));
        }
    }
    p.push_str("  return 0;\n}\n");
    p
}

/// Compiles and runs the program; returns its output lines.
fn run_c(program: &str) -> Vec<String> {
    let dir = TempDir(std::env::temp_dir().join(format!(
        "schedplug-layout-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    )));
    std::fs::create_dir_all(&dir.0).expect("create the temp dir");
    let src = dir.0.join("layout.c");
    let exe = dir.0.join("layout");
    std::fs::write(&src, program).expect("write layout.c");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let mut words = cc.split_whitespace();
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../include");
    let out = Command::new(words.next().expect("CC is empty"))
        .args(words)
        .arg("-std=c11")
        .arg("-Wall")
        .arg("-I")
        .arg(&include)
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{cc}`: {e}"));
    assert!(
        out.status.success(),
        "`{cc}` failed on the generated program:\n{}\n{program}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe).output().expect("run the C program");
    assert!(
        run.status.success(),
        "the C program failed: {:?}",
        run.status
    );
    String::from_utf8(run.stdout)
        .expect("C output is UTF-8")
        .lines()
        .map(str::to_string)
        .collect()
}

// ---------------------------------------------------------------------------
// The test
// ---------------------------------------------------------------------------

fn header_path() -> PathBuf {
    let p = std::env::var_os("SCHEDPLUG_PLUGIN_H").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../include/schedplug/plugin.h"),
        PathBuf::from,
    );
    std::fs::canonicalize(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Items the list covers and the header does not, and the reverse.
fn coverage(h: &Header, errs: &mut Vec<String>) {
    let rust = rust_structs();
    for (s, fields) in &h.structs {
        match rust.iter().find(|r| r.name == s) {
            None => errs.push(format!("struct {s}: in plugin.h, not in the Rust list")),
            Some(r) => {
                for (f, _) in fields {
                    if !r.fields.iter().any(|rf| rf.name == f) {
                        errs.push(format!("field {s}.{f}: in plugin.h, not in the Rust list"));
                    }
                }
                for rf in &r.fields {
                    if !fields.iter().any(|(f, _)| f == rf.name) {
                        errs.push(format!(
                            "field {s}.{}: in the Rust list, not in plugin.h",
                            rf.name
                        ));
                    }
                }
            }
        }
    }
    for r in &rust {
        if !h.structs.iter().any(|(s, _)| s == r.name) {
            errs.push(format!(
                "struct {}: in the Rust list, not in plugin.h",
                r.name
            ));
        }
    }

    let opaque = rust_opaque();
    for o in &h.opaque {
        if !opaque.contains(&o.as_str()) {
            errs.push(format!(
                "opaque struct {o}: in plugin.h, not in the Rust list"
            ));
        }
    }
    for o in &opaque {
        if !h.opaque.iter().any(|h| h == o) {
            errs.push(format!(
                "opaque struct {o}: in the Rust list, not in plugin.h"
            ));
        }
    }

    let typedefs = rust_typedefs();
    for (t, _, _) in &h.typedefs {
        if !typedefs.iter().any(|(r, _)| r == t) {
            errs.push(format!("typedef {t}: in plugin.h, not in the Rust list"));
        }
    }
    for (r, _) in &typedefs {
        if !h.typedefs.iter().any(|(t, _, _)| t == r) {
            errs.push(format!("typedef {r}: in the Rust list, not in plugin.h"));
        }
    }

    let consts: Vec<&str> = rust_consts().iter().map(|c| c.name).collect();
    let str_consts: Vec<&str> = rust_str_consts().iter().map(|c| c.0).collect();
    for (name, kind) in &h.defines {
        let n = name.as_str();
        let listed = if consts.contains(&n) {
            Some(DefineKind::Number)
        } else if str_consts.contains(&n) {
            Some(DefineKind::Str)
        } else {
            None
        };
        match listed {
            _ if EXCLUDED_DEFINES.contains(&n) => {}
            None => errs.push(format!(
                "#define {name} ({kind:?}): in plugin.h, neither in the Rust list nor excluded"
            )),
            Some(l) if l != *kind => errs.push(format!(
                "#define {name}: a {kind:?} define in plugin.h, listed in Rust as {l:?}"
            )),
            Some(_) => {}
        }
    }
    for n in consts.iter().chain(&str_consts).chain(EXCLUDED_DEFINES) {
        if !h.defines.contains_key(*n) {
            errs.push(format!("#define {n}: in the Rust list, not in plugin.h"));
        }
    }

    // Every public item of abi.rs is in the list, so nothing there goes
    // unchecked.
    let abi_rs = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/abi.rs");
    let abi_rs = std::fs::read_to_string(&abi_rs).expect("read src/abi.rs");
    for line in abi_rs.lines() {
        let item = |prefix: &str| {
            line.strip_prefix(prefix).map(|r| {
                r.chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect::<String>()
            })
        };
        let listed = if let Some(c) = item("pub const ") {
            Some((
                consts.contains(&c.as_str()) || str_consts.contains(&c.as_str()),
                c,
            ))
        } else if let Some(s) = item("pub struct ") {
            Some((
                rust.iter().any(|r| r.name == s) || opaque.contains(&s.as_str()),
                s,
            ))
        } else {
            item("pub type ").map(|t| (typedefs.iter().any(|(r, _)| *r == t), t))
        };
        if let Some((false, name)) = listed {
            errs.push(format!(
                "{name}: public in src/abi.rs, not in the test's list"
            ));
        }
    }
}

#[test]
fn abi_rs_matches_plugin_h() {
    let header = header_path();
    let text = std::fs::read_to_string(&header).expect("read plugin.h");
    let h = parse_header(&text).unwrap_or_else(|e| panic!("{}: {e}", header.display()));
    let mut errs = Vec::new();
    coverage(&h, &mut errs);

    // Types, from the header's text.
    for r in rust_structs() {
        let fields = match h.structs.iter().find(|(s, _)| s == r.name) {
            Some((_, fields)) => fields,
            None => continue,
        };
        for f in &r.fields {
            if let Some((_, c)) = fields.iter().find(|(n, _)| n == f.name) {
                if normalize_type(c) != normalize_type(f.ty) {
                    errs.push(format!(
                        "field {}.{}: type in C `{c}`, in Rust `{}`",
                        r.name, f.name, f.ty
                    ));
                }
            }
        }
    }
    for (t, rust_ty) in rust_typedefs() {
        if let Some((_, c, _)) = h.typedefs.iter().find(|(n, _, _)| n == t) {
            if normalize_type(c) != normalize_type(rust_ty) {
                errs.push(format!("typedef {t}: C `{c}`, Rust `{rust_ty}`"));
            }
        }
    }

    // Layout and values, from the compiler.
    let lines = run_c(&c_program(&header, &h));
    let rust = rust_structs();
    let consts = rust_consts();
    let typedefs = rust_typedefs();
    let strs = rust_str_consts();
    for line in &lines {
        let w: Vec<&str> = line.split(' ').collect();
        let num = |i: usize| w[i].parse::<usize>().expect("a size");
        match w[0] {
            "struct" => {
                let r = rust.iter().find(|r| r.name == w[1]).unwrap();
                if (num(2), num(3)) != (r.size, r.align) {
                    errs.push(format!(
                        "struct {}: sizeof/alignof in C {}/{}, in Rust {}/{}",
                        r.name,
                        num(2),
                        num(3),
                        r.size,
                        r.align
                    ));
                }
            }
            "field" => {
                let r = rust.iter().find(|r| r.name == w[1]).unwrap();
                let f = r.fields.iter().find(|f| f.name == w[2]).unwrap();
                if num(3) != f.offset {
                    errs.push(format!(
                        "field {}.{}: offset in C {}, in Rust {}",
                        r.name,
                        f.name,
                        num(3),
                        f.offset
                    ));
                }
                if num(4) != f.size {
                    errs.push(format!(
                        "field {}.{}: size in C {}, in Rust {}",
                        r.name,
                        f.name,
                        num(4),
                        f.size
                    ));
                }
            }
            "const" => {
                let c = consts.iter().find(|c| c.name == w[1]).unwrap();
                let value: i128 = if w[2].starts_with('i') {
                    w[3].parse().unwrap()
                } else {
                    w[4].parse().unwrap()
                };
                if value != c.value {
                    errs.push(format!(
                        "{}: value in C {value}, in Rust {}",
                        c.name, c.value
                    ));
                }
                if w[2] != c.ty {
                    errs.push(format!("{}: type in C {}, in Rust {}", c.name, w[2], c.ty));
                }
            }
            "typedef" => {
                let (t, ty) = typedefs.iter().find(|t| t.0 == w[1]).unwrap();
                if w[2] != *ty {
                    errs.push(format!("typedef {t}: in C {}, in Rust {ty}", w[2]));
                }
            }
            "str" => {
                let (n, v) = strs.iter().find(|s| s.0 == w[1]).unwrap();
                let c = &line[w[0].len() + w[1].len() + 2..];
                if c != *v {
                    errs.push(format!("{n}: in C {c:?}, in Rust {v:?}"));
                }
            }
            _ => panic!("unexpected output of the C program: {line}"),
        }
    }
    let expected = rust.iter().map(|r| 1 + r.fields.len()).sum::<usize>()
        + consts.len()
        + strs.len()
        + h.typedefs.iter().filter(|t| t.2).count();
    if errs.is_empty() {
        // Everything listed was measured (nothing silently skipped).
        assert_eq!(lines.len(), expected, "C printed {} lines", lines.len());
    }
    assert!(
        errs.is_empty(),
        "src/abi.rs drifted from {}:\n  {}",
        header.display(),
        errs.join("\n  ")
    );
}

#[test]
fn type_names_normalize() {
    assert_eq!(
        normalize_type(std::any::type_name::<
            Option<unsafe extern "C" fn(*mut std::ffi::c_void, u64) -> *const schedplug_str>,
        >()),
        "Option<unsafeextern\"C\"fn(*mutc_void,u64)->*constschedplug_str>"
    );
}

#[test]
fn header_parser_reads_declarations() {
    let h = parse_header(
        "/* a */ typedef int32_t my_code; // b\n\
         #define SCHEDPLUG_X (1ull << 3) /* c */\n\
         #define SCHEDPLUG_F(a) \\\n (a)\n\
         typedef struct schedplug_t {\n  const char* const* k; /* d */\n\
           my_code (*f)(void* ctx, const schedplug_t* t, uint64_t n);\n\
           void (*g)(void);\n} schedplug_t;\n",
    )
    .unwrap();
    assert_eq!(h.defines["SCHEDPLUG_X"], DefineKind::Number);
    assert_eq!(h.defines["SCHEDPLUG_F"], DefineKind::FunctionLike);
    let c = std::any::type_name::<std::os::raw::c_char>();
    assert_eq!(
        h.structs,
        vec![(
            "schedplug_t".to_string(),
            vec![
                ("k".to_string(), format!("*const *const {c}")),
                (
                    "f".to_string(),
                    "Option<unsafe extern \"C\" fn(*mut c_void, *const schedplug_t, u64) -> i32>"
                        .to_string()
                ),
                (
                    "g".to_string(),
                    "Option<unsafe extern \"C\" fn()>".to_string()
                ),
            ]
        )]
    );
    assert_eq!(
        h.typedefs,
        vec![("my_code".to_string(), "i32".to_string(), true)]
    );
}
