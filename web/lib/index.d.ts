// Declarations of action-state-cleanup-validator: the validator component's `plans` interface
// (wit/plans.wit, wit/types.wit) as JavaScript functions. WIT u64 is bigint, u32 is number,
// option<T> is T | undefined, variants are { tag, val }, record fields are camelCase.

/** An offset of one partition: the next offset to read (markers) or the first to keep (plans). */
export interface PartitionOffset {
  /** Kafka partition number, 0 ..= 2^31-1. */
  partition: number;
  /** Kafka offset, 0 ..= 2^63-1. */
  offset: bigint;
}

/** A cleanup plan (SPEC §2). Returned plans are validated: the ID matches, offsets are sorted. */
export interface Plan {
  /** Always 1. */
  schemaVersion: number;
  /** 64 lowercase hex characters: SHA-256 of the canonical contents. */
  planId: string;
  /** The checkpoint or savepoint the plan was computed from, exactly as the operator named it. */
  sourceRecoveryPoint: string;
  topic: string;
  /** Kafka's 22-character URL-safe base64 topic UUID. */
  topicId: string;
  offsets: PartitionOffset[];
}

/** A versioned recovery marker (schema 1). */
export interface VersionedMarker {
  topic: string;
  topicId: string;
  offsets: PartitionOffset[];
}

/** A recovery marker in either of its two forms. */
export type RecoveryMarker = { tag: 'versioned'; val: VersionedMarker } | { tag: 'legacy'; val: PartitionOffset[] };

/** The status of a plan in the control topic. */
export type Status = 'committed' | 'applied';

/** The value of one control-topic record. */
export interface ControlRecord {
  status: Status;
  plan: Plan;
}

/** One record read from the control topic. `undefined` key or value: none (corruption). */
export interface ControlEntry {
  offset: bigint;
  key?: string | undefined;
  value?: string | undefined;
}

/** One partition of `checkAdvance`'s answer. */
export interface PartitionAdvance {
  partition: number;
  /** The committed boundary before the plan (0n when none). */
  from: bigint;
  /** The plan's offset. */
  to: bigint;
}

export interface BoundaryViolation {
  topic: string;
  partition: number;
  requested: bigint;
  boundary: bigint;
}

export interface BoundaryRegression {
  planId: string;
  partition: number;
  planned: bigint;
  boundary: bigint;
}

export interface TopicChange {
  topic: string;
  context: string;
  expectedTopicId: string;
  foundTopicId: string;
  expectedPartitions: Uint32Array;
  foundPartitions: Uint32Array;
}

export interface RangeViolation {
  topic: string;
  partition: number;
  requested: bigint;
  beginning?: bigint | undefined;
  end?: bigint | undefined;
}

/** What the client or broker said about a failed Kafka operation (WIT `kafka-detail`). */
export interface KafkaDetail {
  code: number;
  name: string;
  message: string;
}

/** The host's typed Kafka error (WIT `kafka-error`). */
export type KafkaErrorCase =
  | { tag: 'unknown-topic'; val: KafkaDetail }
  | { tag: 'authorization'; val: KafkaDetail }
  | { tag: 'authentication'; val: KafkaDetail }
  | { tag: 'timeout'; val: KafkaDetail }
  | { tag: 'transport'; val: KafkaDetail }
  | { tag: 'not-leader'; val: KafkaDetail }
  | { tag: 'fenced'; val: KafkaDetail }
  | { tag: 'policy-violation'; val: KafkaDetail }
  | { tag: 'offset-out-of-range'; val: KafkaDetail }
  | { tag: 'other'; val: KafkaDetail };

/** A Kafka step of the component that failed after its own retries (WIT `kafka-failure`). */
export interface KafkaError {
  operation: string;
  message: string;
  retriable: boolean;
  cause?: KafkaErrorCase | undefined;
}

/** The WIT `cleanup-error` variant: every way the component refuses or fails. */
export type CleanupErrorCase =
  | { tag: 'invalid-plan'; val: string }
  | { tag: 'invalid-marker'; val: string }
  | { tag: 'invalid-argument'; val: string }
  | { tag: 'boundary-violation'; val: BoundaryViolation }
  | { tag: 'boundary-regression'; val: BoundaryRegression }
  | { tag: 'topic-changed'; val: TopicChange }
  | { tag: 'unsafe-topic-config'; val: string }
  | { tag: 'invalid-control-topic'; val: string }
  | { tag: 'offsets-unavailable'; val: RangeViolation }
  | { tag: 'delete-unverified'; val: RangeViolation }
  | { tag: 'control-topic-corrupt'; val: string }
  | { tag: 'recovery-refused'; val: string }
  | { tag: 'conflicting-policies'; val: string }
  | { tag: 'fenced'; val: string }
  | { tag: 'replay-stalled'; val: string }
  | { tag: 'replay-record-invalid'; val: string }
  | { tag: 'kafka'; val: KafkaError }
  | { tag: 'invalid-snapshot'; val: string };

