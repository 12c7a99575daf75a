//! What a hook returns: a status code and, for a rejection or an error, a
//! reason the host shows.

use crate::abi::{
    schedplug_code, schedplug_reason, SCHEDPLUG_ERROR, SCHEDPLUG_REASON_MAX, SCHEDPLUG_SKIP,
    SCHEDPLUG_SUCCESS, SCHEDPLUG_UNSCHEDULABLE, SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE,
    SCHEDPLUG_WAIT,
};
use std::borrow::Cow;
use std::time::Duration;

/// A hook's result. A Filter reason is shown by kube-scheduler as
/// "0/5 nodes are available: 3 <reason>.", so write a short phrase such as
/// "node(s) lack hardware encryption". A `&'static str` reason costs no
/// allocation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    code: schedplug_code,
    reason: Cow<'static, str>,
    timeout: Duration,
}

impl Status {
    /// The node fits / the call worked.
    pub fn success() -> Status {
        Status::new(SCHEDPLUG_SUCCESS, "")
    }

    /// The node does not fit now; preemption may help.
    pub fn unschedulable(reason: impl Into<Cow<'static, str>>) -> Status {
        Status::new(SCHEDPLUG_UNSCHEDULABLE, reason)
    }

    /// The node does not fit and preempting pods cannot change that.
    pub fn unschedulable_and_unresolvable(reason: impl Into<Cow<'static, str>>) -> Status {
        Status::new(SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE, reason)
    }

    /// A real internal error. A Filter error aborts the pod's whole
    /// scheduling cycle: never use it to reject a node.
    pub fn error(reason: impl Into<Cow<'static, str>>) -> Status {
        Status::new(SCHEDPLUG_ERROR, reason)
    }

    /// From pod_begin: the plugin has nothing to say about this pod.
    pub fn skip() -> Status {
        Status::new(SCHEDPLUG_SKIP, "")
    }

    /// From permit only (ABI v1.6): hold the pod until
    /// [`Host::permit_allow`](crate::Host::permit_allow) or
    /// `permit_reject` names its uid, or until `timeout` passes (then the
    /// pod is rejected). From 1 ms to SCHEDPLUG_PERMIT_TIMEOUT_MAX_MS (15
    /// minutes); anything else makes permit fail with an error saying so.
    pub fn wait(timeout: Duration) -> Status {
        Status {
            code: SCHEDPLUG_WAIT,
            reason: Cow::Borrowed(""),
            timeout,
        }
    }

    pub(crate) fn new(code: schedplug_code, reason: impl Into<Cow<'static, str>>) -> Status {
        Status {
            code,
            reason: reason.into(),
            timeout: Duration::ZERO,
        }
    }

    /// The wait of [`Status::wait`]; zero for the other statuses.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The SCHEDPLUG_* status code.
    pub fn code(&self) -> schedplug_code {
        self.code
    }

    /// The reason ("" for none).
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// Whether this is SCHEDPLUG_SUCCESS.
    pub fn is_success(&self) -> bool {
        self.code == SCHEDPLUG_SUCCESS
    }

    /// Writes the reason (if any) into `out` and returns the code.
    ///
    /// # Safety
    /// `out` is NULL or points to a host reason buffer (see
    /// [`set_reason`]).
    pub(crate) unsafe fn report(&self, out: *mut schedplug_reason) -> schedplug_code {
        if !self.reason.is_empty() {
            set_reason(out, &self.reason);
        }
        self.code
    }
}

/// The longest prefix of `msg` that fits in `capacity` bytes with its NUL
/// (and in SCHEDPLUG_REASON_MAX), cut on a UTF-8 boundary so the host never
/// sees half a character, and before any NUL in `msg`, which would end the
/// C string there anyway.
pub fn truncate_reason(msg: &str, capacity: u64) -> &str {
    let msg = msg.split('\0').next().unwrap_or("");
    let limit = capacity
        .min(u64::from(SCHEDPLUG_REASON_MAX))
        .saturating_sub(1);
    let mut n = msg.len().min(usize::try_from(limit).unwrap_or(usize::MAX));
    while !msg.is_char_boundary(n) {
        n -= 1;
    }
    &msg[..n]
}

