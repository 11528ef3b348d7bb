//! One instance of the cleanup component: a store over this host's capabilities and the calls
//! of its exports.

use wasmtime::Store;

use super::imports::{HostState, take_records};
use super::{
    ApplyFailure, ApplyOptions, ApplyReport, CALL_LIMIT, Caps, CleanupError, MarkerFilesPlan,
    MarkerSource, OperatorRef, PartitionPreview, Plan, RecoveryMarker, RecoveryPolicy,
    RecoveryRefusal, RecoveryVerdict, ReplayBatch, ReplayOptions, RestoreSource, RetainedFailure,
    RetainedPlan, SnapshotFailure, SnapshotFile, SnapshotFileRef, SnapshotPlan, SnapshotSummary,
    StatusReport, bindings, epoch_ticks,
};
use crate::kafka::{KafkaSettings, RequestCounts};

/// One instance of the cleanup component.
pub struct CleanupInstance {
    pub(super) store: Store<HostState<Caps>>,
    pub(super) bindings: bindings::Cleanup,
    /// The Kafka settings the capabilities were made with.
    pub(super) settings: KafkaSettings,
}

impl CleanupInstance {
    fn reset_deadline(&mut self) {
        self.store.set_epoch_deadline(epoch_ticks(CALL_LIMIT));
    }

    /// Makes one capability misbehave from now on (`None`: behave), for tests of the
    /// component's rules against a failing or lying host.
    #[cfg(feature = "testing")]
    pub fn misbehave(&mut self, lie: Option<crate::testing::Lie>) {
        self.store.data_mut().caps.inner.misbehave(lie);
    }

    /// The Kafka settings this instance's capabilities use.
    pub fn settings(&self) -> &KafkaSettings {
        &self.settings
    }

    /// The capability calls this instance's component made, by kind.
    pub fn counts(&self) -> RequestCounts {
        self.store.data().caps.counts
    }

    /// Reads snapshots with these stores from now on (`--flink-config`).
    pub fn use_snapshot_stores(&mut self, stores: crate::stores::SnapshotStores) {
        self.store.data_mut().stores = stores;
    }

