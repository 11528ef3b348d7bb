//! Recovery enforcement (SPEC §6): the decision table as a pure function, the live range check,
//! and the check-recovery protocol that gathers their inputs from Kafka.

use action_state_format::control_history::ControlHistory;
use action_state_format::error::{BoundaryViolation, CleanupError, RangeViolation, Result};
use action_state_format::marker::Marker;
use action_state_format::offsets::{PartitionOffsets, brief_partitions, partition_difference};
use action_state_format::planning::merge_minimum;
use action_state_kafka::capabilities::Capabilities;
use action_state_kafka::kafka_types::{TopicDescription, TopicState};
use action_state_kafka::policy::Policy;
use action_state_kafka::topics::{CLEANUP_POLICY, check_control_topic, check_identity};

/// How the runtime is configured to recover.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveryPolicy {
    /// The data topic the runtime is configured with: markers of any other topic are refused.
    /// When `None`, the topic the first versioned marker names is checked.
    pub topic: Option<String>,
    /// The control topic; `None` means standard recovery without boundary enforcement.
    pub control_topic: Option<String>,
    /// Whether per-key tombstones are enabled (they conflict with prefix cleanup).
    pub tombstones_enabled: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecoveryMode {
    /// No control topic: replay without boundary enforcement.
    Standard,
    /// Every partition is at or above this committed boundary.
    Enforced { boundary: PartitionOffsets },
}

/// The decision table's verdict for a set of markers that may be restored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveryDecision {
    pub topic: String,
    /// Per partition, the minimum offset over all markers: where replay starts.
    pub requested: PartitionOffsets,
    pub mode: RecoveryMode,
    /// False when every marker is legacy (no physical identity was checked).
    pub versioned: bool,
}

/// Applies the decision table to markers already parsed, the live topic and, when configured,
/// the replayed control history. Refusals name partition, requested offset and boundary.
pub fn decide(
    markers: &[Marker],
    policy: &RecoveryPolicy,
    live: &TopicDescription,
    history: Option<&ControlHistory>,
) -> Result<RecoveryDecision> {
    check_policies(policy)?;
    let enforced = policy.control_topic.is_some();
    if markers.is_empty() {
        if !enforced {
            return Ok(RecoveryDecision {
                topic: live.topic.clone(),
                requested: PartitionOffsets::new(),
                mode: RecoveryMode::Standard,
                versioned: false,
            });
        }
        let boundary = history.map(ControlHistory::boundary).unwrap_or_default();
        return Err(CleanupError::RecoveryRefused(if boundary.is_empty() {
            no_boundary_message(policy)
        } else {
            format!(
                "Cannot initialize Kafka action state without a recovery marker because cleanup boundary {} is committed",
                boundary.brief()
            )
        }));
    }
    let mut requested: Option<PartitionOffsets> = None;
    let (mut legacy, mut versioned) = (false, false);
    for marker in markers {
        match marker {
            Marker::Versioned(m) => {
                versioned = true;
                if m.topic != live.topic {
                    return Err(CleanupError::InvalidMarker(format!(
                        "Kafka action-state recovery marker references topic {}, but the configured topic is {}",
                        m.topic, live.topic
                    )));
                }
                check_identity(
                    &live.topic,
                    &m.topic_id,
                    &m.offsets.partitions(),
                    Some(live),
                    "since the recovery marker was taken",
                )?;
            }
            Marker::Legacy(offsets) => {
                legacy = true;
                if !offsets.has_partitions(&live.partitions) {
                    return Err(CleanupError::InvalidMarker(format!(
                        "Kafka action-state recovery marker contains partitions {}, but topic {} currently has partitions {}{}",
                        brief_partitions(&offsets.partitions()),
                        live.topic,
                        brief_partitions(&live.partitions),
                        partition_difference(&offsets.partitions(), &live.partitions)
                    )));
                }
            }
        }
        match &mut requested {
            Some(merged) => merge_minimum(merged, marker.offsets()),
            None => requested = Some(marker.offsets().clone()),
        }
    }
    if legacy && versioned {
        return Err(CleanupError::RecoveryRefused(
            "Cannot restore from a mixture of versioned and legacy Kafka recovery markers".into(),
        ));
    }
    if legacy && enforced {
        return Err(CleanupError::RecoveryRefused(
            "Checkpoint-aligned cleanup requires versioned Kafka recovery markers: legacy markers have no physical topic identity and no comparable boundary".into(),
        ));
    }
    let requested = requested.unwrap_or_default();
    let mode = if enforced {
        let history = history
            .filter(|h| !h.is_empty())
            .ok_or_else(|| CleanupError::RecoveryRefused(no_boundary_message(policy)))?;
        history.check_dedicated(&live.topic, &live.topic_id, &live.partitions)?;
        let boundary = history.boundary();
        check_boundary(&live.topic, &requested, &boundary)?;
        RecoveryMode::Enforced { boundary }
    } else {
        RecoveryMode::Standard
    };
    Ok(RecoveryDecision {
        topic: live.topic.clone(),
        requested,
        mode,
        versioned,
    })
}

