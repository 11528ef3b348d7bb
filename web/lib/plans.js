// The component's `plans` functions with their `result::err` as a thrown CleanupError.
import { plans } from './component/validator.js';
import { CleanupError } from './errors.js';

/** Calls one `plans` function; its `result::err` becomes a CleanupError. */
function call(fn, ...args) {
  try {
    return fn(...args);
  } catch (thrown) {
    // jco throws a ComponentError carrying the `cleanup-error` variant as `payload`.
    const payload = thrown !== null && typeof thrown === 'object' ? thrown.payload : undefined;
    if (payload !== null && typeof payload === 'object' && typeof payload.tag === 'string') {
      throw new CleanupError(payload, plans.message(payload), { cause: thrown });
    }
    throw thrown;
  }
}

/** Strict parse of a plan document plus the plan-ID check (SPEC §2). Throws `invalid-plan`. */
export const verifyPlan = (planJson) => call(plans.verifyPlan, planJson);

/** The plan file form: the Java tool's pretty JSON with one trailing LF. */
export const renderPlan = (plan) => plans.renderPlan(plan);

/** The plan of one recovery point from its subtask markers (JSON texts). */
export const planFromMarkers = (recoveryPoint, markers) => call(plans.planFromMarkers, recoveryPoint, markers);

/**
 * The one planner: `{ plan, markers }` of one recovery point from `source`, a marker-source
 * variant: `{ tag: 'texts', val: [text…] }`, `{ tag: 'files', val: [{ name, text }…] }` or
 * `{ tag: 'snapshot', val: { metadata, operator, files } }`. Throws `invalid-marker`,
 * `invalid-plan`, `invalid-snapshot` or `invalid-argument` (no such operator).
 */
export const computePlan = (recoveryPoint, source) => call(plans.computePlan, recoveryPoint, source);

/**
 * The state files holding the markers of `operator` (all marker operators when `undefined`) in
 * the snapshot at `location`, whose `_metadata` bytes are `metadata`: `[{ path, written }]`,
 * `path` relative to the snapshot directory (`../shared/…` possible) unless it starts with `/`.
 */
export const snapshotFiles = (location, metadata, operator) => call(plans.snapshotFiles, location, metadata, operator);

/** A snapshot's operators, their states, and the markers of those whose files are given. */
export const inspectSnapshot = (location, metadata, files) => call(plans.inspectSnapshot, location, metadata, files);

/** Validates plan fields and computes the plan ID. */
export const sealPlan = (sourceRecoveryPoint, topic, topicId, offsets) =>
  call(plans.sealPlan, sourceRecoveryPoint, topic, topicId, offsets);

/** Parses one recovery marker: `{ tag: 'versioned' | 'legacy', val }`. */
export const parseMarker = (markerJson) => call(plans.parseMarker, markerJson);

/** The exact text of each marker in a marker file or paste (array, one per line, or one). */
export const splitMarkers = (text) => call(plans.splitMarkers, text);

/** A versioned marker in its canonical compact form. */
export const renderMarker = (marker) => plans.renderMarker(marker);

/** Parses one control-topic record (key and value as read; `undefined` for none). */
export const parseControlRecord = (key, value) => call(plans.parseControlRecord, key, value);

/** The compact JSON value of a control record. */
export const renderControlRecord = (record) => plans.renderControlRecord(record);

/** Replays a control log with every integrity rule of SPEC §7. */
export const replayControlLog = (entries) => call(plans.replayControlLog, entries);

/** The per-partition maximum over plans; throws `invalid-plan` when a plan lists a partition twice. */
export const effectiveBoundary = (planList) => call(plans.effectiveBoundary, planList);

/** Per partition `{ partition, from, to }`; throws `boundary-regression` or `invalid-plan`. */
export const checkAdvance = (plan, boundary) => call(plans.checkAdvance, plan, boundary);

/** The one-sentence message for a `cleanup-error` variant (`CleanupError#error`). */
export const message = (error) => plans.message(error);