/// Copies `msg` into the host's buffer as a NUL-terminated string, cut as
/// [`truncate_reason`] does. Does nothing for a NULL or empty buffer.
///
/// # Safety
/// `out` is NULL, or points to a `schedplug_reason` whose `text` is NULL or
/// writable for `capacity` bytes.
pub unsafe fn set_reason(out: *mut schedplug_reason, msg: &str) {
    if out.is_null() {
        return;
    }
    let r = out.read();
    if r.text.is_null() || r.capacity == 0 {
        return;
    }
    let cut = truncate_reason(msg, r.capacity);
    std::ptr::copy_nonoverlapping(cut.as_ptr(), r.text as *mut u8, cut.len());
    *r.text.add(cut.len()) = 0;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::raw::c_char;

    fn written(buf: &[u8]) -> &str {
        let end = buf.iter().position(|&b| b == 0).expect("NUL-terminated");
        std::str::from_utf8(&buf[..end]).expect("UTF-8")
    }

    #[test]
    fn constructors_carry_code_and_reason() {
        assert_eq!(Status::success().code(), SCHEDPLUG_SUCCESS);
        assert!(Status::success().is_success());
        let s = Status::unschedulable("node(s) lack x");
        assert_eq!(
            (s.code(), s.reason()),
            (SCHEDPLUG_UNSCHEDULABLE, "node(s) lack x")
        );
        assert_eq!(
            Status::unschedulable_and_unresolvable(String::from("no")).code(),
            SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE
        );
        assert_eq!(Status::error("boom").code(), SCHEDPLUG_ERROR);
        assert_eq!(Status::skip().code(), SCHEDPLUG_SKIP);
        assert!(!Status::error("boom").is_success());
    }

    #[test]
    fn reason_is_written_nul_terminated() {
        let mut buf = [0xffu8; 64];
        let mut r = schedplug_reason {
            text: buf.as_mut_ptr() as *mut c_char,
            capacity: buf.len() as u64,
        };
        let code = unsafe { Status::unschedulable("node(s) too small").report(&mut r) };
        assert_eq!(code, SCHEDPLUG_UNSCHEDULABLE);
        assert_eq!(written(&buf), "node(s) too small");
    }

    #[test]
    fn success_leaves_the_buffer_untouched() {
        let mut buf = [0xffu8; 8];
        let mut r = schedplug_reason {
            text: buf.as_mut_ptr() as *mut c_char,
            capacity: 8,
        };
        assert_eq!(
            unsafe { Status::success().report(&mut r) },
            SCHEDPLUG_SUCCESS
        );
        assert_eq!(buf, [0xff; 8]);
    }

    #[test]
    fn reason_is_cut_to_the_capacity() {
        let mut buf = [0xffu8; 6];
        let mut r = schedplug_reason {
            text: buf.as_mut_ptr() as *mut c_char,
            capacity: 6,
        };
        unsafe { set_reason(&mut r, "abcdefgh") };
        assert_eq!(written(&buf), "abcde");
    }

    #[test]
    fn reason_is_cut_to_reason_max_on_a_char_boundary() {
        // 255 bytes fit before the NUL; "é" is 2 bytes, so 254 ASCII bytes
        // and then an "é" straddling the limit must lose the "é".
        let msg = format!("{}é and more", "a".repeat(254));
        let mut buf = vec![0xffu8; 1024];
        let mut r = schedplug_reason {
            text: buf.as_mut_ptr() as *mut c_char,
            capacity: buf.len() as u64,
        };
        unsafe { set_reason(&mut r, &msg) };
        assert_eq!(written(&buf), "a".repeat(254));
        assert_eq!(truncate_reason("€uro", 3), "");
        assert_eq!(truncate_reason("€uro", 4), "€");
        assert_eq!(truncate_reason(&"x".repeat(300), 1024).len(), 255);
    }

    #[test]
    fn reason_stops_at_an_inner_nul() {
        assert_eq!(truncate_reason("ab\0cd", 64), "ab");
    }

    #[test]
    fn null_or_empty_buffers_are_ignored() {
        unsafe { set_reason(std::ptr::null_mut(), "x") };
        let mut r = schedplug_reason {
            text: std::ptr::null_mut(),
            capacity: 10,
        };
        unsafe { set_reason(&mut r, "x") };
        let mut byte = 0xffu8;
        let mut r = schedplug_reason {
            text: &mut byte as *mut u8 as *mut c_char,
            capacity: 0,
        };
        unsafe { set_reason(&mut r, "x") };
        assert_eq!(byte, 0xff);
        // Capacity 1 holds only the NUL.
        let mut r = schedplug_reason {
            text: &mut byte as *mut u8 as *mut c_char,
            capacity: 1,
        };
        unsafe { set_reason(&mut r, "x") };
        assert_eq!(byte, 0);
    }
}