    /// The plan of a snapshot's markers, read through `snapshot-store` (`snapshots.plan-snapshot`).
    pub fn plan_snapshot(
        &mut self,
        location: &str,
        recovery_point: Option<&str>,
        operator: &OperatorRef,
    ) -> wasmtime::Result<Result<SnapshotPlan, SnapshotFailure>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_snapshots()
            .call_plan_snapshot(&mut self.store, location, recovery_point, operator)
    }

    /// What a snapshot holds, read through `snapshot-store` (`snapshots.inspect`).
    pub fn inspect_stored_snapshot(
        &mut self,
        location: &str,
    ) -> wasmtime::Result<Result<SnapshotSummary, SnapshotFailure>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_snapshots()
            .call_inspect(&mut self.store, location)
    }

    /// The plan from every recovery point at or below `locations` (`snapshots.plan-retained`).
    pub fn plan_retained(
        &mut self,
        locations: &[String],
        exclusions: &[String],
        operator: &OperatorRef,
    ) -> wasmtime::Result<Result<RetainedPlan, RetainedFailure>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_snapshots()
            .call_plan_retained(&mut self.store, locations, exclusions, operator)
    }

    pub fn verify_plan(&mut self, json: &str) -> wasmtime::Result<Result<Plan, CleanupError>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_plans()
            .call_verify_plan(&mut self.store, json)
    }

    /// The one planner (`plans.compute-plan`): markers from texts, marker files or a Flink snapshot.
    pub fn plan(
        &mut self,
        recovery_point: &str,
        source: &MarkerSource,
    ) -> wasmtime::Result<Result<MarkerFilesPlan, CleanupError>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_plans()
            .call_compute_plan(&mut self.store, recovery_point, source)
    }

    /// The state files a snapshot's markers live in (`plans.snapshot-files`).
    pub fn snapshot_files(
        &mut self,
        location: &str,
        metadata: &[u8],
        operator: Option<&OperatorRef>,
    ) -> wasmtime::Result<Result<Vec<SnapshotFileRef>, CleanupError>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_plans()
            .call_snapshot_files(&mut self.store, location, metadata, operator)
    }

    /// The OperatorID a uid or hash names (`plans.operator-id`).
    pub fn operator_id(
        &mut self,
        operator: &OperatorRef,
    ) -> wasmtime::Result<Result<String, CleanupError>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_plans()
            .call_operator_id(&mut self.store, operator)
    }

    /// What a snapshot holds (`plans.inspect-snapshot`).
    pub fn inspect_snapshot(
        &mut self,
        location: &str,
        metadata: &[u8],
        files: &[SnapshotFile],
    ) -> wasmtime::Result<Result<SnapshotSummary, CleanupError>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_plans()
            .call_inspect_snapshot(&mut self.store, location, metadata, files)
    }

    pub fn render_plan(&mut self, plan: &Plan) -> wasmtime::Result<String> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_plans()
            .call_render_plan(&mut self.store, plan)
    }

    pub fn plan_from_markers(
        &mut self,
        recovery_point: &str,
        markers: &[String],
    ) -> wasmtime::Result<Result<Plan, CleanupError>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_plans()
            .call_plan_from_markers(&mut self.store, recovery_point, markers)
    }

    /// Starts planning from marker files handed over one at a time (`marker-files-planner`):
    /// the guest keeps only the running minimum, so each file's text can be read into the same
    /// buffer and is freed in the guest after its call.
    pub fn start_marker_files(
        &mut self,
        recovery_point: &str,
    ) -> wasmtime::Result<MarkerFilesPlanner> {
        self.reset_deadline();
        let api = self
            .bindings
            .action_state_cleanup_marker_planning()
            .marker_files_planner();
        api.call_constructor(&mut self.store, recovery_point)
            .map(MarkerFilesPlanner)
    }

    /// Splits one more marker file and takes its markers (see `start_marker_files`).
    pub fn add_marker_file(
        &mut self,
        planner: &MarkerFilesPlanner,
        name: &str,
        text: &str,
    ) -> wasmtime::Result<Result<(), CleanupError>> {
        self.reset_deadline();
        let api = self
            .bindings
            .action_state_cleanup_marker_planning()
            .marker_files_planner();
        api.call_add_file(&mut self.store, planner.0, name, text)
    }

    /// The plan of every file added; drops the guest resource.
    pub fn finish_marker_files(
        &mut self,
        planner: MarkerFilesPlanner,
    ) -> wasmtime::Result<Result<MarkerFilesPlan, CleanupError>> {
        self.reset_deadline();
        let api = self
            .bindings
            .action_state_cleanup_marker_planning()
            .marker_files_planner();
        let answer = api.call_finish(&mut self.store, planner.0);
        planner.0.resource_drop(&mut self.store)?;
        answer
    }

    pub fn parse_marker(
        &mut self,
        json: &str,
    ) -> wasmtime::Result<Result<RecoveryMarker, CleanupError>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_plans()
            .call_parse_marker(&mut self.store, json)
    }

    /// Splits the marker file `name` (`plans.split-marker-file`); a refusal names the file.
    pub fn split_marker_file(
        &mut self,
        name: &str,
        text: &str,
    ) -> wasmtime::Result<Result<Vec<String>, CleanupError>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_plans()
            .call_split_marker_file(&mut self.store, name, text)
    }

    pub fn message(&mut self, error: &CleanupError) -> wasmtime::Result<String> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_plans()
            .call_message(&mut self.store, error)
    }

    pub fn apply(
        &mut self,
        plan_json: &str,
        options: &ApplyOptions,
    ) -> wasmtime::Result<Result<ApplyReport, ApplyFailure>> {
        self.reset_deadline();
        self.bindings.action_state_cleanup_coordinator().call_apply(
            &mut self.store,
            plan_json,
            options,
        )
    }

    pub fn status(
        &mut self,
        control_topic: &str,
    ) -> wasmtime::Result<Result<StatusReport, CleanupError>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_coordinator()
            .call_control_status(&mut self.store, control_topic)
    }

    /// `coordinator.preview-plan`: what the plan would delete now (read-only).
    pub fn preview_plan(
        &mut self,
        plan_json: &str,
    ) -> wasmtime::Result<Result<Vec<PartitionPreview>, CleanupError>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_coordinator()
            .call_preview_plan(&mut self.store, plan_json)
    }

    pub fn check_recovery(
        &mut self,
        markers: &RestoreSource,
        policy: &RecoveryPolicy,
    ) -> wasmtime::Result<Result<RecoveryVerdict, RecoveryRefusal>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_recovery()
            .call_check_recovery(&mut self.store, markers, policy)
    }

    pub fn snapshot_marker(
        &mut self,
        topic: &str,
    ) -> wasmtime::Result<Result<String, CleanupError>> {
        self.reset_deadline();
        self.bindings
            .action_state_cleanup_recovery()
            .call_snapshot_marker(&mut self.store, topic)
    }

    /// Starts a recovery session (a guest resource owned by this instance's store).
    pub fn start_session(
        &mut self,
        topic: &str,
        policy: &RecoveryPolicy,
    ) -> wasmtime::Result<Result<RecoverySessionHandle, CleanupError>> {
        self.reset_deadline();
        let session = self
            .bindings
            .action_state_cleanup_recovery()
            .recovery_session();
        Ok(session
            .call_start(&mut self.store, topic, policy)?
            .map(RecoverySessionHandle))
    }

    pub fn restore(
        &mut self,
        session: &RecoverySessionHandle,
        markers: &RestoreSource,
        options: ReplayOptions,
    ) -> wasmtime::Result<Result<RecoveryVerdict, RecoveryRefusal>> {
        self.reset_deadline();
        let api = self
            .bindings
            .action_state_cleanup_recovery()
            .recovery_session();
        api.call_restore(&mut self.store, session.0, markers, options)
    }

    /// The next batch of a replay, its records handed over from the host's last poll.
    pub fn next_batch(
        &mut self,
        session: &RecoverySessionHandle,
        max_records: u32,
    ) -> wasmtime::Result<Result<ReplayBatch, CleanupError>> {
        self.reset_deadline();
        let api = self
            .bindings
            .action_state_cleanup_recovery()
            .recovery_session();
        let batch = match api.call_next_batch(&mut self.store, session.0, max_records)? {
            Ok(batch) => batch,
            Err(error) => return Ok(Err(error)),
        };
        let records = take_records(self.store.data_mut(), &batch.records)?;
        Ok(Ok(ReplayBatch {
            records,
            done: batch.done,
            progress: batch.progress,
        }))
    }

    pub fn session_snapshot(
        &mut self,
        session: &RecoverySessionHandle,
    ) -> wasmtime::Result<Result<String, CleanupError>> {
        self.reset_deadline();
        let api = self
            .bindings
            .action_state_cleanup_recovery()
            .recovery_session();
        api.call_snapshot_marker(&mut self.store, session.0)
    }

    /// Drops the guest resource (and with it the host consumer).
    pub fn end_session(&mut self, session: RecoverySessionHandle) -> wasmtime::Result<()> {
        session.0.resource_drop(&mut self.store)
    }
}

/// A `marker-files-planner` living in a `CleanupInstance`'s store.
#[derive(Debug)]
pub struct MarkerFilesPlanner(wasmtime::component::ResourceAny);

/// A recovery session living in a `CleanupInstance`'s store.
#[derive(Debug)]
pub struct RecoverySessionHandle(wasmtime::component::ResourceAny);
