//! SIGINT while a core call runs without the GIL: Python's own handler only notes the signal,
//! and Python acts on it once the call returns, so the call would run to its end. `Watch`
//! chains a handler of ours before Python's for the call's length: it asks the core to stop
//! (`contend_core::interrupt`, an atomic store, which a signal handler may do) and then calls
//! Python's, which notes the signal as before.
//!
//! Only on the process's main thread, where Python runs its signal handlers, and only while
//! SIGINT's Python handler is Python's own (`signal.default_int_handler`, which raises
//! KeyboardInterrupt): a program that handles SIGINT itself, or ignores it (a shell's background
//! job), or leaves it to the default, keeps its call. A handler is the process's, so other
//! threads' calls never install one (two threads swapping it in turn could restore each other's);
//! a stop requested meanwhile is not theirs (`interruptible`). Elsewhere (other systems) a call
//! runs to its end and Python sees the signal then, as before.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

/// Whether SIGINT's Python handler is `signal.default_int_handler` (KeyboardInterrupt).
fn python_default(py: Python<'_>) -> bool {
    static GET: PyOnceLock<(Py<PyAny>, Py<PyAny>)> = PyOnceLock::new();
    let got = GET.get_or_try_init(py, || -> PyResult<_> {
        let signal = py.import("signal")?;
        Ok((signal.getattr("getsignal")?.unbind(), signal.getattr("default_int_handler")?.unbind()))
    });
    let Ok((getsignal, default)) = got else { return false };
    getsignal.call1(py, (2,)).is_ok_and(|h| h.is(default))
}

#[cfg(target_os = "linux")]
mod imp {
    use pyo3::Python;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    /// Python's handler, called after ours, and whether it takes siginfo.
    static PYTHON: AtomicUsize = AtomicUsize::new(0);
    static PYTHON_SIGINFO: AtomicBool = AtomicBool::new(false);

    extern "C" fn on_sigint(sig: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
        contend_core::interrupt::STOP.request();
        let python = PYTHON.load(Ordering::Relaxed);
        // SAFETY: `python` is the handler sigaction returned for SIGINT (`Watch::start`),
        // neither SIG_DFL nor SIG_IGN, called as its flags say it is called.
        unsafe {
            if PYTHON_SIGINFO.load(Ordering::Relaxed) {
                let h: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) = std::mem::transmute(python);
                h(sig, info, context);
            } else {
                let h: extern "C" fn(libc::c_int) = std::mem::transmute(python);
                h(sig);
            }
        }
    }

    /// Ours installed for a call's length; Python's restored when dropped.
    pub struct Watch(libc::sigaction);

    impl Watch {
        pub fn start(py: Python<'_>) -> Option<Watch> {
            // SAFETY: plain system calls on owned, zeroed structures.
            unsafe {
                if libc::syscall(libc::SYS_gettid) != libc::getpid() as libc::c_long || !super::python_default(py) {
                    return None;
                }
                let mut python: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(libc::SIGINT, std::ptr::null(), &mut python) != 0 {
                    return None;
                }
                let ours_fn = on_sigint as *const () as usize;
                if python.sa_sigaction == libc::SIG_DFL || python.sa_sigaction == libc::SIG_IGN || python.sa_sigaction == ours_fn {
                    return None;
                }
                PYTHON.store(python.sa_sigaction, Ordering::Relaxed);
                PYTHON_SIGINFO.store(python.sa_flags & libc::SA_SIGINFO != 0, Ordering::Relaxed);
                // Python's flags and mask, with siginfo for ours (which passes it on where Python takes it).
                let mut ours = python;
                ours.sa_sigaction = ours_fn;
                ours.sa_flags = python.sa_flags | libc::SA_SIGINFO;
                if libc::sigaction(libc::SIGINT, &ours, std::ptr::null_mut()) != 0 {
                    return None;
                }
                Some(Watch(python))
            }
        }
    }

    impl Drop for Watch {
        fn drop(&mut self) {
            // SAFETY: restores the action `start` read.
            unsafe {
                libc::sigaction(libc::SIGINT, &self.0, std::ptr::null_mut());
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub struct Watch;

    impl Watch {
        pub fn start(_py: pyo3::Python<'_>) -> Option<Watch> {
            None
        }
    }
}

pub use imp::Watch;