/** A WIT case name, e.g. `'invalid-plan'`. */
export type CleanupErrorKind = CleanupErrorCase['tag'];

/**
 * A refusal of the component. `message` is the component's own one sentence for it
 * (`plans.message`), identical in every host; `kind` and `detail` are the WIT case and its
 * payload; switch on `error.tag` to have `error.val` typed per case.
 */
export class CleanupError<K extends CleanupErrorKind = CleanupErrorKind> extends Error {
  constructor(error: Extract<CleanupErrorCase, { tag: K }>, message: string, options?: ErrorOptions);
  readonly name: 'CleanupError';
  readonly kind: K;
  readonly detail: Extract<CleanupErrorCase, { tag: K }>['val'];
  readonly error: Extract<CleanupErrorCase, { tag: K }>;
}

/** An operator paste the input helpers cannot read; `message` is one sentence naming it. */
export class InputError extends Error {
  constructor(message: string, options?: ErrorOptions);
  readonly name: 'InputError';
}

/** Strict parse of a plan document and the plan-ID check. Throws CleanupError `invalid-plan`. */
export function verifyPlan(planJson: string): Plan;

/** The plan file form: the Java tool's pretty JSON with one trailing LF. */
export function renderPlan(plan: Plan): string;

/**
 * The plan of one recovery point from its subtask markers (JSON texts): per partition the
 * minimum offset. Throws CleanupError `invalid-marker` or `invalid-plan`.
 */
export function planFromMarkers(recoveryPoint: string, markers: readonly string[]): Plan;

/** A marker file (or paste) for `computePlan` with `files`: the name its refusals give it, and its text. */
export interface MarkerFile {
  name: string;
  text: string;
}

/** The operator whose markers a snapshot plan reads: `--operator-uid` or `--operator-uid-hash` (32 hex digits). */
export type OperatorRef = { tag: 'uid'; val: string } | { tag: 'uid-hash'; val: string };

/** A state file the component needs to read a snapshot's markers. */
export interface SnapshotFileRef {
  /** Relative to the snapshot directory (`../shared/…` for a checkpoint's shared files) unless it starts with `/`. */
  path: string;
  /** The path as `_metadata` records it. */
  written: string;
}

/** The bytes of a state file, under the `path` that `snapshotFiles` gave. */
export interface SnapshotFile {
  path: string;
  bytes: Uint8Array;
}

/** A Flink checkpoint or savepoint: its `_metadata` bytes, the operator, and the state files `snapshotFiles` named. */
export interface SnapshotSource {
  metadata: Uint8Array;
  operator: OperatorRef;
  files: SnapshotFile[];
}

/** Where `computePlan` takes its markers from. */
export type MarkerSource =
  | { tag: 'texts'; val: string[] }
  | { tag: 'files'; val: MarkerFile[] }
  | { tag: 'snapshot'; val: SnapshotSource };

/** A plan and how many markers it was computed from. */
export interface MarkerFilesPlan {
  plan: Plan;
  markers: number;
}

/** One element of an operator's `recoveryMarker` state, as stored. */
export interface StoredMarker {
  subtask: number;
  /** The element's Java class (`…KafkaActionStateRecoveryMarker`, `java.util.HashMap` for a legacy marker, …). */
  class: string;
  /** Set for the versioned marker class. */
  schemaVersion?: number | undefined;
  topic?: string | undefined;
  topicId?: string | undefined;
  /** Partition to offset; negative values are left out. */
  offsets: PartitionOffset[];
}

/** One named operator state of a snapshot operator. */
export interface OperatorStateInfo {
  name: string;
  /** `UNION`, `SPLIT_DISTRIBUTE` or `BROADCAST`. */
  distribution: string;
  /** Elements over all subtasks. */
  elements: number;
}

/** One operator of a snapshot. */
export interface SnapshotOperator {
  /** The OperatorID's 32 hex digits (what `--operator-uid-hash` takes). */
  id: string;
  /** Written by Flink 2.x only. */
  uid?: string | undefined;
  name?: string | undefined;
  parallelism: number;
  maxParallelism: number;
  subtasks: number;
  finishedSubtasks: number;
  operatorStates: OperatorStateInfo[];
  keyedState: boolean;
  channelState: boolean;
  coordinatorState: boolean;
  /** The `recoveryMarker` elements, when the operator has that state and its files were given. */
  markers?: StoredMarker[] | undefined;
}

/** What a snapshot holds. */
export interface SnapshotSummary {
  /** The `_metadata` format version (Flink 1.20 writes 4, Flink 2.2 writes 6). */
  formatVersion: number;
  checkpointId: bigint;
  operators: SnapshotOperator[];
}

/**
 * The one planner: the plan of one recovery point from its markers, wherever they are kept, and
 * how many markers there were. For a snapshot, `recoveryPoint` is the snapshot as the job names
 * it (the Java tool's `--checkpoint`). Throws CleanupError `invalid-marker`, `invalid-plan`,
 * `invalid-snapshot`, or `invalid-argument` (no such operator; the sentence lists those present).
 */
