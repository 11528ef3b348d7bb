//! How long one Kafka request has been waiting for its answer, told every second while it waits:
//! a request to a broker that refuses connections, or to a leader that just died, blocks for
//! its whole request timeout (seconds), and without a report that is silence. A report only:
//! nothing here retries, waits longer or decides anything (the component does all of that).
//!
//! The request runs on a helper thread while the calling thread, which owns the operator's
//! events (not `Send`), reports; without a reporter installed on the calling thread the request
//! simply runs where it is. One reporter per thread: the latest installed (the CLI runs one
//! instance; a program with several on one thread hears the latest one's events).

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Hears, about every second, how long one request has been waiting for its answer.
pub type Waiting = Box<dyn FnMut(&str, Duration)>;

/// A reporter shared by the capabilities that installed it and the thread they run on.
pub type SharedWaiting = Rc<RefCell<Waiting>>;

thread_local! {
    /// The reporter of the capabilities whose requests run on this thread (the store's thread).
    static REPORTER: RefCell<Option<SharedWaiting>> = const { RefCell::new(None) };
}

/// Reports the requests made on this thread to `waiting` until `uninstall` with the same one.
pub fn install(waiting: &SharedWaiting) {
    REPORTER.with(|r| *r.borrow_mut() = Some(Rc::clone(waiting)));
}

/// Stops reporting to `waiting` (another reporter installed since stays).
pub fn uninstall(waiting: &SharedWaiting) {
    REPORTER.with(|r| {
        let mut r = r.borrow_mut();
        if r.as_ref().is_some_and(|mine| Rc::ptr_eq(mine, waiting)) {
            *r = None;
        }
    });
}

/// How often a waiting request is reported.
const TICK: Duration = Duration::from_secs(1);

/// Runs `call` (one blocking Kafka request) and, while it has not answered, tells this thread's
/// reporter every second `what` is waiting and for how long; `cause` is asked at each report for
/// what the client last said about the brokers it cannot reach (e.g. a refused connection), which
/// the report then names.
pub fn watched<T: Send>(
    what: &str,
    cause: impl Fn() -> Option<String>,
    call: impl FnOnce() -> T + Send,
) -> T {
    let Some(reporter) = REPORTER.with(|r| r.borrow().clone()) else {
        return call();
    };
    std::thread::scope(|scope| {
        let (done, answer) = mpsc::channel();
        let worker = scope.spawn(move || {
            // The receiver outlives the worker: it is dropped only after the join below.
            let _ = done.send(call());
        });
        let started = Instant::now();
        let mut ticks = 1u32;
        loop {
            let next = started + TICK * ticks;
            match answer.recv_timeout(next.saturating_duration_since(Instant::now())) {
                Ok(value) => return value,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    ticks += 1;
                    let text = match cause() {
                        Some(cause) => format!("{what} ({cause})"),
                        None => what.to_owned(),
                    };
                    // A reporter already busy (it cannot be: reports never nest) is skipped.
                    if let Ok(mut report) = reporter.try_borrow_mut() {
                        report(&text, started.elapsed());
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    // The call panicked: the same panic, here.
                    match worker.join() {
                        Err(panic) => std::panic::resume_unwind(panic),
                        Ok(()) => unreachable!("the worker sends before it ends"),
                    }
                }
            }
        }
    })
}
