// The validator component (world `validator`, transpiled by jco into ../dist/) behind a small
// API that never throws for a refusal: every call returns `{ ok: true, value }` or
// `{ ok: false, error, message }`, where `error` is the typed `cleanup-error` and `message` is
// the component's own one-sentence rendering (`plans.message`), identical in every host.
// A trap (a bug in the component) is not a refusal and is rethrown.
//
// Used unchanged by the page (src/app.js) and by the Node fixture test (test/fixtures.mjs).
import { plans } from '../dist/validator.js';

/** Calls one `plans` function, turning its `result` error case into a value. */
function call(fn, ...args) {
  try {
    return { ok: true, value: fn(...args) };
  } catch (thrown) {
    // jco throws a ComponentError carrying the `cleanup-error` as `payload` for `result::err`.
    if (thrown && typeof thrown === 'object' && 'payload' in thrown) {
      return { ok: false, error: thrown.payload, message: plans.message(thrown.payload) };
    }
    throw thrown;
  }
}

/** Strict parse of a plan document plus the plan-ID check (SPEC §2). */
export const verifyPlan = (planJson) => call(plans.verifyPlan, planJson);

/** The plan file form: the Java tool's pretty JSON with one trailing LF. Never fails. */
export const renderPlan = (plan) => plans.renderPlan(plan);

/** The plan of one recovery point from its subtask markers (JSON texts). */
export const planFromMarkers = (recoveryPoint, markers) => call(plans.planFromMarkers, recoveryPoint, markers);

/** Validates plan fields and computes the plan ID. `offsets`: [{ partition, offset: bigint }]. */
export const sealPlan = (source, topic, topicId, offsets) => call(plans.sealPlan, source, topic, topicId, offsets);

/** Parses one recovery marker; `value` is `{ tag: 'versioned' | 'legacy', val }`. */
export const parseMarker = (markerJson) => call(plans.parseMarker, markerJson);

/** Replays a control log (`[{ offset: bigint, key, value }]`) with the integrity rules of SPEC §7. */
export const replayControlLog = (entries) => call(plans.replayControlLog, entries);

/** Per-partition maximum over plans. Never fails. */
export const effectiveBoundary = (planList) => plans.effectiveBoundary(planList);

/** Per partition `{ partition, from, to }`, or `boundary-regression` / `invalid-plan`. */
export const checkAdvance = (plan, boundary) => call(plans.checkAdvance, plan, boundary);

/** The one-sentence message for a `cleanup-error`. */
export const message = (error) => plans.message(error);