export function computePlan(recoveryPoint: string, source: MarkerSource): MarkerFilesPlan;

/**
 * The state files that hold the markers of `operator` (of every operator with a `recoveryMarker`
 * state when `undefined`), for the host to read and pass to `computePlan`. Throws as `computePlan`.
 */
export function snapshotFiles(location: string, metadata: Uint8Array, operator: OperatorRef | undefined): SnapshotFileRef[];

/** A snapshot's operators, their states, and the markers of those whose state files are in `files`. Throws `invalid-snapshot`. */
export function inspectSnapshot(location: string, metadata: Uint8Array, files: readonly SnapshotFile[]): SnapshotSummary;

/** A Blob or File (anything with `arrayBuffer()`), read only when its bytes are needed. */
export interface BlobLike {
  arrayBuffer(): Promise<ArrayBuffer>;
}

/**
 * A picked file: its path relative to the picked root (`webkitRelativePath`, or a bare name) and
 * its bytes; a Blob (a `File`) is read only when it is `_metadata` or a file the snapshot needs.
 */
export interface PickedFile {
  path: string;
  bytes: Uint8Array | ArrayBuffer | BlobLike;
}

/**
 * The plan of a picked Flink checkpoint or savepoint. Finds `_metadata` among `files` (of several,
 * the one whose folder ends `location`), asks the component which state files it needs, resolves
 * them against `_metadata`'s folder (`../shared/…` needs the job directory picked) and plans.
 * `location` is the snapshot as the job names it and becomes `sourceRecoveryPoint`. Rejects with
 * InputError (no or ambiguous `_metadata`, a needed file not picked) or CleanupError.
 */
export function planFromSnapshot(args: { location: string; files: readonly PickedFile[]; operator: OperatorRef }): Promise<SnapshotPlan>;

/** What `planFromSnapshot` gives: the plan, the markers read, the store reads it made, and the plan file's exact text. */
export interface SnapshotPlan extends MarkerFilesPlan {
  reads: { requests: number; bytes: bigint };
  text: string;
}

/** `inspectSnapshot` of picked files, found and resolved as `planFromSnapshot` does; `location` defaults to `_metadata`'s folder. */
export function inspectSnapshotFiles(args: { location?: string; files: readonly PickedFile[] }): Promise<SnapshotSummary>;

/** Validates plan fields and returns the plan with its ID. Throws CleanupError `invalid-plan`. */
export function sealPlan(sourceRecoveryPoint: string, topic: string, topicId: string, offsets: readonly PartitionOffset[]): Plan;

/** Parses one recovery marker, versioned or legacy. Throws CleanupError `invalid-marker`. */
export function parseMarker(markerJson: string): RecoveryMarker;

/**
 * The exact text of each marker in a marker file or paste: a JSON array gives its elements (a
 * string element the marker text it holds), markers one per line give each, any other text is
 * one marker. Offsets keep every digit. Throws CleanupError `invalid-marker`.
 */
export function splitMarkers(text: string): string[];

/** A versioned marker in its canonical compact form. */
export function renderMarker(marker: VersionedMarker): string;

/** Parses one control-topic record. Throws CleanupError `control-topic-corrupt`. */
export function parseControlRecord(key: string | undefined, value: string | undefined): ControlRecord;

/** The compact JSON value of a control record. */
export function renderControlRecord(record: ControlRecord): string;

/** Replays a control log (SPEC §7): the known plans with their latest status. Throws `control-topic-corrupt`. */
export function replayControlLog(entries: readonly ControlEntry[]): ControlRecord[];

/** The effective boundary of a set of plans: the per-partition maximum. Throws CleanupError (`invalid-plan`) when a plan lists a partition twice. */
export function effectiveBoundary(plans: readonly Plan[]): PartitionOffset[];

/** How far `plan` moves each partition past `boundary`. Throws `boundary-regression` or `invalid-plan`. */
export function checkAdvance(plan: Plan, boundary: readonly PartitionOffset[]): PartitionAdvance[];

/** The one-sentence message for a `cleanup-error`. */
export function message(error: CleanupErrorCase): string;

/** The raw texts of the top-level items of a JSON array, or `[name, rawValue]` pairs of an object. */
export function topLevelItems(
  text: string,
): { kind: 'array'; items: string[] } | { kind: 'object'; items: [string, string][] } | null;

/** Marker texts from a paste, split by `splitMarkers`. Throws InputError for an empty paste, CleanupError `invalid-marker` for a malformed one. */
export function markerTexts(input: string): string[];

/** A committed boundary read from `{"0":10,…}` or `action-state-cleanup status --json`. */
export interface Boundary {
  offsets: PartitionOffset[];
  topic?: string;
  topicId?: string;
  controlTopic?: string;
}

/** Reads a pasted committed boundary; offsets never pass through JSON.parse. Throws InputError. */
export function parseBoundary(input: string): Boundary;

/** Java's map rendering of partition offsets, ascending: `{0=10, 1=20}`. */
export function javaMap(offsets: readonly PartitionOffset[]): string;
