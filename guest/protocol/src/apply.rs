//! The apply protocol of SPEC §5 (commit before delete), written once against the Kafka
//! `Policy`.

use crate::replication::{self, ApplyWarning, ClusterFacts, MAX_DEFAULT_REPLICATION_FACTOR};
use action_state_format::boundary::check_advances;
use action_state_format::control::{ControlEntry, ControlRecord, Status};
use action_state_format::control_history::ControlHistory;
use action_state_format::error::{CleanupError, KafkaFailure, RangeViolation, Result};
use action_state_format::offsets::PartitionOffsets;
use action_state_format::plan::Plan;
use action_state_kafka::capabilities::Capabilities;
use action_state_kafka::kafka_types::{
    self, AppendError, ConfigEntry, PartitionRange, TopicDescription, TopicState,
};
use action_state_kafka::policy::Policy;
use action_state_kafka::topics::{
    CHECKED_CONFIGS, CLEANUP_POLICY, check_control_topic, check_control_topic_name,
    check_data_topic_config, check_identity,
};

pub use crate::replication::MAX_REPLICATION_FACTOR;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyOptions {
    pub control_topic: String,
    /// Used only when apply creates the control topic; `None`: the production default the
    /// cluster calls for (`replication::ClusterFacts::production_default`).
    pub replication_factor: Option<u16>,
    /// Run every check and report the preview, but commit nothing.
    pub dry_run: bool,
    /// Begin a new history (create a missing control topic, or use one that holds no record)
    /// even though the data topic was already cleaned (some partition begins past offset 0).
    /// Without it apply refuses: with no retention allowed,
    /// only an earlier DeleteRecords cut that prefix, so the topic's history is in another
    /// control topic (a typo in its name would otherwise start a second history silently).
    pub start_new_history: bool,
}

/// A control topic this apply creates once the review is accepted (or, in a dry run, would
/// create): a new history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewControlTopic {
    pub topic: String,
    pub partitions: u32,
    pub replication_factor: u16,
    pub min_insync_replicas: u16,
}

/// One partition as the operator reviews it before the commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionPreview {
    pub partition: u32,
    pub beginning: u64,
    pub boundary: u64,
    pub end: u64,
    /// How many records below the boundary Kafka will discard (0 when already gone).
    pub records_to_delete: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApplyOutcome {
    /// The plan was committed, deleted and marked APPLIED in this run.
    Applied,
    /// The plan was already COMMITTED; this run repeated the deletion and marked it APPLIED.
    Resumed,
    /// The plan was already APPLIED; nothing was done.
    AlreadyApplied,
    /// Every check passed; nothing durable happened because a dry run was asked for.
    DryRun,
    /// Every check passed, but the observer declined at the review before COMMITTED: nothing
    /// was created, committed or deleted.
    Declined,
}

/// The operator's answer to the review before COMMITTED.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Review {
    /// Commit the plan.
    Proceed,
    /// Do not commit: the apply ends as `Declined`.
    Decline,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyReport {
    pub plan_id: String,
    pub outcome: ApplyOutcome,
    /// The plan's status in the control topic when apply returns.
    pub status: Option<Status>,
    /// Per-partition preview (fresh plans and dry runs; empty otherwise).
    pub preview: Vec<PartitionPreview>,
    /// The deletion target: the effective boundary over every known plan.
    pub target: PartitionOffsets,
    /// Beginnings Kafka reported after deletion (empty when nothing was deleted).
    pub beginnings_after: PartitionOffsets,
    /// Plans this run marked APPLIED (this plan and any other plan that was still COMMITTED).
    pub marked_applied: Vec<String>,
    /// The control topic this run created (in a dry run: would create).
    pub created_control_topic: Option<NewControlTopic>,
    /// What the operator should fix although the apply went on (at most one per kind).
    pub warnings: Vec<ApplyWarning>,
}

/// Receives the preview right before the point of no return, so a host can show it (and ask
/// the operator), and hears when the plan is COMMITTED.
pub trait ApplyObserver {
    /// Asked once per apply. `created` is the control topic the plan's commit creates (in a dry
    /// run: would create), if it does not exist yet: nothing is created before the answer. The
    /// answer decides whether the plan is committed; in a dry run it is asked too (so a host
    /// shows the same review) and its answer is ignored, since nothing is committed either way.
    fn before_commit(
        &mut self,
        plan: &Plan,
        preview: &[PartitionPreview],
        created: Option<&NewControlTopic>,
    ) -> Review;

    /// The plan is COMMITTED in the control topic: this run wrote it, or found it there (a
    /// resumed apply). From here on an interrupted apply leaves the plan COMMITTED and the same
    /// apply finishes it.
    fn committed(&mut self, _plan: &Plan) {}
}

