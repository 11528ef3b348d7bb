// action-state-cleanup-validator: the project's `validator.wasm` component (world `validator`,
// transpiled by jco into ./component/) as plain functions. Every function is the component's
// `plans` function of the same name; a refusal throws a CleanupError carrying the WIT
// `cleanup-error` case and the component's one-sentence message. A trap (a bug in the
// component) is not a refusal and is rethrown as it is.
//
// Offsets are bigints (u64), partitions numbers (u32). Declarations: index.d.ts.
export { CleanupError, InputError } from './errors.js';
export { javaMap, markerTexts, parseBoundary, topLevelItems } from './inputs.js';
export {
  checkAdvance,
  effectiveBoundary,
  message,
  parseControlRecord,
  parseMarker,
  planFromMarkers,
  renderControlRecord,
  renderMarker,
  renderPlan,
  replayControlLog,
  sealPlan,
  splitMarkers,
  verifyPlan,
} from './plans.js';
