//! What `inspect` shows of a snapshot: every operator with its states, and the markers of
//! those that keep them.

use super::metadata::OperatorState;
use super::{NeededFile, OperatorRef, Snapshot, StateFile, StoredMarker, marker_states};
use crate::error::Result;

/// One named operator state of an operator, over all its subtasks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateSummary {
    pub name: String,
    pub distribution: &'static str,
    pub elements: usize,
}

/// An operator as `inspect` shows it.
#[derive(Debug, Clone)]
pub struct OperatorSummary {
    pub id: String,
    pub uid: Option<String>,
    pub name: Option<String>,
    pub parallelism: i32,
    pub max_parallelism: i32,
    pub subtasks: usize,
    pub finished_subtasks: usize,
    pub states: Vec<StateSummary>,
    pub keyed_state: bool,
    pub channel_state: bool,
    pub coordinator_state: bool,
    /// The stored markers, when the operator has a marker state and its files were supplied.
    pub markers: Option<Vec<StoredMarker>>,
}

impl<'a> Snapshot<'a> {
    /// The state files of every operator that keeps a `recoveryMarker` state.
    pub fn all_marker_files(&self) -> Result<Vec<NeededFile>> {
        self.files_of(self.metadata.operators.iter())
    }

    /// Every operator with its states, and the markers of those whose files are in `files`.
    pub fn summary(&self, files: &[StateFile<'_>]) -> Result<Vec<OperatorSummary>> {
        let mut operators = Vec::new();
        for operator in &self.metadata.operators {
            let mut states: Vec<StateSummary> = Vec::new();
            for subtask in &operator.subtasks {
                let handles = subtask.managed_operator_state.iter();
                for state in handles.flat_map(|handle| handle.states.iter()) {
                    match states.iter_mut().find(|s| s.name == state.name) {
                        Some(known) => known.elements += state.offsets.len(),
                        None => states.push(StateSummary {
                            name: state.name.clone(),
                            distribution: state.distribution.name(),
                            elements: state.offsets.len(),
                        }),
                    }
                }
            }
            let has_markers = marker_states(operator).next().is_some();
            let markers = if has_markers && self.files_present(operator, files)? {
                let which = OperatorRef::UidHash(operator.id_hex());
                Some(self.stored_markers(&which, files)?)
            } else {
                None
            };
            operators.push(OperatorSummary {
                id: operator.id_hex(),
                uid: operator.uid.clone(),
                name: operator.name.clone(),
                parallelism: operator.parallelism,
                max_parallelism: operator.max_parallelism,
                subtasks: operator.subtasks.len(),
                finished_subtasks: operator.subtasks.iter().filter(|s| s.finished).count(),
                states,
                keyed_state: operator
                    .subtasks
                    .iter()
                    .any(|s| s.managed_keyed_state || s.raw_keyed_state),
                channel_state: operator
                    .subtasks
                    .iter()
                    .any(|s| s.input_channel_handles > 0 || s.output_channel_handles > 0),
                coordinator_state: operator.coordinator_state,
                markers,
            });
        }
        Ok(operators)
    }

    fn files_present(&self, operator: &OperatorState<'a>, files: &[StateFile<'_>]) -> Result<bool> {
        let needed = self.files_of(std::iter::once(operator))?;
        Ok(needed
            .iter()
            .all(|file| files.iter().any(|f| f.path == file.path)))
    }
}