/// An observer for hosts that need no preview.
#[derive(Debug)]
pub struct Silent;

impl ApplyObserver for Silent {
    fn before_commit(
        &mut self,
        _plan: &Plan,
        _preview: &[PartitionPreview],
        _created: Option<&NewControlTopic>,
    ) -> Review {
        Review::Proceed
    }
}

/// Validates `plan` against live Kafka and the control topic, commits it, deletes, verifies and
/// marks it applied. Any failure after COMMITTED leaves the plan COMMITTED for a retry.
///
/// Concurrency: the control topic is fenced before it is read, so of two applies running at
/// once, the one that fenced last is the only one whose commit can succeed, and it decided on a
/// history that includes everything the other committed.
pub fn apply<C: Capabilities>(
    kafka: &mut Policy<C>,
    observer: &mut dyn ApplyObserver,
    plan: &Plan,
    options: &ApplyOptions,
) -> Result<ApplyReport> {
    apply_with_status(kafka, observer, plan, options).map_err(|failure| failure.error)
}

/// Why an apply stopped, with the plan's status in the control topic as the run last knew it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyFailure {
    pub error: CleanupError,
    /// `Committed` when this run wrote or found COMMITTED; `None` when the plan was not found or
    /// the run stopped before reading the control topic.
    pub status: Option<Status>,
    /// Whether this run's COMMITTED append may have been written. False: this run committed
    /// nothing, whatever `status` says of earlier runs (it sent none, it was fenced, or the
    /// history read after fencing again does not hold the plan). True with `status` `None`: the
    /// append's outcome is unknown.
    pub commit_attempted: bool,
}

/// `apply`, failing with the plan's last known status so a host needs no second read.
pub fn apply_with_status<C: Capabilities>(
    kafka: &mut Policy<C>,
    observer: &mut dyn ApplyObserver,
    plan: &Plan,
    options: &ApplyOptions,
) -> std::result::Result<ApplyReport, ApplyFailure> {
    let mut run = RunState::default();
    let outcome = apply_attempts(kafka, observer, plan, options, &mut run);
    match outcome {
        Ok(mut report) => {
            report.created_control_topic = run.created;
            report.warnings = run.warnings;
            Ok(report)
        }
        Err(error) => Err(ApplyFailure {
            error,
            status: run.status,
            commit_attempted: run.commit_attempted,
        }),
    }
}

/// What one apply learns across its attempts.
#[derive(Debug, Default)]
struct RunState {
    /// The plan's status as this run last knew it.
    status: Option<Status>,
    /// Set when a COMMITTED append failed without a definite answer.
    commit_in_doubt: bool,
    /// Set once this run sent a COMMITTED append whose outcome is not known to be a refusal;
    /// cleared when the append was fenced, or a history read after fencing again shows the
    /// plan was not committed.
    commit_attempted: bool,
    /// The control topic this run created (or, dry, would create).
    created: Option<NewControlTopic>,
    /// The control topic this run creates once the review is accepted: it was missing, and
    /// nothing durable may happen before the operator's answer.
    pending: Option<NewControlTopic>,
    /// The review was accepted: a decision taken again later in this run (after creating the
    /// control topic, after being fenced) does not ask again.
    accepted: bool,
    /// The guard against starting a second history passed (`missing_control_topic`,
    /// `guard_new_history`).
    new_history_checked: bool,
    /// The cluster's brokers and default replication factor, once read.
    cluster: Option<ClusterFacts>,
    /// Set once the control topic's replication was checked (attempts check it once).
    replication_checked: bool,
    warnings: Vec<ApplyWarning>,
}

fn apply_attempts<C: Capabilities>(
    kafka: &mut Policy<C>,
    observer: &mut dyn ApplyObserver,
    plan: &Plan,
    options: &ApplyOptions,
    run: &mut RunState,
) -> Result<ApplyReport> {
    // Before anything durable (creating the control topic, fencing, COMMITTED): a record the
    // integrity rules refuse would stop every later apply and recovery.
    plan.verify()?;
    let mut outcome = apply_once(kafka, observer, plan, options, true, run);
    for attempt in 1..MAX_ATTEMPTS {
        let fence_again = match &outcome {
            // Fenced before committing: another apply took over. Decide again, from the
            // start, on the history it leaves: the same plan resumes without fencing anyone
            // (only a new commit needs the fenced writer), an incomparable one is refused.
            // First give the apply that took over time to commit: deciding at once would find
            // nothing committed yet and fence it in turn, and two applies of one plan could
            // take the writer from each other until both ran out of attempts.
            Err(CleanupError::Fenced(_)) => {
                kafka.pause(FENCED_PAUSE_MS << (attempt - 1));
                false
            }
            // The COMMITTED append failed without a definite answer (its partition's leader
            // died, the request timed out). Fencing again settles the open transaction (a new
            // writer with the same transactional id completes or aborts it), so the history
            // read next is the truth: the plan resumes if it was committed, or is decided on
            // again (it may have been overtaken) if it was not.
            Err(CleanupError::Kafka(_)) if std::mem::take(&mut run.commit_in_doubt) => true,
            _ => break,
        };
        outcome = apply_once(kafka, observer, plan, options, fence_again, run);
    }
    outcome
}