fn no_boundary_message(policy: &RecoveryPolicy) -> String {
    format!(
        "Kafka cleanup control topic {} contains no committed boundary; apply a cleanup plan before enabling checkpoint-aligned cleanup during recovery",
        policy.control_topic.as_deref().unwrap_or("")
    )
}

/// Cleanup deletes whole prefixes while per-key tombstones promise something else: refuse both.
pub fn check_policies(policy: &RecoveryPolicy) -> Result<()> {
    if policy.control_topic.is_some() && policy.tombstones_enabled {
        return Err(CleanupError::ConflictingPolicies(
            "Per-key Kafka tombstones cannot be enabled with checkpoint-aligned cleanup: choose one recovery policy".into(),
        ));
    }
    Ok(())
}

/// Every requested offset must be at or above the committed boundary (COMMITTED counts).
/// The error names the first partition below it (`boundary_violations` lists them all).
pub fn check_boundary(
    topic: &str,
    requested: &PartitionOffsets,
    boundary: &PartitionOffsets,
) -> Result<()> {
    match boundary_violations(topic, requested, boundary)
        .into_iter()
        .next()
    {
        Some(first) => Err(CleanupError::BoundaryViolation(first)),
        None => Ok(()),
    }
}

/// Every partition whose requested offset is below the committed boundary, ascending.
pub fn boundary_violations(
    topic: &str,
    requested: &PartitionOffsets,
    boundary: &PartitionOffsets,
) -> Vec<BoundaryViolation> {
    boundary
        .iter()
        .filter_map(|(partition, committed)| {
            let asked = requested.get(partition).unwrap_or(0);
            (asked < committed).then(|| BoundaryViolation {
                topic: topic.to_owned(),
                partition,
                requested: asked,
                boundary: committed,
            })
        })
        .collect()
}

/// `check_ranges` for a decision: under an enforced boundary, a requested offset that is at or
/// above the boundary yet below the live beginning means records were deleted outside the
/// control topic's history, which is refused as a broken history rather than as a plain
/// unavailable range.
pub fn check_decided_ranges(
    decision: &RecoveryDecision,
    policy: &RecoveryPolicy,
    beginnings: &PartitionOffsets,
    ends: &PartitionOffsets,
) -> Result<Vec<RangeRow>> {
    let topic = &decision.topic;
    check_ranges(topic, &decision.requested, beginnings, ends).map_err(|error| {
        let (CleanupError::OffsetsUnavailable(v), RecoveryMode::Enforced { boundary }) =
            (&error, &decision.mode)
        else {
            return error;
        };
        let past: Vec<(u32, u64, u64)> = decision
            .requested
            .iter()
            .filter_map(|(p, requested)| {
                let beginning = beginnings.get(p)?;
                (beginning > requested).then(|| (p, beginning, boundary.get(p).unwrap_or(0)))
            })
            .collect();
        match (v.beginning, policy.control_topic.as_deref()) {
            (Some(beginning), Some(control)) if beginning > v.requested => {
                match broken_history(topic, control, &past) {
                    Some(sentence) => CleanupError::RecoveryRefused(format!(
                        "Cannot restore Kafka action state for {topic}-{} from offset {}: {sentence}",
                        v.partition, v.requested
                    )),
                    None => error,
                }
            }
            _ => error,
        }
    })
}

