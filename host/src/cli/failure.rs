//! How a command fails: one line for the operator and the exit code for scripts.

use action_state_cleanup::cleanup::{CleanupError, FailureClass};

/// Exit code 3: input rejected or refused by a safety check.
pub const REFUSED: u8 = 3;
/// Exit code 4: Kafka, I/O or internal failure.
pub const FAILED: u8 = 4;

/// Exit code 5 of `status`: it read the history, and the history needs an operator (a plan
/// left COMMITTED by an interrupted apply, or a broken history). Monitoring alerts on it.
pub const ATTENTION: u8 = 5;

/// Exit code 2: the command line itself is wrong.
pub const USAGE: u8 = 2;

/// Exit code 1 of `apply`: the operator answered no at the confirmation; nothing was committed.
pub const DECLINED: u8 = 1;

/// Exit code 6 of `check-recovery` and `recover`: the restore is refused (below the committed
/// boundary, no boundary yet, legacy markers, recreated topic, records gone...): the input was
/// well-formed and Kafka answered, and the answer is no.
pub const RESTORE_REFUSED: u8 = 6;

/// Exit code 7 of `apply`: another apply of the same control topic took it over (its
/// transactional writer fenced this run's): this run committed nothing, and a later run decides
/// afresh on the history the other one left. A scheduler retries, or alerts on overlap.
pub const FENCED: u8 = 7;

/// Exit code 130 (128 + SIGINT, what a shell shows for ^C) of `apply` interrupted by SIGINT,
/// after saying where the plan stands.
pub const INTERRUPTED: u8 = 130;

/// Exit code 143 (128 + SIGTERM) of `apply` stopped by SIGTERM — a CronJob's
/// `activeDeadlineSeconds`, `systemctl stop`, a pod evicted — after saying where the plan stands.
pub const TERMINATED: u8 = 143;

#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    /// A stable name for scripts: a WIT error case, or "usage", "io", "internal".
    pub kind: &'static str,
    pub message: String,
    pub hint: Option<String>,
    /// A refused restore: every partition below the committed boundary (`--json`:
    /// `error.violations`, each with `topic`, `partition`, `requested`, `boundary`).
    pub violations: Option<serde_json::Value>,
}

impl Failure {
    pub fn refused(message: impl Into<String>) -> Self {
        Failure {
            code: REFUSED,
            kind: "refused",
            message: message.into(),
            hint: None,
            violations: None,
        }
    }

    pub fn failed(message: impl Into<String>) -> Self {
        Failure {
            code: FAILED,
            kind: "io",
            message: message.into(),
            hint: None,
            violations: None,
        }
    }

    pub fn usage(message: impl Into<String>) -> Self {
        Failure {
            code: USAGE,
            kind: "usage",
            message: message.into(),
            hint: None,
            violations: None,
        }
    }

    /// The same failure with the exit code the component's class of it gives: a restore the
    /// recovery rules refuse exits `RESTORE_REFUSED` and its message begins "restore refused: ".
    pub fn with_class(mut self, class: FailureClass) -> Self {
        self.code = match class {
            FailureClass::Refused => REFUSED,
            FailureClass::Failed => FAILED,
            FailureClass::Fenced => FENCED,
            FailureClass::RestoreRefused => {
                self.message = format!("restore refused: {}", self.message);
                RESTORE_REFUSED
            }
        };
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// A component error: Kafka failures exit 4, a concurrent apply's takeover 7, every
    /// refusal 3.
    pub fn from_component(error: &CleanupError, message: String) -> Self {
        let code = match error {
            CleanupError::Kafka(_) | CleanupError::ReplayStalled(_) => FAILED,
            CleanupError::Fenced(_) => FENCED,
            _ => REFUSED,
        };
        Failure {
            code,
            kind: error.kind(),
            message,
            hint: None,
            violations: None,
        }
    }

    /// A restore the recovery rules refuse (`RESTORE_REFUSED`, its message then begins "restore
    /// refused: "); malformed markers or arguments, and a control topic that does not exist or is
    /// not one, stay `REFUSED` (3) and Kafka failures `FAILED` (4). For the errors of a recovery
    /// session (`recover`), which carry no class yet; `check-recovery`'s refusal has one
    /// (`with_class`).
    pub fn restore_refused(mut self) -> Self {
        let refusal = matches!(
            self.kind,
            "boundary-violation"
                | "recovery-refused"
                | "conflicting-policies"
                | "topic-changed"
                | "offsets-unavailable"
                | "control-topic-corrupt"
        );
        // A control topic that does not exist or is not a control topic is a wrong
        // --control-topic (exit 3): no boundary was checked, so nothing refused the restore.
        if refusal {
            self.code = RESTORE_REFUSED;
            self.message = format!("restore refused: {}", self.message);
        }
        self
    }

    /// A trap or host failure inside the component runtime: never the operator's input.
    pub fn internal(error: &wasmtime::Error) -> Self {
        Failure {
            code: FAILED,
            kind: "internal",
            message: format!("internal error in the cleanup component: {error:#}"),
            hint: None,
            violations: None,
        }
    }
}