/// How often an apply that keeps being fenced by concurrent applies decides again. With the
/// doubling pause the last decision comes 1.55 s after the first fence: on a loaded machine the
/// apply that took over needs several hundred milliseconds from its fence to its commit, and
/// two applies of one plan must not run out of attempts by taking the writer from each other.
const MAX_ATTEMPTS: usize = 6;

/// The first wait after being fenced before committing (then doubling): longer than a commit
/// takes on a healthy cluster.
const FENCED_PAUSE_MS: u32 = 50;

fn apply_once<C: Capabilities>(
    kafka: &mut Policy<C>,
    observer: &mut dyn ApplyObserver,
    plan: &Plan,
    options: &ApplyOptions,
    fence_first: bool,
    run: &mut RunState,
) -> Result<ApplyReport> {
    check_control_topic_name(&options.control_topic, &plan.topic)?;
    if let Some(factor) = options.replication_factor
        && (factor == 0 || factor > MAX_REPLICATION_FACTOR)
    {
        return Err(CleanupError::InvalidArgument(format!(
            "Kafka cleanup control topic replication factor must be between 1 and {MAX_REPLICATION_FACTOR}, but was {factor}"
        )));
    }
    let mut session = Session {
        kafka,
        plan,
        control: &options.control_topic,
        run,
    };
    let may_write = !options.dry_run;
    let mut fenced = may_write && fence_first;
    let mut history = session.inspect_and_read(options, fenced)?;
    loop {
        let known = history.find(&plan.plan_id).cloned();
        // A control topic still to be created (`pending`) is fenced right after its creation.
        if known.is_none() && may_write && !fenced && session.run.pending.is_none() {
            // A commit is needed: become the only writer, then decide on what is there now.
            history = session.fence_and_read()?;
            fenced = true;
            continue;
        }
        return decide_and_act(&mut session, observer, history, known, options);
    }
}

/// What an apply found in place of a missing control topic.
enum Missing {
    /// It exists after all (created concurrently).
    Found(TopicState),
    /// A new history: its control topic is created once the review is accepted (a dry run
    /// only says it would be); until then the history is empty.
    New,
}

/// Acts on the plan's known status: nothing, resume, or the full commit-before-delete path.
fn decide_and_act<C: Capabilities>(
    session: &mut Session<'_, C>,
    observer: &mut dyn ApplyObserver,
    mut history: ControlHistory,
    known: Option<ControlRecord>,
    options: &ApplyOptions,
) -> Result<ApplyReport> {
    let plan = session.plan;
    session.run.status = known.as_ref().map(|record| record.status);
    if let Some(record) = known.as_ref().filter(|record| record.plan != *plan) {
        return Err(CleanupError::ControlTopicCorrupt(format!(
            "Cleanup control record {} does not match the supplied plan",
            record.plan.plan_id
        )));
    }
    match known.map(|record| record.status) {
        Some(Status::Applied) => Ok(report(
            plan,
            ApplyOutcome::AlreadyApplied,
            Some(Status::Applied),
        )),
        Some(Status::Committed) if options.dry_run => {
            Ok(report(plan, ApplyOutcome::DryRun, Some(Status::Committed)))
        }
        Some(Status::Committed) => {
            observer.committed(plan);
            let mut done = session.delete_and_mark_applied(&mut history)?;
            done.outcome = ApplyOutcome::Resumed;
            Ok(done)
        }
        None => {
            // Whatever COMMITTED an earlier attempt of this run sent, it is not in a history
            // read after fencing (which settles any transaction the writer left open): this
            // run committed nothing, so a refusal from here on must not call that unknown.
            session.run.commit_attempted = false;
            check_advances(plan, &history.boundary())?;
            let guard = session.needs_new_history_guard(&history, options);
            let preview = match session.preview(&history, guard)? {
                Previewed::Preview(preview) => preview,
                Previewed::Cleaned(cleaned) => {
                    session.guard_new_history(&mut history, &cleaned)?;
                    // A concurrent first apply committed meanwhile (this very plan, perhaps):
                    // decide on the history it left.
                    let known = history.find(&plan.plan_id).cloned();
                    return decide_and_act(session, observer, history, known, options);
                }
            };
            if guard {
                session.run.new_history_checked = true;
            }
            let review = if session.run.accepted {
                Review::Proceed
            } else {
                let announced = session
                    .run
                    .pending
                    .as_ref()
                    .or(session.run.created.as_ref());
                observer.before_commit(plan, &preview, announced)
            };
            let stop = match (options.dry_run, review) {
                (true, _) => Some(ApplyOutcome::DryRun),
                (false, Review::Decline) => Some(ApplyOutcome::Declined),
                (false, Review::Proceed) => None,
            };
            if let Some(outcome) = stop {
                let mut stopped = report(plan, outcome, None);
                stopped.preview = preview;
                return Ok(stopped);
            }
            session.run.accepted = true;
            if let Some(new) = session.run.pending.take() {
                // Only the operator's yes makes the control topic exist. Another apply may
                // have created it meanwhile and committed: then decide again on what it holds.
                // An empty one changes nothing the review was decided on.
                let created = session.create_control_topic(new)?;
                if !created.operations().is_empty() {
                    let known = created.find(&plan.plan_id).cloned();
                    return decide_and_act(session, observer, created, known, options);
                }
                history = created;
            }
            session.check_data_topic("checked immediately before commit")?;
            session.run.commit_attempted = true;
            session.append(&mut history, Status::Committed)?;
            observer.committed(plan);
            let mut done = session.delete_and_mark_applied(&mut history)?;
            done.preview = preview;
            Ok(done)
        }
    }
}