/// Per partition (partition, requested, beginning, end) for partitions Kafka can serve.
pub type RangeRow = (u32, u64, u64, u64);

/// Each requested offset must lie within [beginning, end]; `requested == end` replays nothing.
pub fn check_ranges(
    topic: &str,
    requested: &PartitionOffsets,
    beginnings: &PartitionOffsets,
    ends: &PartitionOffsets,
) -> Result<Vec<RangeRow>> {
    let mut rows = Vec::with_capacity(requested.len());
    for (partition, asked) in requested.iter() {
        let (beginning, end) = (beginnings.get(partition), ends.get(partition));
        match (beginning, end) {
            (Some(b), Some(e)) if b <= asked && asked <= e => rows.push((partition, asked, b, e)),
            _ => {
                return Err(CleanupError::OffsetsUnavailable(RangeViolation {
                    topic: topic.to_owned(),
                    partition,
                    requested: asked,
                    beginning,
                    end,
                }));
            }
        }
    }
    Ok(rows)
}

/// The outcome of check-recovery: the decision and the live ranges it was checked against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveryCheck {
    pub decision: RecoveryDecision,
    pub ranges: Vec<RangeRow>,
}

/// A refused check-recovery: the error, and when it is a boundary violation, every partition
/// below the boundary (the error names the first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveryRefusal {
    pub error: CleanupError,
    pub violations: Vec<BoundaryViolation>,
    /// The way out, for a boundary violation: which plan, from which recovery point, committed
    /// the boundary, and which recovery points a restore may use instead.
    pub hint: Option<String>,
}

impl From<CleanupError> for RecoveryRefusal {
    fn from(error: CleanupError) -> Self {
        RecoveryRefusal {
            error,
            violations: Vec::new(),
            hint: None,
        }
    }
}

/// For a restore refused below the boundary: the plans that committed the boundary of the
/// violating partitions (the first plan in the log to reach each one), with their recovery
/// points, and the recovery points a restore may use instead.
pub fn boundary_origin(
    history: &ControlHistory,
    violations: &[BoundaryViolation],
) -> Option<String> {
    let mut origins: Vec<&action_state_format::control::ControlRecord> = Vec::new();
    for violation in violations {
        let origin = history
            .operations()
            .iter()
            .find(|op| op.plan.offsets.get(violation.partition) == Some(violation.boundary));
        if let Some(origin) = origin
            && !origins
                .iter()
                .any(|o| o.plan.plan_id == origin.plan.plan_id)
        {
            origins.push(origin);
        }
    }
    let named = origins
        .iter()
        .map(|op| {
            format!(
                "plan {} from recovery point {} ({})",
                op.plan.plan_id,
                op.plan.source_recovery_point,
                op.status.as_str()
            )
        })
        .collect::<Vec<_>>();
    let (first, rest) = named.split_first()?;
    let by = if rest.is_empty() {
        first.clone()
    } else {
        format!("{first} and {}", rest.join(" and "))
    };
    let points = origins
        .iter()
        .map(|op| op.plan.source_recovery_point.as_str())
        .collect::<Vec<_>>()
        .join(" or ");
    Some(format!(
        "the boundary was committed by {by}: restore from {points} or a recovery point taken after it; the records this recovery point needs below the boundary are deleted, or will be when the plan is applied"
    ))
}

/// `check_recovery`, refusing a restore below the boundary with every violating partition.
pub fn check_recovery_detailed<C: Capabilities>(
    kafka: &mut Policy<C>,
    markers: &[Marker],
    policy: &RecoveryPolicy,
) -> std::result::Result<RecoveryCheck, Box<RecoveryRefusal>> {
    let mut history = None;
    check_recovery_with(kafka, markers, policy, &mut history)
        .map_err(|error| detailed(error, markers, history.as_ref()))
}

