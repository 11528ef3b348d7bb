// action-state-cleanup-validator: the project's `reader.wasm` component (world `reader`: the
// validator's `plans` plus `snapshots` over picked files; transpiled by jco into ./component/)
// as plain functions. Every function is the component's `plans` function of the same name; a
// refusal throws a CleanupError carrying the WIT `cleanup-error` case and the component's
// one-sentence message. A trap (a bug in the component) is not a refusal and is rethrown as it is.
//
// The page's helpers (inputs.js: pastes; snapshots.js: picked snapshot files) throw InputError
// for what the operator gave that they cannot use.
//
// Offsets are bigints (u64), partitions numbers (u32). Declarations: index.d.ts.
export { CleanupError, InputError } from './errors.js';
export { javaMap, markerTexts, parseBoundary, topLevelItems } from './inputs.js';
export {
  checkAdvance,
  computePlan,
  effectiveBoundary,
  inspectSnapshot,
  message,
  parseControlRecord,
  parseMarker,
  planFromMarkers,
  renderControlRecord,
  renderMarker,
  renderPlan,
  replayControlLog,
  sealPlan,
  snapshotFiles,
  splitMarkers,
  verifyPlan,
} from './plans.js';
export { inspectSnapshotFiles, planFromSnapshot } from './snapshots.js';