/// Identity, partitions and configuration of `plan`'s data topic, from one inspection.
fn check_data_state(plan: &Plan, state: Option<&TopicState>, context: &str) -> Result<()> {
    check_identity(
        &plan.topic,
        &plan.topic_id,
        &plan.offsets.partitions(),
        state.map(|s| &s.description),
        context,
    )?;
    check_data_topic_config(&plan.topic, state.map_or(&[], |s| s.configs.as_slice()))
}

fn report(plan: &Plan, outcome: ApplyOutcome, status: Option<Status>) -> ApplyReport {
    ApplyReport {
        plan_id: plan.plan_id.clone(),
        outcome,
        status,
        preview: Vec::new(),
        target: PartitionOffsets::new(),
        beginnings_after: PartitionOffsets::new(),
        marked_applied: Vec::new(),
        created_control_topic: None,
        warnings: Vec::new(),
    }
}

struct Session<'a, C: Capabilities> {
    kafka: &'a mut Policy<C>,
    plan: &'a Plan,
    control: &'a str,
    run: &'a mut RunState,
}

impl<C: Capabilities> Session<'_, C> {
    /// The physical topic the plan was made for: the only one its deletes may reach.
    fn identity(&self) -> TopicDescription {
        TopicDescription {
            topic: self.plan.topic.clone(),
            topic_id: self.plan.topic_id.clone(),
            partitions: self.plan.offsets.partitions(),
        }
    }

    /// Identity, partitions and configuration of the data topic, in two requests.
    fn check_data_topic(&mut self, context: &str) -> Result<()> {
        let states = self
            .kafka
            .inspect_topics(&[&self.plan.topic], &CHECKED_CONFIGS)
            .map_err(CleanupError::Kafka)?;
        self.check_data_state(states.into_iter().next().flatten().as_ref(), context)
    }

    /// Identity, partitions and configuration of the data topic, from one inspection.
    fn check_data_state(&self, state: Option<&TopicState>, context: &str) -> Result<()> {
        check_data_state(self.plan, state, context)
    }

    /// Checks the data topic and validates the control topic in one inspection, fences the
    /// control topic when this run may write, and replays its whole log. A missing control
    /// topic is not created here (`missing_control_topic`): the history is empty until then.
    fn inspect_and_read(&mut self, options: &ApplyOptions, fence: bool) -> Result<ControlHistory> {
        let control = self.control;
        let states = self
            .kafka
            .inspect_topics(&[&self.plan.topic, control], &CHECKED_CONFIGS)
            .map_err(CleanupError::Kafka)?;
        let mut states = states.into_iter();
        let (data, control_state) = (states.next().flatten(), states.next().flatten());
        self.check_data_state(data.as_ref(), "checked before commit")?;
        let control_state = match control_state {
            Some(state) => state,
            None => match self.missing_control_topic(options)? {
                Missing::Found(state) => state,
                Missing::New => return Ok(ControlHistory::default()),
            },
        };
        check_control_topic(control, &control_state.description, &control_state.configs)?;
        self.check_replication(control_state.replication_factor);
        if fence {
            return self.fence_and_read();
        }
        self.read_history()
    }

    /// The control topic is missing: a new history, whose control topic the commit creates
    /// (`create_control_topic`; a dry run only says it would), unless the data topic was
    /// already cleaned, which is not a first apply. With retention off, only an earlier
    /// DeleteRecords moved a beginning past offset 0, so that cleanup's history (and the
    /// boundary restores are checked against) is elsewhere: refused without start-new-history.
    fn missing_control_topic(&mut self, options: &ApplyOptions) -> Result<Missing> {
        let control = self.control;
        if !options.start_new_history {
            let cleaned = self.cleaned_partitions()?;
            if !cleaned.is_empty() {
                // Asked again after the beginnings were read: a concurrent first apply creates
                // its control topic before it deletes anything, so if this one exists now, it
                // is the history that cleaned the topic.
                if let Some(state) = self.inspect_control()? {
                    return Ok(Missing::Found(state));
                }
                return Err(self.second_history(&cleaned, "does not exist"));
            }
            self.run.new_history_checked = true;
        }
        let replication = match options.replication_factor {
            Some(factor) => {
                self.check_factor_fits(factor)?;
                replication::explicit(factor)
            }
            None => self.production_default()?,
        };
        let new = NewControlTopic {
            topic: control.to_owned(),
            partitions: 1,
            replication_factor: replication.replication_factor,
            min_insync_replicas: replication.min_insync_replicas,
        };
        if options.dry_run {
            self.run.created = Some(new);
        } else {
            self.run.pending = Some(new);
        }
        Ok(Missing::New)
    }

    /// Creates the control topic the review announced, now that it was accepted; fences it and
    /// reads its history (empty, or what a concurrent apply that created it first committed).
    ///
    /// The writer is fenced right after the creation is sent, before the new topic is
    /// described: opening the transactional writer (a round trip to the transaction
    /// coordinator, seconds on a busy cluster) overlaps the topic's propagation to every
    /// broker, instead of both running in turn. Fencing writes nothing to the control topic,
    /// and the history is still read after it: a topic that turns out not to be a valid control
    /// topic ends the apply before anything is read.
    fn create_control_topic(&mut self, new: NewControlTopic) -> Result<ControlHistory> {
        let control = self.control;
        let compact = ConfigEntry {
            name: CLEANUP_POLICY.into(),
            value: Some("compact".into()),
        };
        let min_isr = ConfigEntry {
            name: "min.insync.replicas".into(),
            value: Some(new.min_insync_replicas.to_string()),
        };
        let created = self
            .kafka
            .request_topic(control, 1, new.replication_factor, &[compact, min_isr])
            .map_err(CleanupError::Kafka)?;
        if created {
            self.run.created = Some(new);
        }
        self.kafka
            .fence_control(control)
            .map_err(CleanupError::Kafka)?;
        let Some(state) = self.inspect_control()? else {
            return Err(CleanupError::InvalidControlTopic(format!(
                "Kafka cleanup control topic {control} was created but cannot be described"
            )));
        };
        check_control_topic(control, &state.description, &state.configs)?;
        self.check_replication(state.replication_factor);
        self.read_history()
    }

    /// An existing control topic without a single record is a new history too: for a data
    /// topic already cleaned it is refused like a missing one (`missing_control_topic`), unless
    /// start-new-history. Whether this run must ask: the beginnings come from the describe the
    /// permission probe follows (`preview`), so the guard costs no request of its own.
    fn needs_new_history_guard(&self, history: &ControlHistory, options: &ApplyOptions) -> bool {
        !(options.start_new_history
            || self.run.new_history_checked
            || !history.operations().is_empty())
    }

    /// The data topic was found `cleaned` while the control topic holds no record: read the
    /// history again (a first apply commits before it deletes, so if a concurrent one cleaned
    /// the topic through this control topic, its commit shows now). Refuses a second history
    /// when it still holds none; otherwise the caller decides on what it holds now.
    fn guard_new_history(
        &mut self,
        history: &mut ControlHistory,
        cleaned: &[(u32, u64)],
    ) -> Result<()> {
        *history = self.read_history()?;
        if history.operations().is_empty() {
            return Err(self.second_history(cleaned, "holds no cleanup history"));
        }
        Ok(())
    }

    /// The cluster's brokers and default replication factor, read once per run.
    fn cluster_facts(&mut self) -> std::result::Result<&ClusterFacts, KafkaFailure> {
        if self.run.cluster.is_none() {
            self.run.cluster = Some(ClusterFacts::read(self.kafka)?);
        }
        self.run
            .cluster
            .as_ref()
            .ok_or_else(|| KafkaFailure::new("describe-cluster", "no cluster description", false))
    }

    /// The replication a new control topic gets when the operator chose none. Without the
    /// cluster's description nothing is created: a guess could leave the boundary on one broker.
    fn production_default(&mut self) -> Result<replication::Replication> {
        let control = self.control;
        match self.cluster_facts() {
            Ok(facts) => Ok(facts.production_default()),
            Err(error) => Err(replication::undecided(control, error)),
        }
    }

    /// A factor the operator chose must fit the cluster: Kafka puts each replica on its own
    /// broker and refuses to create the topic otherwise, which a dry run would not find out and
    /// a real apply only after the review. Only the broker list is read (an explicit factor
    /// needs no DescribeConfigs); a principal refused even that is left to the creation's own
    /// answer rather than refused on a guess.
    fn check_factor_fits(&mut self, factor: u16) -> Result<()> {
        // The facts the replication check reads anyway (kept for it); without DescribeConfigs on
        // the cluster, the broker list alone.
        let brokers = match self.cluster_facts() {
            Ok(facts) => facts.brokers.clone(),
            Err(error) if refused_by_acl(&error) => match self.kafka.describe_cluster(&[]) {
                Ok(cluster) => cluster.brokers,
                Err(error) if refused_by_acl(&error) => return Ok(()),
                Err(error) => return Err(CleanupError::Kafka(error)),
            },
            Err(error) => return Err(CleanupError::Kafka(error)),
        };
        if usize::from(factor) <= brokers.len() {
            return Ok(());
        }
        let listed = brokers
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        Err(CleanupError::InvalidArgument(format!(
            "Kafka cleanup control topic {} cannot be created with replication factor {factor}: the cluster has {} (ID {listed}) and Kafka keeps each replica on its own broker; choose a replication factor between 1 and {}",
            self.control,
            count(brokers.len() as u64, "broker", "brokers"),
            brokers.len()
        )))
    }

    /// Warns (once per run) when the control topic has fewer replicas than the production
    /// default. A topic with `MAX_DEFAULT_REPLICATION_FACTOR` replicas or more has enough on any
    /// cluster and costs no request; a cluster that cannot be described leaves a warning that
    /// says so, never a refusal.
    fn check_replication(&mut self, replication_factor: u16) {
        if std::mem::replace(&mut self.run.replication_checked, true)
            || replication_factor >= MAX_DEFAULT_REPLICATION_FACTOR
        {
            return;
        }
        let control = self.control;
        let warning = match self.cluster_facts() {
            Ok(facts) => replication::check(control, replication_factor, facts)
                .map(ApplyWarning::UnderReplicatedControlTopic),
            Err(error) => Some(replication::unchecked(control, replication_factor, &error)),
        };
        self.run.warnings.extend(warning);
    }

    fn inspect_control(&mut self) -> Result<Option<TopicState>> {
        Ok(self
            .kafka
            .inspect_topics(&[self.control], &CHECKED_CONFIGS)
            .map_err(CleanupError::Kafka)?
            .into_iter()
            .next()
            .flatten())
    }

    /// (partition, beginning) of every plan partition that no longer begins at offset 0.
    fn cleaned_partitions(&mut self) -> Result<Vec<(u32, u64)>> {
        let plan = self.plan;
        let ranges = self
            .kafka
            .offset_range(&plan.topic, &plan.offsets.partitions())
            .map_err(CleanupError::Kafka)?;
        Ok(cleaned_of(plan, &ranges))
    }

    /// The refusal of a new history for a data topic already cleaned; `found` says what the
    /// control topic looks like ("does not exist", "holds no cleanup history").
    fn second_history(&self, cleaned: &[(u32, u64)], found: &str) -> CleanupError {
        let shown = cleaned
            .iter()
            .take(5)
            .map(|(partition, beginning)| format!("{partition} at {beginning}"))
            .collect::<Vec<_>>()
            .join(", ");
        let more = match cleaned.len() {
            n if n > 5 => format!(" and {} more", n - 5),
            _ => String::new(),
        };
        CleanupError::InvalidControlTopic(format!(
            "Kafka cleanup control topic {} {found}, but data topic {} already begins past offset 0 (partition {shown}{more}), so records were deleted before: by an earlier cleanup whose history is in another control topic (check the name), or by retention before it was turned off; apply with start-new-history set only to begin a new history here on purpose",
            self.control, self.plan.topic
        ))
    }

    /// Fences before reading: any concurrent apply that has not committed yet can no longer
    /// commit, and the read sees everything earlier writers committed. A plan that advances
    /// what is read is therefore the only one that can commit.
    fn fence_and_read(&mut self) -> Result<ControlHistory> {
        self.kafka
            .fence_control(self.control)
            .map_err(CleanupError::Kafka)?;
        self.read_history()
    }

    fn read_history(&mut self) -> Result<ControlHistory> {
        let control = self.control;
        let entries = self.kafka.read_control_log(control)?;
        let history = ControlHistory::replay(&entries)?;
        let plan = self.plan;
        history.check_dedicated(&plan.topic, &plan.topic_id, &plan.offsets.partitions())?;
        Ok(history)
    }

    /// Every plan offset must lie within what Kafka can serve now: [beginning, end]. The
    /// ranges come from the describe the permission probe follows, so one request both shows
    /// them and confirms the identity the probe needs. With `guard`, the same ranges first say
    /// whether the data topic was already cleaned (`needs_new_history_guard`): then nothing is
    /// probed and the cleaned partitions are returned for the guard to decide on.
    fn preview(&mut self, history: &ControlHistory, guard: bool) -> Result<Previewed> {
        let plan = self.plan;
        let mut target = history.boundary();
        for (partition, offset) in plan.offsets.iter() {
            target.insert(partition, target.get(partition).unwrap_or(0).max(offset));
        }
        let mut preview = Vec::new();
        let mut cleaned = Vec::new();
        // A user who cannot finish an apply must never leave a binding boundary behind: probe
        // the DeleteRecords permission now, with a delete at the current beginnings (it
        // deletes nothing), before anything durable happens.
        let mut probe = |state: Option<&TopicState>| -> Result<PartitionOffsets> {
            let ranges = state.map_or(&[][..], |s| s.ranges.as_slice());
            if guard {
                cleaned = cleaned_of(plan, ranges);
                if !cleaned.is_empty() {
                    // Not sent: the guard decides first (its own error, if it refuses).
                    return Err(CleanupError::InvalidControlTopic(String::new()));
                }
            }
            preview = partition_previews(plan, &target, ranges)?;
            Ok(preview.iter().map(|p| (p.partition, p.beginning)).collect())
        };
        let probed = self
            .kafka
            .delete_described(&self.identity(), &[], true, &mut probe)
            .map_err(|error| match error {
                CleanupError::Kafka(error) => CleanupError::Kafka(KafkaFailure {
                    operation: "delete-records (permission probe before commit)".into(),
                    ..error
                }),
                other => other,
            });
        match probed {
            Err(_) if !cleaned.is_empty() => Ok(Previewed::Cleaned(cleaned)),
            Err(error) => Err(error),
            Ok(_) => Ok(Previewed::Preview(preview)),
        }
    }

    fn append(&mut self, history: &mut ControlHistory, status: Status) -> Result<()> {
        let record = ControlRecord {
            status,
            plan: self.plan.clone(),
        };
        if let Err(error) = self.append_record(history, record) {
            if status == Status::Committed
                && matches!(&error, CleanupError::Kafka(kafka) if kafka.retriable)
            {
                self.run.commit_in_doubt = true;
            }
            // A fenced append is aborted with its transaction: nothing of it was written.
            if matches!(error, CleanupError::Fenced(_)) {
                self.run.commit_attempted = false;
            }
            return Err(error);
        }
        self.run.status = Some(status);
        Ok(())
    }

    fn append_record(&mut self, history: &mut ControlHistory, record: ControlRecord) -> Result<()> {
        let value = record.render();
        let key = record.plan.plan_id.clone();
        // Only a COMMITTED record moves the boundary, so only it needs the fenced writer; APPLIED
        // records are idempotent statements about committed plans and never fenced out.
        let fenced = record.status == Status::Committed;
        let offset = self
            .kafka
            .append_control(self.control, &key, &value, fenced)
            .map_err(|error| match error {
                AppendError::Failed(kafka) => CleanupError::Kafka(kafka),
                AppendError::Fenced(why) => CleanupError::Fenced(format!(
                    "A concurrent apply took over control topic {} before plan {key} was committed ({why}); this run committed nothing",
                    self.control
                )),
            })?;
        // Our own record goes through the same integrity rules as any record we read.
        history.observe(&ControlEntry {
            offset,
            key: Some(key),
            value: Some(value),
            // Its own append: the broker's time is not needed to judge it.
            timestamp: None,
        })
    }

    /// An append whose outcome is unknown (the request timed out, the leader died) may still
    /// have written its record: the status this run reports must not claim COMMITTED when the
    /// log says APPLIED. One read of the history settles it; when that read fails too, the
    /// status is reported unknown (`None`), and a host reads it before saying anything.
    fn learn_status_after_failed_append(&mut self) {
        self.run.status = self
            .read_history()
            .ok()
            .and_then(|history| history.find(&self.plan.plan_id).map(|r| r.status));
    }

    /// Everything after the point of no return: re-check, delete to the effective boundary,
    /// verify, re-check, and mark every still-COMMITTED plan APPLIED.
    fn delete_and_mark_applied(&mut self, history: &mut ControlHistory) -> Result<ApplyReport> {
        let plan = self.plan;
        let target = history.boundary();
        // The data topic's check before the delete is the describe the request follows.
        let identity = self.identity();
        let mut checked_target = |state: Option<&TopicState>| -> Result<PartitionOffsets> {
            check_data_state(plan, state, "checked immediately before delete")?;
            Ok(target.clone())
        };
        let beginnings =
            self.kafka
                .delete_described(&identity, &CHECKED_CONFIGS, false, &mut checked_target)?;
        for (partition, wanted) in target.iter() {
            let beginning = beginnings.get(partition);
            if beginning.is_none_or(|b| b < wanted) {
                return Err(CleanupError::DeleteUnverified(RangeViolation {
                    topic: plan.topic.clone(),
                    partition,
                    requested: wanted,
                    beginning,
                    end: None,
                }));
            }
        }
        self.check_data_topic("checked after delete")?;
        let pending: Vec<ControlRecord> = history
            .operations()
            .iter()
            .filter(|op| op.status == Status::Committed)
            .cloned()
            .collect();
        let mut marked = Vec::with_capacity(pending.len());
        for mut record in pending {
            record.status = Status::Applied;
            marked.push(record.plan.plan_id.clone());
            let ours = record.plan.plan_id == plan.plan_id;
            if let Err(error) = self.append_record(history, record) {
                if ours {
                    self.learn_status_after_failed_append();
                }
                return Err(error);
            }
            if ours {
                self.run.status = Some(Status::Applied);
            }
        }
        Ok(ApplyReport {
            plan_id: plan.plan_id.clone(),
            outcome: ApplyOutcome::Applied,
            status: Some(Status::Applied),
            preview: Vec::new(),
            target,
            beginnings_after: beginnings,
            marked_applied: marked,
            created_control_topic: None,
            warnings: Vec::new(),
        })
    }
}