/// A refused restore of `markers`, with every partition below the boundary and who committed
/// it when the refusal is a boundary violation and the control log was read (`history`).
pub(crate) fn detailed(
    error: CleanupError,
    markers: &[Marker],
    history: Option<&ControlHistory>,
) -> Box<RecoveryRefusal> {
    let violations = match (&error, history) {
        (CleanupError::BoundaryViolation(first), Some(history)) => {
            let mut requested: Option<PartitionOffsets> = None;
            for marker in markers {
                if let Marker::Versioned(m) = marker {
                    match &mut requested {
                        Some(merged) => merge_minimum(merged, &m.offsets),
                        None => requested = Some(m.offsets.clone()),
                    }
                }
            }
            let all = boundary_violations(
                &first.topic,
                &requested.unwrap_or_default(),
                &history.boundary(),
            );
            if all.first() == Some(first) {
                all
            } else {
                vec![first.clone()]
            }
        }
        (CleanupError::BoundaryViolation(first), None) => vec![first.clone()],
        _ => Vec::new(),
    };
    let hint = history.and_then(|history| boundary_origin(history, &violations));
    Box::new(RecoveryRefusal {
        error,
        violations,
        hint,
    })
}

/// Would a restore from `markers` be allowed now? Reads the live topic, the control topic and
/// the live ranges; replays nothing.
pub fn check_recovery<C: Capabilities>(
    kafka: &mut Policy<C>,
    markers: &[Marker],
    policy: &RecoveryPolicy,
) -> Result<RecoveryCheck> {
    check_recovery_with(kafka, markers, policy, &mut None)
}

fn check_recovery_with<C: Capabilities>(
    kafka: &mut Policy<C>,
    markers: &[Marker],
    policy: &RecoveryPolicy,
    read: &mut Option<ControlHistory>,
) -> Result<RecoveryCheck> {
    check_policies(policy)?;
    let topic = data_topic(markers, policy)?;
    let (live, control) = describe_inputs(kafka, &topic, policy)?;
    let live = live.ok_or_else(|| {
        CleanupError::InvalidArgument(format!("Kafka action-state topic {topic} does not exist"))
    })?;
    *read = replay_control(kafka, policy, control)?;
    let decision = decide(markers, policy, &live.description, read.as_ref())?;
    if decision.requested.is_empty() {
        return Ok(RecoveryCheck {
            decision,
            ranges: Vec::new(),
        });
    }
    let (beginnings, ends) = requested_ranges(&live, &decision.requested);
    let ranges = check_decided_ranges(&decision, policy, &beginnings, &ends)?;
    Ok(RecoveryCheck { decision, ranges })
}

/// What a recovery decision is read from, in one request: the data topic `topic` and, when
/// the policy names one, the control topic (with its cleanup.policy), each with every
/// partition's range (`None`: missing). Replaying the control log up to the end this answer
/// gave (`replay_control`) then costs no other admin request. A plan committed and deleted
/// while the two are read may be missing from the history, as it could when they were read in
/// turn: if the ranges show its delete, a restore below its boundary finds its offsets gone and
/// is refused.
pub fn describe_inputs<C: Capabilities>(
    kafka: &mut Policy<C>,
    topic: &str,
    policy: &RecoveryPolicy,
) -> Result<(Option<TopicState>, Option<TopicState>)> {
    let (topics, names) = match &policy.control_topic {
        Some(control) => (vec![topic, control.as_str()], &[CLEANUP_POLICY][..]),
        None => (vec![topic], &[][..]),
    };
    let mut states = kafka.inspect_ranges(&topics, names)?.into_iter();
    Ok((states.next().flatten(), states.next().flatten()))
}

/// The policy's control history from the control topic `describe_inputs` described; `None`
/// without a control topic.
pub fn replay_control<C: Capabilities>(
    kafka: &mut Policy<C>,
    policy: &RecoveryPolicy,
    control: Option<TopicState>,
) -> Result<Option<ControlHistory>> {
    match &policy.control_topic {
        Some(name) => Ok(Some(replay_described(kafka, name, control)?)),
        None => Ok(None),
    }
}

