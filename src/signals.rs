//! Termination signals: finish the line, write whole lines, exit with 128 + the signal's number.
//!
//! With their default action, SIGINT, SIGTERM and SIGHUP end the process at once, and Linux
//! stops a `write(2)` to a regular file that is under way between pages: the file keeps the part
//! already copied, so a killed run could leave half a line (a line longer than a page, in
//! practice). [`install`] replaces that action with a handler that only records the signal.
//! A write then completes (a non-fatal signal does not cut a write to a regular file), and the
//! input side sees the signal: [`LineReader`](crate::input::LineReader) returns no further
//! line once [`caught`] says so, a read that blocks on a live pipe is interrupted (the handler
//! is installed without `SA_RESTART`) and ends as if the input had ended, and a line still
//! being read is dropped. The converter so ends at a line boundary, flushes, and `main`
//! exits with `128 + signo` (130, 143, 129), as a shell reports a process killed by the signal.
//!
//! Each handler resets itself (`SA_RESETHAND`): a second signal of the same kind, for
//! instance while a write waits on a reader that never reads, has its default action.
//! SIGKILL cannot be caught; it can still cut a line longer than a page. SIGPIPE is left as
//! the Rust runtime sets it (ignored): a closed pipe is a `BrokenPipe` error, which ends the
//! run quietly with status 0.

use std::io::{self, Read};
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

/// The number of the signal received, 0 while none was.
static CAUGHT: AtomicI32 = AtomicI32::new(0);

/// The signals that end a conversion at a line boundary.
#[cfg(unix)]
const HANDLED: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

#[cfg(unix)]
extern "C" fn record(signo: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    CAUGHT.store(signo, Ordering::SeqCst);
}

/// Installs the handlers. A signal that was ignored when the process started (`nohup`, a
/// background job of a non-interactive shell) stays ignored.
pub fn install() {
    // No SA_RESTART: a blocked read returns EINTR, so the reader sees the flag.
    #[cfg(unix)]
    set_handlers(|_| record, libc::SA_RESETHAND);
}

/// Sets the handler `handler(signo)` with `flags` for each handled signal that is not ignored.
#[cfg(unix)]
fn set_handlers(handler: fn(libc::c_int) -> extern "C" fn(libc::c_int), flags: libc::c_int) {
    for signo in HANDLED {
        // SAFETY: `sigaction` with a zeroed, then filled, `struct sigaction`; the handlers only
        // touch atomics.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signo, std::ptr::null(), &mut old) != 0
                || old.sa_sigaction == libc::SIG_IGN
            {
                continue;
            }
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = handler(signo) as libc::sighandler_t;
            act.sa_flags = flags;
            libc::sigemptyset(&mut act.sa_mask);
            libc::sigaction(signo, &act, std::ptr::null_mut());
        }
    }
}

/// SIGINTs received since [`install_for_run`].
static INTERRUPTS: AtomicU32 = AtomicU32::new(0);

#[cfg(unix)]
extern "C" fn count(_: libc::c_int) {
    INTERRUPTS.fetch_add(1, Ordering::SeqCst);
}

/// The handlers of `insights run`, which drives an agent: SIGINT is counted and stays caught
/// (the first interrupts the agent's turn, the second kills it), SIGTERM and SIGHUP are
/// recorded as by [`install`]. Handlers restart interrupted system calls: the threads that
/// read the commands and the agent's output poll nothing.
pub fn install_for_run() {
    #[cfg(unix)]
    set_handlers(
        |signo| if signo == libc::SIGINT { count } else { record },
        libc::SA_RESTART,
    );
}

/// The SIGINTs received since [`install_for_run`].
pub fn interrupts() -> u32 {
    INTERRUPTS.load(Ordering::SeqCst)
}

/// Keeps the handled signals from this thread (and the threads it starts from now on) until
/// the guard is dropped, so that they reach the thread that reads the input: the one whose
/// blocking read they must interrupt (`--jobs`, see `src/parallel.rs`).
pub struct Blocked {
    #[cfg(unix)]
    old: libc::sigset_t,
}

#[cfg(unix)]
fn handled_set() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset on a local set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signo in HANDLED {
            libc::sigaddset(&mut set, signo);
        }
        set
    }
}

/// Blocks the handled signals in this thread; see [`Blocked`].
pub fn block() -> Blocked {
    #[cfg(unix)]
    {
        let set = handled_set();
        // SAFETY: pthread_sigmask with valid sets; `old` receives the current mask.
        unsafe {
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
            Blocked { old }
        }
    }
    #[cfg(not(unix))]
    Blocked {}
}

/// Lets the handled signals reach this thread (the input reader of `--jobs`).
pub fn unblock() {
    #[cfg(unix)]
    {
        let set = handled_set();
        // SAFETY: pthread_sigmask with a valid set.
        unsafe {
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        }
    }
}

impl Drop for Blocked {
    fn drop(&mut self) {
        #[cfg(unix)]
        // SAFETY: restores the mask saved by `block`.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut());
        }
    }
}

/// The signal received since [`install`], if any.
pub fn caught() -> Option<i32> {
    match CAUGHT.load(Ordering::SeqCst) {
        0 => None,
        n => Some(n),
    }
}

/// The exit status for a run ended by `signo`: 128 + its number, as shells report it.
pub fn exit_status(signo: i32) -> u8 {
    (128 + signo).clamp(0, 255) as u8
}

/// A reader that ends (reads 0 bytes) once a signal was caught, also when it was blocked in a
/// read: it does not resume a read that the signal interrupted.
pub struct UntilSignal<R>(pub R);

impl<R: Read> Read for UntilSignal<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if caught().is_some() {
                return Ok(0);
            }
            match self.0.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                r => return r,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_128_plus_the_number() {
        assert_eq!(exit_status(2), 130);
        assert_eq!(exit_status(15), 143);
        assert_eq!(exit_status(1), 129);
    }

    /// Interrupted once, then data: read on while no signal was caught.
    #[test]
    fn an_interrupted_read_without_a_signal_is_resumed() {
        struct Eintr(bool);
        impl Read for Eintr {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if std::mem::replace(&mut self.0, false) {
                    return Err(io::ErrorKind::Interrupted.into());
                }
                buf[0] = b'x';
                Ok(1)
            }
        }
        let mut r = UntilSignal(Eintr(true));
        let mut b = [0u8; 4];
        assert_eq!(r.read(&mut b).unwrap(), 1);
    }
}