/// What the preview found: the review, or (while the new-history guard is pending) a data
/// topic already cleaned, whose partitions the guard decides on before anything is probed.
enum Previewed {
    Preview(Vec<PartitionPreview>),
    Cleaned(Vec<(u32, u64)>),
}

/// (partition, beginning) of every plan partition of `ranges` that no longer begins at 0.
fn cleaned_of(plan: &Plan, ranges: &[PartitionRange]) -> Vec<(u32, u64)> {
    ranges
        .iter()
        .filter(|r| r.beginning > 0 && plan.offsets.get(r.partition).is_some())
        .map(|r| (r.partition, r.beginning))
        .collect()
}

/// Each plan partition as the review shows it, from the data topic's live `ranges`; refused
/// when a plan offset lies outside what Kafka can serve.
fn partition_previews(
    plan: &Plan,
    target: &PartitionOffsets,
    ranges: &[PartitionRange],
) -> Result<Vec<PartitionPreview>> {
    let beginnings = kafka_types::beginnings(ranges);
    let ends = kafka_types::ends(ranges);
    let mut preview = Vec::with_capacity(plan.offsets.len());
    for (partition, requested) in plan.offsets.iter() {
        let beginning = beginnings.get(partition);
        let end = ends.get(partition);
        let (Some(beginning), Some(end)) = (beginning, end) else {
            return Err(unavailable(plan, partition, requested, beginning, end));
        };
        if requested < beginning || requested > end {
            return Err(unavailable(
                plan,
                partition,
                requested,
                Some(beginning),
                Some(end),
            ));
        }
        let boundary = target.get(partition).unwrap_or(requested);
        preview.push(PartitionPreview {
            partition,
            beginning,
            boundary,
            end,
            records_to_delete: boundary.saturating_sub(beginning),
        });
    }
    Ok(preview)
}

fn unavailable(
    plan: &Plan,
    partition: u32,
    requested: u64,
    beginning: Option<u64>,
    end: Option<u64>,
) -> CleanupError {
    CleanupError::OffsetsUnavailable(RangeViolation {
        topic: plan.topic.clone(),
        partition,
        requested,
        beginning,
        end,
    })
}

/// Whether the brokers refused a step for want of an ACL.
fn refused_by_acl(error: &KafkaFailure) -> bool {
    error.cause.as_ref().is_some_and(|cause| {
        cause.kind == action_state_format::kafka_error::ErrorKind::Authorization
    })
}

/// "1 broker", "3 brokers".
fn count(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}
