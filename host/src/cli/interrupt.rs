//! SIGINT (^C) or SIGTERM (a scheduler's deadline or shutdown) during `apply`: say where the
//! plan stands, then exit with `INTERRUPTED` (130) or `TERMINATED` (143).
//!
//! The stage comes from what the component told the host (`operator-events`): before the review
//! was answered nothing can have been committed; after `committed` the plan is COMMITTED and the
//! same apply finishes it; in between, the COMMITTED append may be in flight. Both signals are
//! blocked in every thread and taken by one thread of ours with `sigwait`, so the message is
//! printed by ordinary code, not inside a signal handler.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, Ordering};

use super::failure::{INTERRUPTED, TERMINATED};

/// Where an apply is, as far as an interruption is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Stage {
    /// Checks, the review, the question: nothing committed.
    Checking = 0,
    /// The operator (or `--yes`) said proceed; COMMITTED may be on its way.
    Committing = 1,
    /// The component said the plan is COMMITTED.
    Committed = 2,
}

static STAGE: AtomicU8 = AtomicU8::new(Stage::Checking as u8);

/// What must still happen when a signal ends the run (`--metrics-file`: the run's exit code).
type BeforeExit = Box<dyn Fn(u8) + Send + Sync>;
static BEFORE_EXIT: OnceLock<BeforeExit> = OnceLock::new();

/// Runs `last` with the exit code when SIGINT or SIGTERM ends the run, after its message is
/// printed and before the process exits (once per process; a second registration is ignored).
pub fn before_exit(last: impl Fn(u8) + Send + Sync + 'static) {
    let _ = BEFORE_EXIT.set(Box::new(last));
}

/// The signals an apply answers, and the exit code of each (128 + the signal, as a shell shows).
const SIGNALS: [(libc::c_int, u8); 2] = [(libc::SIGINT, INTERRUPTED), (libc::SIGTERM, TERMINATED)];

fn exit_with(code: u8) -> ! {
    if let Some(last) = BEFORE_EXIT.get() {
        last(code);
    }
    // Exit without running destructors: the main thread is inside the component or a Kafka
    // client call, and nothing of ours is left to flush (every line is written in one call).
    // SAFETY: _exit ends the process at once; no Rust state is used afterwards.
    unsafe { libc::_exit(i32::from(code)) }
}

/// SIGINT and SIGTERM as a signal set.
fn signal_set() -> libc::sigset_t {
    // SAFETY: a zeroed sigset_t is valid storage for sigemptyset, which initialises it; the
    // calls only write that local set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for (signal, _) in SIGNALS {
            libc::sigaddset(&mut set, signal);
        }
        set
    }
}

/// The three sentences, rendered before the apply starts (plan ID and control topic known).
static MESSAGES: OnceLock<Messages> = OnceLock::new();

struct Messages {
    checking: String,
    committing: String,
    committed: String,
    json: bool,
}

pub fn set_stage(stage: Stage) {
    STAGE.store(stage as u8, Ordering::SeqCst);
}

/// Blocks SIGINT and SIGTERM in this thread, so that every thread started afterwards (the
/// component runtime's, the Kafka client's) inherits the block and either can only reach
/// `watch`'s thread.
/// Call first, before anything starts a thread; `watch` follows once the component names the
/// plan (`operator-events.verified`). A document that is no plan is refused within
/// milliseconds, with the signals still blocked.
pub fn block() {
    set_mask(libc::SIG_BLOCK);
}

/// Undoes `block` when the watching thread could not start.
fn release() {
    set_mask(libc::SIG_UNBLOCK);
}

fn set_mask(how: libc::c_int) -> bool {
    let set = signal_set();
    // SAFETY: reads the local set and changes only this thread's mask.
    unsafe { libc::pthread_sigmask(how, &set, std::ptr::null_mut()) == 0 }
}

/// From now on SIGINT and SIGTERM print where the plan stands and exit `INTERRUPTED` or
/// `TERMINATED`. Call after `block`,
/// which must come before any other thread starts (threads inherit the blocked signal); a ^C
/// that came in between is pending and answered here.
pub fn watch(plan_id: &str, control_topic: &str, dry_run: bool, json: bool) {
    let checking = if dry_run {
        "during a dry run: nothing was committed".to_owned()
    } else {
        format!(
            "before the point of no return: nothing was committed (plan {plan_id} is not COMMITTED by this run); run the same apply again when ready"
        )
    };
    let messages = Messages {
        checking,
        committing: format!(
            "while COMMITTED was being written: whether plan {plan_id} is COMMITTED is unknown; run `status --control-topic {control_topic}`: if it lists the plan COMMITTED, run the same apply again to finish it, otherwise nothing was committed"
        ),
        committed: format!(
            "after the point of no return: plan {plan_id} is left COMMITTED in {control_topic} (its boundary is binding; the deletion may not have finished); run the same apply again to finish it"
        ),
        json,
    };
    if MESSAGES.set(messages).is_err() {
        return;
    }
    if !set_mask(libc::SIG_BLOCK) {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("signals".into())
        .spawn(wait_for_signal);
    // Without the thread the signal stays blocked: ^C would do nothing. Unblock it again.
    if spawned.is_err() {
        release();
    }
}

fn wait_for_signal() {
    let mut signal: libc::c_int = 0;
    let set = signal_set();
    // SAFETY: sigwait reads the local set (blocked in every thread) and writes `signal`.
    if unsafe { libc::sigwait(&set, &mut signal) } != 0 {
        return;
    }
    let (code, kind, cause) = if signal == libc::SIGTERM {
        (TERMINATED, "terminated", "terminated (SIGTERM)")
    } else {
        (INTERRUPTED, "interrupted", "interrupted")
    };
    let Some(messages) = MESSAGES.get() else {
        exit_with(code);
    };
    let stage = match STAGE.load(Ordering::SeqCst) {
        0 => &messages.checking,
        1 => &messages.committing,
        _ => &messages.committed,
    };
    let message = format!("{cause} {stage}");
    if messages.json {
        super::output::print_json(&serde_json::json!({
            "error": { "kind": kind, "message": message, "hint": null, "exitCode": code }
        }));
    }
    // A question may be on the line: start a new one.
    errln!("\nerror: {message}");
    exit_with(code);
}