/// Beginnings and ends of the `requested` partitions, from a described topic's ranges.
pub fn requested_ranges(
    live: &TopicState,
    requested: &PartitionOffsets,
) -> (PartitionOffsets, PartitionOffsets) {
    let asked = |p: &u32| requested.get(*p).is_some();
    let rows = live.ranges.iter().filter(|r| asked(&r.partition));
    (
        rows.clone().map(|r| (r.partition, r.beginning)).collect(),
        rows.map(|r| (r.partition, r.end)).collect(),
    )
}

/// The data topic to check: the configured one when the runtime names it (the decision table
/// then refuses markers of any other topic), else the topic the first versioned marker names.
fn data_topic(markers: &[Marker], policy: &RecoveryPolicy) -> Result<String> {
    if let Some(configured) = &policy.topic {
        return Ok(configured.clone());
    }
    let named = markers.iter().find_map(|m| match m {
        Marker::Versioned(v) => Some(v.topic.clone()),
        Marker::Legacy(_) => None,
    });
    named.ok_or_else(|| {
        CleanupError::InvalidArgument(if markers.is_empty() {
            "No recovery markers were given and no data topic is configured; name the data topic explicitly".into()
        } else {
            "Legacy recovery markers do not name their Kafka topic; name the data topic explicitly"
                .into()
        })
    })
}

/// Validates an existing control topic (never creates one) and replays its log: one describe
/// gives its identity, its cleanup.policy and the range the read covers.
pub fn read_history<C: Capabilities>(
    kafka: &mut Policy<C>,
    control: &str,
) -> Result<ControlHistory> {
    let state = kafka
        .inspect_ranges(&[control], &[CLEANUP_POLICY])?
        .into_iter()
        .next()
        .flatten();
    replay_described(kafka, control, state)
}

/// Validates the control topic as `inspect_ranges` described it (`None`: missing) and replays
/// its log over the range that description gave.
fn replay_described<C: Capabilities>(
    kafka: &mut Policy<C>,
    control: &str,
    state: Option<TopicState>,
) -> Result<ControlHistory> {
    // A control topic that is not there is a wrong name (or a deleted history), not a restore
    // the boundary refuses: nothing was checked against a boundary.
    let state = state.ok_or_else(|| {
        CleanupError::InvalidControlTopic(format!(
            "Kafka cleanup control topic {control} does not exist: check the control topic name the runtime is configured with; if it is right, its history was deleted (restore it from its backup), or no cleanup plan was ever applied (apply one before enabling checkpoint-aligned cleanup during recovery)"
        ))
    })?;
    check_control_topic(control, &state.description, &state.configs)?;
    let (beginning, end) = state
        .ranges
        .iter()
        .find(|r| r.partition == 0)
        .map(|r| (r.beginning, r.end))
        .ok_or_else(|| {
            CleanupError::Kafka(action_state_format::error::KafkaFailure::new(
                "read-control-log",
                format!(
                    "Kafka did not return the offsets of partition 0 of control topic {control}; its history cannot be read"
                ),
                true,
            ))
        })?;
    let entries = kafka.read_control_range(control, beginning, end)?;
    ControlHistory::replay(&entries)
}

/// The sentence for a data topic that begins past its committed boundary on the partitions
/// `past` (partition, beginning, boundary); `None` when there are none.
pub fn broken_history(
    topic: &str,
    control_topic: &str,
    past: &[(u32, u64, u64)],
) -> Option<String> {
    let (shown, rest) = past.split_at(past.len().min(5));
    if shown.is_empty() {
        return None;
    }
    let mut partitions = shown
        .iter()
        .map(|(p, beginning, boundary)| {
            format!("partition {p} begins at {beginning}, boundary {boundary}")
        })
        .collect::<Vec<_>>()
        .join("; ");
    if !rest.is_empty() {
        partitions.push_str(&format!("; and {} more partitions", rest.len()));
    }
    Some(format!(
        "Broken cleanup history: Kafka action-state topic {topic} begins past the committed boundary of control topic {control_topic} ({partitions}), so records were deleted outside this history (another control topic or a manual DeleteRecords) and a restore this history allows may miss records it needs"
    ))
}
