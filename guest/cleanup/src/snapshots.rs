//! The `snapshots` export: the core's store-driven snapshot reader over the `snapshot-store`
//! import. The host answers reads by location; every decision is the core's.

use action_state_format::snapshot::store::{
    SnapshotFailure, SnapshotStore, StoreError, StoredSnapshot,
};

use crate::Component;
use crate::bindings::action_state::cleanup::snapshot_store as wit_store;
use crate::bindings::exports::action_state::cleanup::plans::{OperatorRef, SnapshotSummary};
use crate::bindings::exports::action_state::cleanup::snapshots::{
    self as wit, Guest, PartitionBound, PointFailure, Reads, RetainedFailure, RetainedPlan,
    RetainedPoint, SnapshotPlan,
};
use crate::convert::from_offsets;
use crate::plans::{count, operator_ref, snapshot_operator};

/// The store the host imports, as the core sees it: each method is one import call.
pub struct HostStore;

impl SnapshotStore for HostStore {
    fn read(&mut self, location: &str, max_bytes: u64) -> Result<Vec<u8>, StoreError> {
        wit_store::read(location, max_bytes).map_err(from_wit)
    }

    fn list(&mut self, location: &str) -> Result<Vec<String>, StoreError> {
        wit_store::list_folder(location).map_err(from_wit)
    }
}

fn from_wit(error: wit_store::StoreError) -> StoreError {
    match error {
        wit_store::StoreError::NotFound(s) => StoreError::NotFound(s),
        wit_store::StoreError::Denied(s) => StoreError::Denied(s),
        wit_store::StoreError::Unreachable(s) => StoreError::Unreachable(s),
        wit_store::StoreError::Unsupported(s) => StoreError::Unsupported(s),
        wit_store::StoreError::TooLarge(n) => StoreError::TooLarge(n),
        wit_store::StoreError::Failed(s) => StoreError::Failed(s),
    }
}

pub fn to_wit(error: StoreError) -> wit_store::StoreError {
    match error {
        StoreError::NotFound(s) => wit_store::StoreError::NotFound(s),
        StoreError::Denied(s) => wit_store::StoreError::Denied(s),
        StoreError::Unreachable(s) => wit_store::StoreError::Unreachable(s),
        StoreError::Unsupported(s) => wit_store::StoreError::Unsupported(s),
        StoreError::TooLarge(n) => wit_store::StoreError::TooLarge(n),
        StoreError::Failed(s) => wit_store::StoreError::Failed(s),
    }
}

fn failure(failure: SnapshotFailure) -> wit::SnapshotFailure {
    match failure {
        SnapshotFailure::Refused(error) => wit::SnapshotFailure::Refused(error.into()),
        SnapshotFailure::Store {
            location,
            error,
            message,
        } => wit::SnapshotFailure::Store(wit::StoreFailure {
            location,
            error: to_wit(error),
            message,
        }),
    }
}

fn reads(reads: action_state_format::snapshot::store::Reads) -> Reads {
    Reads {
        requests: reads.requests,
        bytes: reads.bytes,
    }
}

impl Guest for Component {
    fn plan_snapshot(
        location: String,
        recovery_point: Option<String>,
        operator: OperatorRef,
    ) -> Result<SnapshotPlan, wit::SnapshotFailure> {
        let operator = operator_ref(operator);
        let planned = StoredSnapshot::open(&mut HostStore, &location)
            .and_then(|mut s| s.plan(&mut HostStore, recovery_point.as_deref(), &operator))
            .map_err(failure)?;
        Ok(SnapshotPlan {
            text: planned.plan.render_pretty(),
            plan: planned.plan.into(),
            markers: count(planned.markers),
            reads: reads(planned.reads),
        })
    }

    fn plan_retained(
        locations: Vec<String>,
        exclusions: Vec<String>,
        operator: OperatorRef,
    ) -> Result<RetainedPlan, RetainedFailure> {
        use action_state_format::snapshot::retained::{self, RetainedFailure as Failure};
        let planned = retained::plan_retained(
            &mut HostStore,
            &locations,
            &exclusions,
            &operator_ref(operator),
        )
        .map_err(|refusal| match refusal {
            Failure::Refused(error) => RetainedFailure::Refused(error.into()),
            Failure::Store(store) => match failure(store) {
                wit::SnapshotFailure::Store(store) => RetainedFailure::Store(store),
                wit::SnapshotFailure::Refused(error) => RetainedFailure::Refused(error),
            },
            Failure::Point {
                location,
                failure: why,
            } => RetainedFailure::Point(PointFailure {
                location,
                failure: failure(*why),
            }),
        })?;
        Ok(RetainedPlan {
            text: planned.plan.render_pretty(),
            plan: planned.plan.into(),
            points: planned
                .points
                .into_iter()
                .map(|point| RetainedPoint {
                    location: point.location,
                    offsets: from_offsets(&point.offsets),
                })
                .collect(),
            bounds: planned
                .bounds
                .into_iter()
                .map(|bound| PartitionBound {
                    partition: bound.partition,
                    offset: bound.offset,
                    points: bound.points.into_iter().map(count).collect(),
                })
                .collect(),
            recorded: count(planned.recorded),
            bounds_every_partition: planned.bounds_every_partition,
            incomplete: planned.incomplete,
            excluded: planned.excluded,
            unmatched_exclusions: planned.unmatched_exclusions,
            reads: reads(planned.reads),
        })
    }

    fn inspect(location: String) -> Result<SnapshotSummary, wit::SnapshotFailure> {
        let (format_version, checkpoint_id, operators) =
            StoredSnapshot::open(&mut HostStore, &location)
                .and_then(|mut s| s.inspect(&mut HostStore))
                .map_err(failure)?;
        Ok(SnapshotSummary {
            format_version,
            checkpoint_id,
            operators: operators.into_iter().map(snapshot_operator).collect(),
        })
    }
}
