//! The kit's schedplug_host: the log and the typed-args services of
//! plugin.h v1.1 (`arg_*`), which C plugins call in create(). They read the
//! args with [`Args`](crate::Args), which follows the C++ layer's rules and
//! sentences, as schedplug-host's services (runtime::ArgsSession) do.
//!
//! One file, although over 400 lines: every `arg_*` service reads and fills the
//! one create()-long Session of HostContext, and the tests at the end drive
//! them through it.

use crate::abi::*;
use crate::args::{Args, ArgsError};
use crate::status::set_reason;
use std::ffi::{c_void, CStr};
use std::os::raw::c_char;
use std::sync::{Mutex, MutexGuard};

/// Everything one create() call's getters hand out, kept until create()
/// returns: objects in boxes (their addresses are the `schedplug_args`
/// pointers), strings and lists on the heap.
struct Session {
    root: Result<Box<Args>, ArgsError>,
    // Boxed: the plugin holds pointers to them while the Vec grows.
    #[allow(clippy::vec_box)]
    objects: Vec<Box<Args>>,
    strings: Vec<String>,
    lists: Vec<Vec<schedplug_str>>,
}

/// The host's context pointer: what the plugin logged, and the args
/// session while create() runs.
#[derive(Default)]
pub(super) struct HostContext {
    pub(super) logs: Mutex<Vec<String>>,
    session: Mutex<Option<Session>>,
    /// The pods permit() made wait and the plugin's decisions (v1.6).
    pub(super) permits: Mutex<super::hooks::Permits>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl HostContext {
    /// Opens the session for a create() with `args_json`; returns the root
    /// object for `host->args` (NULL when the args do not parse: every
    /// getter then reports why).
    pub(super) fn begin(&self, args_json: &str) -> *const schedplug_args {
        let root = Args::parse(args_json).map(Box::new);
        let ptr = match &root {
            Ok(b) => &**b as *const Args as *const schedplug_args,
            Err(_) => std::ptr::null(),
        };
        *lock(&self.session) = Some(Session {
            root,
            objects: Vec::new(),
            strings: Vec::new(),
            lists: Vec::new(),
        });
        ptr
    }

    /// Closes it: the args are valid during create() only.
    pub(super) fn end(&self) {
        *lock(&self.session) = None;
    }
}

/// Fills `host`'s log and arg functions.
pub(super) fn install(host: &mut schedplug_host) {
    host.log = Some(log);
    host.args_allow_only = Some(args_allow_only);
    host.arg_string = Some(arg_string);
    host.arg_bool = Some(arg_bool);
    host.arg_int = Some(arg_int);
    host.arg_float = Some(arg_float);
    host.arg_duration = Some(arg_duration);
    host.arg_string_list = Some(arg_string_list);
    host.arg_object = Some(arg_object);
    host.permit_allow = Some(super::hooks::permit_allow);
    host.permit_reject = Some(super::hooks::permit_reject);
}

unsafe extern "C" fn log(context: *mut c_void, level: schedplug_log_level, msg: schedplug_str) {
    if context.is_null() {
        return;
    }
    let name = match level {
        SCHEDPLUG_LOG_ERROR => "error",
        SCHEDPLUG_LOG_WARNING => "warning",
        SCHEDPLUG_LOG_INFO => "info",
        SCHEDPLUG_LOG_DEBUG => "debug",
        _ => "log",
    };
    // SAFETY: the context is the Plugin's boxed HostContext, alive until
    // destroy() returns.
    let ctx = &*(context as *const HostContext);
    let line = format!("{name}: {}", super::text(msg));
    lock(&ctx.logs).push(line);
}

/// Runs `body` on the session and the object of a call, as
/// runtime::args_detail::run: Ok(true) SUCCESS, Ok(false) SKIP (absent),
/// Err ERROR with the sentence in `error`.
///
/// # Safety
/// `context` is the kit's HostContext; `obj` NULL or an object it handed
/// out; `key` NULL or NUL-terminated; `error` a reason buffer or NULL.
unsafe fn run(
    context: *mut c_void,
    obj: *const schedplug_args,
    key: *const c_char,
    error: *mut schedplug_reason,
    body: impl FnOnce(&mut Session, &Args, &str) -> Result<bool, ArgsError>,
) -> schedplug_code {
    let fail = |msg: &str| {
        set_reason(error, msg);
        SCHEDPLUG_ERROR
    };
    if context.is_null() {
        return fail("args can only be read during create(); read them there and keep copies");
    }
    let ctx = &*(context as *const HostContext);
    let mut guard = lock(&ctx.session);
    let session = match guard.as_mut() {
        Some(s) => s,
        None => {
            return fail("args can only be read during create(); read them there and keep copies")
        }
    };
    if obj.is_null() {
        return match &session.root {
            Err(e) => fail(&e.0),
            Ok(_) => fail("no args object given (pass host->args or a nested object)"),
        };
    }
    if key.is_null() {
        return fail("no arg name given (key is NULL)");
    }
    let key = CStr::from_ptr(key).to_string_lossy().into_owned();
    // SAFETY: obj is the root or a nested object of this session, boxed
    // in it; cloned so `body` may add to the session.
    let args = (*(obj as *const Args)).clone();
    match body(session, &args, &key) {
        Ok(true) => SCHEDPLUG_SUCCESS,
        Ok(false) => SCHEDPLUG_SKIP,
        Err(e) => fail(&e.0),
    }
}

fn view(s: &str) -> schedplug_str {
    schedplug_str {
        data: s.as_ptr() as *const c_char,
        len: s.len() as u64,
    }
}

unsafe extern "C" fn args_allow_only(
    context: *mut c_void,
    obj: *const schedplug_args,
    known: *const *const c_char,
    count: u64,
    error: *mut schedplug_reason,
) -> schedplug_code {
    let mut keys = Vec::new();
    for i in 0..count as usize {
        let k = if known.is_null() {
            std::ptr::null()
        } else {
            *known.add(i)
        };
        if !k.is_null() {
            keys.push(CStr::from_ptr(k).to_string_lossy().into_owned());
        }
    }
    let code = run(
        context,
        obj,
        b"\0".as_ptr() as *const c_char,
        error,
        |_, args, _| {
            let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
            args.allow_only(&refs).map(|()| true)
        },
    );
    if code == SCHEDPLUG_ERROR {
        SCHEDPLUG_ERROR
    } else {
        SCHEDPLUG_SUCCESS
    }
}

unsafe extern "C" fn arg_string(
    context: *mut c_void,
    obj: *const schedplug_args,
    key: *const c_char,
    out: *mut schedplug_str,
    error: *mut schedplug_reason,
) -> schedplug_code {
    run(context, obj, key, error, |session, args, key| {
        match args.get_str(key)? {
            None => Ok(false),
            Some(v) => {
                // The String's heap bytes stay put as the Vec grows.
                session.strings.push(v.to_string());
                *out = view(session.strings.last().expect("just pushed"));
                Ok(true)
            }
        }
    })
}

unsafe extern "C" fn arg_bool(
    context: *mut c_void,
    obj: *const schedplug_args,
    key: *const c_char,
    out: *mut i32,
    error: *mut schedplug_reason,
) -> schedplug_code {
    run(context, obj, key, error, |_, args, key| {
        Ok(args.get_bool(key)?.map(|v| *out = i32::from(v)).is_some())
    })
}

unsafe extern "C" fn arg_int(
    context: *mut c_void,
    obj: *const schedplug_args,
    key: *const c_char,
    min: i64,
    max: i64,
    out: *mut i64,
    error: *mut schedplug_reason,
) -> schedplug_code {
    run(context, obj, key, error, |_, args, key| {
        Ok(args.get_int(key, min, max)?.map(|v| *out = v).is_some())
    })
}

unsafe extern "C" fn arg_float(
    context: *mut c_void,
    obj: *const schedplug_args,
    key: *const c_char,
    min: f64,
    max: f64,
    out: *mut f64,
    error: *mut schedplug_reason,
) -> schedplug_code {
    run(context, obj, key, error, |_, args, key| {
        Ok(args.get_float(key, min, max)?.map(|v| *out = v).is_some())
    })
}

unsafe extern "C" fn arg_duration(
    context: *mut c_void,
    obj: *const schedplug_args,
    key: *const c_char,
    out_ns: *mut i64,
    error: *mut schedplug_reason,
) -> schedplug_code {
    run(context, obj, key, error, |_, args, key| {
        Ok(args
            .get_duration(key)?
            .map(|d| *out_ns = d.as_nanos() as i64)
            .is_some())
    })
}

unsafe extern "C" fn arg_string_list(
    context: *mut c_void,
    obj: *const schedplug_args,
    key: *const c_char,
    items: *mut *const schedplug_str,
    count: *mut u64,
    error: *mut schedplug_reason,
) -> schedplug_code {
    run(context, obj, key, error, |session, args, key| {
        let list = match args.get_str_list(key)? {
            None => return Ok(false),
            Some(list) => list,
        };
        let first = session.strings.len();
        session.strings.extend(list.iter().map(|s| s.to_string()));
        let views: Vec<schedplug_str> = session.strings[first..].iter().map(|s| view(s)).collect();
        *count = views.len() as u64;
        *items = if views.is_empty() {
            std::ptr::null()
        } else {
            views.as_ptr()
        };
        session.lists.push(views);
        Ok(true)
    })
}

unsafe extern "C" fn arg_object(
    context: *mut c_void,
    obj: *const schedplug_args,
    key: *const c_char,
    out: *mut *const schedplug_args,
    error: *mut schedplug_reason,
) -> schedplug_code {
    run(context, obj, key, error, |session, args, key| {
        match args.get_object(key)? {
            None => Ok(false),
            Some(nested) => {
                let boxed = Box::new(nested);
                *out = &*boxed as *const Args as *const schedplug_args;
                session.objects.push(boxed);
                Ok(true)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Reason {
        buf: [u8; 256],
        raw: schedplug_reason,
    }

    impl Reason {
        fn new() -> Box<Reason> {
            let mut r = Box::new(Reason {
                buf: [0; 256],
                raw: schedplug_reason::default(),
            });
            r.raw = schedplug_reason {
                text: r.buf.as_mut_ptr() as *mut c_char,
                capacity: 256,
            };
            r
        }
        fn text(&self) -> String {
            let n = self.buf.iter().position(|&b| b == 0).unwrap_or(256);
            String::from_utf8_lossy(&self.buf[..n]).into_owned()
        }
    }

    fn text(s: schedplug_str) -> String {
        super::super::text(s)
    }

    #[test]
    fn services_read_nested_args_during_create_only() {
        let ctx = HostContext::default();
        let c = &ctx as *const HostContext as *mut c_void;
        let root =
            ctx.begin(r#"{"limits": {"zone": "a", "keys": ["x", "y"], "period": "2s"}, "n": 5}"#);
        let mut e = Reason::new();
        unsafe {
            let mut nested: *const schedplug_args = std::ptr::null();
            let code = arg_object(c, root, b"limits\0".as_ptr() as _, &mut nested, &mut e.raw);
            assert_eq!(code, SCHEDPLUG_SUCCESS);
            let mut zone = schedplug_str::default();
            let code = arg_string(c, nested, b"zone\0".as_ptr() as _, &mut zone, &mut e.raw);
            assert_eq!((code, text(zone)), (SCHEDPLUG_SUCCESS, "a".to_string()));
            let (mut items, mut count) = (std::ptr::null(), 0u64);
            let code = arg_string_list(
                c,
                nested,
                b"keys\0".as_ptr() as _,
                &mut items,
                &mut count,
                &mut e.raw,
            );
            assert_eq!((code, count), (SCHEDPLUG_SUCCESS, 2));
            assert_eq!(text(*items.add(1)), "y");
            let mut ns = 0i64;
            let code = arg_duration(c, nested, b"period\0".as_ptr() as _, &mut ns, &mut e.raw);
            assert_eq!((code, ns), (SCHEDPLUG_SUCCESS, 2_000_000_000));
            let mut n = 7i64;
            let code = arg_int(
                c,
                root,
                b"missing\0".as_ptr() as _,
                0,
                9,
                &mut n,
                &mut e.raw,
            );
            assert_eq!((code, n), (SCHEDPLUG_SKIP, 7));
            let code = arg_int(c, root, b"n\0".as_ptr() as _, 0, 4, &mut n, &mut e.raw);
            assert_eq!(code, SCHEDPLUG_ERROR);
            assert_eq!(e.text(), "arg \"n\" must be an integer from 0 to 4, got 5");
            let mut b = 0i32;
            let code = arg_bool(c, nested, b"zone\0".as_ptr() as _, &mut b, &mut e.raw);
            assert_eq!(code, SCHEDPLUG_ERROR);
            assert_eq!(
                e.text(),
                "arg \"limits.zone\" must be true or false, got \"a\""
            );
            let mut f = 0.0f64;
            let code = arg_float(c, root, b"n\0".as_ptr() as _, 0.0, 10.0, &mut f, &mut e.raw);
            assert_eq!((code, f), (SCHEDPLUG_SUCCESS, 5.0));
            // Still valid until create() returns.
            assert_eq!(text(zone), "a");
            ctx.end();
            let code = arg_int(c, root, b"n\0".as_ptr() as _, 0, 9, &mut n, &mut e.raw);
            assert_eq!(code, SCHEDPLUG_ERROR);
            assert_eq!(
                e.text(),
                "args can only be read during create(); read them there and keep copies"
            );
        }
        // Args that do not parse: NULL root, and every getter says why.
        assert!(ctx.begin("[1]").is_null());
        let mut n = 0i64;
        let code = unsafe {
            arg_int(
                c,
                std::ptr::null(),
                b"n\0".as_ptr() as _,
                0,
                9,
                &mut n,
                &mut e.raw,
            )
        };
        assert_eq!(code, SCHEDPLUG_ERROR);
        assert_eq!(
            e.text(),
            "args must be an object of named values, got array"
        );
    }
}
