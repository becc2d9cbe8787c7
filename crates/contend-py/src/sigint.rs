//! SIGINT while a core call runs without the GIL: Python's own handler only notes the signal,
//! and Python acts on it once the call returns, so the call would run to its end. `Watch`
//! chains a handler of ours before Python's for the call's length: it asks the core to stop
//! (`contend_core::interrupt`, an atomic store, which a signal handler may do) and then calls
//! Python's, which notes the signal as before.
//!
//! Only on the process's main thread, where Python runs its signal handlers, and only where
//! Python's handler is installed (not where SIGINT is ignored, as in a shell's background job,
//! or left to the default): a handler is the process's, and two threads swapping it in turn
//! could restore each other's. Elsewhere (other threads, other systems) a call runs to its end
//! and Python sees the signal then, as before.

#[cfg(target_os = "linux")]
mod imp {
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
        pub fn start() -> Option<Watch> {
            // SAFETY: plain system calls on owned, zeroed structures.
            unsafe {
                if libc::syscall(libc::SYS_gettid) != libc::getpid() as libc::c_long {
                    return None;
                }
                let mut python: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(libc::SIGINT, std::ptr::null(), &mut python) != 0 {
                    return None;
                }
                if python.sa_sigaction == libc::SIG_DFL || python.sa_sigaction == libc::SIG_IGN || python.sa_sigaction == on_sigint as *const () as usize {
                    return None;
                }
                PYTHON.store(python.sa_sigaction, Ordering::Relaxed);
                PYTHON_SIGINFO.store(python.sa_flags & libc::SA_SIGINFO != 0, Ordering::Relaxed);
                let mut ours: libc::sigaction = std::mem::zeroed();
                ours.sa_sigaction = on_sigint as *const () as usize;
                ours.sa_flags = libc::SA_SIGINFO | (python.sa_flags & libc::SA_ONSTACK);
                libc::sigemptyset(&mut ours.sa_mask);
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
        pub fn start() -> Option<Watch> {
            None
        }
    }
}

pub use imp::Watch;
