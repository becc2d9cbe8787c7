//! A user's request to stop (Ctrl-C), seen by the executor at its next instant.
//!
//! A signal reaches a process, not a call, so the request is process-wide: the binding's SIGINT
//! handler sets it while a core call runs (contend-py's `sigint`), and the binding clears it once
//! that call has stopped. Every simulation advances time in `sim::run_until_stuck`, which checks
//! at each instant, so the one check there stops every model, the searches and the sweeps built
//! on it; `packet` also checks inside an instant (its own event loop runs every packet until the
//! next transfer finishes, which can be most of a run) and leaves the instant unfinished.

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};

/// A stop request; `STOP` is the process's.
pub struct Stop(AtomicBool);

pub static STOP: Stop = Stop(AtomicBool::new(false));

impl Stop {
    /// Ask the running work to stop.
    pub fn request(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Withdraw the request, once the work it stopped has returned.
    pub fn clear(&self) {
        self.0.store(false, Ordering::Relaxed);
    }

    /// Whether a stop is requested.
    pub fn requested(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// `Err(Error::Interrupted)` while a stop is requested.
    pub fn check(&self) -> Result<()> {
        if self.requested() {
            return Err(Error::Interrupted);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // On a flag of its own: the process's would stop the other tests running beside it.
    #[test]
    fn a_request_stops_until_cleared() {
        let stop = Stop(AtomicBool::new(false));
        assert!(stop.check().is_ok());
        stop.request();
        assert!(matches!(stop.check(), Err(Error::Interrupted)));
        stop.clear();
        assert!(stop.check().is_ok());
    }
}
