//! The `marker-planning` export: the core's `MarkerFilesPlanner` as a resource.

use std::cell::RefCell;

use crate::Component;
use crate::bindings::action_state::cleanup::types::CleanupError;
use crate::bindings::exports::action_state::cleanup::marker_planning::{
    Guest, GuestMarkerFilesPlanner, MarkerFilesPlan,
};
use crate::plans::files_plan;

impl Guest for Component {
    type MarkerFilesPlanner = FilesPlanner;
}

/// The `marker-files-planner` resource: the core's planner until `finish` takes it.
pub struct FilesPlanner(RefCell<Option<action_state_format::marker_file::MarkerFilesPlanner>>);

fn finished() -> action_state_format::CleanupError {
    action_state_format::CleanupError::InvalidArgument(
        "This marker files planner has finished already; create a new one".into(),
    )
}

impl GuestMarkerFilesPlanner for FilesPlanner {
    fn new(recovery_point: String) -> Self {
        FilesPlanner(RefCell::new(Some(
            action_state_format::marker_file::MarkerFilesPlanner::new(&recovery_point),
        )))
    }

    fn add_file(&self, name: String, text: String) -> Result<(), CleanupError> {
        match self.0.borrow_mut().as_mut() {
            Some(planner) => Ok(planner.add_file(&name, &text)?),
            None => Err(finished().into()),
        }
    }

    fn finish(&self) -> Result<MarkerFilesPlan, CleanupError> {
        let planner = self.0.borrow_mut().take().ok_or_else(finished)?;
        Ok(files_plan(planner.finish()?))
    }
}
