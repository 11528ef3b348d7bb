// Planning from a Flink checkpoint or savepoint that the operator picked (a folder, or
// `_metadata` plus its files): this host only finds and reads bytes. The component (world
// `reader`) asks for each object it needs by location through its `snapshot-store` import —
// `_metadata`, then the marker operator's state files, every path resolved by the component
// against the location the operator gave — and this module answers from the picks.
//
// Picked paths are relative to the picked root (`webkitRelativePath`, a dropped folder's entry
// paths, or a bare file name) and come from the operator's file system: nothing here trusts
// them beyond joining and comparing. A location the component asks for is taken relative to
// the snapshot's directory as the operator named it (`../shared/…` for a checkpoint's shared
// files) and resolved against `_metadata`'s picked folder with POSIX rules; one that leaves the
// picked root cannot have been picked.
//
// The import is synchronous and a picked Blob is read asynchronously, so a call runs again once
// the Blobs it asked for are read: each round reads at least one more file, and only the files
// the component asked for are ever read.
import { snapshots } from './component/validator.js';
import { CleanupError, InputError } from './errors.js';
import { message } from './plans.js';
import { withStore } from './store.js';

const METADATA = '_metadata';

/**
 * The segments of a POSIX path after `.` and `..` are applied; `null` when `..` climbs above the
 * start. Backslashes are separators too (a path typed on Windows).
 */
export function normalizeSegments(path) {
  const out = [];
  for (const segment of path.split(/[/\\]/)) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (out.length === 0) return null;
      out.pop();
    } else {
      out.push(segment);
    }
  }
  return out;
}

/** How many trailing segments two segment lists share. */
function sharedTail(a, b) {
  let n = 0;
  while (n < a.length && n < b.length && a[a.length - 1 - n] === b[b.length - 1 - n]) n += 1;
  return n;
}

const list = (names, max = 5) =>
  names.length <= max ? names.join(', ') : `${names.slice(0, max).join(', ')} and ${names.length - max} more`;

/**
 * The picked files by normalised path, and the `_metadata` to read: the only one picked, or,
 * when there are several (a job directory with several `chk-N`), the one whose folder shares the
 * longest tail with `location` (`…/chk-2` picks `chk-2/_metadata`). Throws InputError otherwise.
 */
export function pickSnapshot(files, location) {
  if (!Array.isArray(files) || files.length === 0) {
    throw new InputError('No files were picked: pick the snapshot folder, or its _metadata with its state files.');
  }
  const byPath = new Map();
  for (const file of files) {
    const segments = normalizeSegments(String(file?.path ?? ''));
    if (segments === null || segments.length === 0) {
      throw new InputError(`A picked file has the path ${JSON.stringify(file?.path)}, which names no file inside the picked folder.`);
    }
    const path = segments.join('/');
    // Two picks under one path (two drops of same-named files) could be different bytes.
    byPath.set(path, byPath.has(path) ? null : file);
  }
  const candidates = [...byPath.keys()].filter((p) => p === METADATA || p.endsWith(`/${METADATA}`));
  if (candidates.length === 0) {
    throw new InputError(
      `None of the ${files.length} picked files is a _metadata (${list([...byPath.keys()])}): ` +
        'pick the snapshot folder, or its _metadata with its state files.',
    );
  }
  let chosen = candidates;
  if (candidates.length > 1) {
    const wanted = normalizeSegments(String(location ?? '').replace(/\/_metadata\/*$/, '')) ?? [];
    const score = (p) => sharedTail(p.split('/').slice(0, -1), wanted);
    const best = Math.max(...candidates.map(score));
    chosen = best > 0 ? candidates.filter((p) => score(p) === best) : candidates;
  }
  if (chosen.length > 1) {
    throw new InputError(
      `The picked files hold ${chosen.length} _metadata files (${list(chosen)}): give the snapshot path ` +
        'ending in the folder of the one to plan from, or pick that snapshot alone.',
    );
  }
  const metadataPath = chosen[0];
  if (byPath.get(metadataPath) === null) throw new InputError(`${metadataPath} was picked twice; pick it once.`);
  return { byPath, metadataPath, folder: metadataPath.split('/').slice(0, -1) };
}

/** The bytes of a picked file when they are at hand: a Uint8Array or ArrayBuffer; else null. */
function bytesAtHand(bytes) {
  if (bytes instanceof Uint8Array) return bytes;
  if (bytes instanceof ArrayBuffer) return new Uint8Array(bytes);
  return null;
}

/** The segments of `location` with `.` and `..` applied where they can be, `/`-separated. */
const locationSegments = (location) => {
  const raw = String(location).split('/').filter((s) => s !== '' && s !== '.');
  return normalizeSegments(raw.join('/')) ?? raw;
};

/**
 * The picked path that a location the component asks for names: the location relative to the
 * snapshot's directory `directory` (as the operator named it), resolved against the picked
 * `_metadata`'s folder. `{ relative, path }`; `path` is undefined when the location leaves
 * the picked root.
 */
export function resolvePicked(picked, directory, location) {
  const base = locationSegments(directory);
  const wanted = locationSegments(location);
  let common = 0;
  while (common < base.length && common < wanted.length && base[common] === wanted[common]) common += 1;
  const relative = [...Array(base.length - common).fill('..'), ...wanted.slice(common)].join('/');
  const path = normalizeSegments([...picked.folder, relative].join('/'))?.join('/');
  return { relative, path };
}

/** The snapshot's directory as the operator named it: the location, or `_metadata`'s folder. */
function snapshotDirectory(location) {
  const trimmed = location.replace(/\/+$/, '') || location;
  return trimmed === METADATA || trimmed.endsWith(`/${METADATA}`) ? trimmed.slice(0, -METADATA.length).replace(/\/$/, '') : trimmed;
}

/** The picks as the component's `snapshot-store`; Blobs asked for are read between rounds. */
class PickedStore {
  constructor(picked, location) {
    this.picked = picked;
    this.directory = snapshotDirectory(location);
    this.loaded = new Map();
    this.pending = new Map();
    this.missing = null;
    // What the operator must fix, kept for after the call: an import must not throw.
    this.problem = null;
  }

  read(location, maxBytes) {
    const { relative, path } = resolvePicked(this.picked, this.directory, location);
    const file = path === undefined ? undefined : this.picked.byPath.get(path);
    if (file === undefined) {
      this.missing ??= { relative, location, above: path === undefined };
      return { tag: 'err', val: { tag: 'not-found', val: `${location} was not picked` } };
    }
    if (file === null) {
      this.problem ??= new InputError(`${path} was picked twice; pick it once.`);
      return { tag: 'err', val: { tag: 'failed', val: `${location} was picked twice` } };
    }
    const bytes = this.loaded.get(path) ?? bytesAtHand(file.bytes);
    if (bytes === null) {
      this.pending.set(path, file);
      return { tag: 'err', val: { tag: 'failed', val: `${location} is being read` } };
    }
    this.loaded.set(path, bytes);
    if (BigInt(bytes.length) > maxBytes) return { tag: 'err', val: { tag: 'too-large', val: BigInt(bytes.length) } };
    return { tag: 'ok', val: bytes };
  }

  listFolder(location) {
    const { path } = resolvePicked(this.picked, this.directory, location);
    if (path === undefined) return { tag: 'err', val: { tag: 'not-found', val: `${location} was not picked` } };
    const prefix = path === '' ? '' : `${path}/`;
    const names = new Set();
    for (const picked of this.picked.byPath.keys()) {
      if (!picked.startsWith(prefix)) continue;
      const rest = picked.slice(prefix.length).split('/');
      names.add(rest.length > 1 ? `${rest[0]}/` : rest[0]);
    }
    if (names.size === 0) return { tag: 'err', val: { tag: 'not-found', val: `${location} was not picked` } };
    return { tag: 'ok', val: [...names].sort() };
  }

  /** Reads the Blobs the last round asked for. */
  async readPending() {
    for (const [path, file] of this.pending) {
      const { bytes } = file;
      if (typeof bytes?.arrayBuffer !== 'function') {
        throw new TypeError(`the bytes of ${file.path} must be a Uint8Array, an ArrayBuffer or a Blob`);
      }
      this.loaded.set(path, new Uint8Array(await bytes.arrayBuffer()));
    }
    this.pending.clear();
  }
}

/**
 * Runs `call` (a `snapshots` export) over the picks until it needs no more Blob read; its value,
 * or the refusal: a CleanupError for the snapshot's contents, an InputError for a file that was
 * not picked.
 */
async function overPicks(files, location, call) {
  const store = new PickedStore(pickSnapshot(files, location), location);
  for (;;) {
    store.missing = null;
    let thrown;
    try {
      return withStore(store, call);
    } catch (e) {
      thrown = e;
    }
    if (store.problem !== null) throw store.problem;
    if (store.pending.size > 0) {
      await store.readPending();
      continue;
    }
    const failure = thrown !== null && typeof thrown === 'object' ? thrown.payload : undefined;
    if (failure?.tag === 'refused') throw new CleanupError(failure.val, message(failure.val), { cause: thrown });
    if (failure?.tag === 'store' && store.missing !== null) {
      const { relative, above } = store.missing;
      const hint = relative.startsWith('../')
        ? ' For a checkpoint, pick its job directory (the folder that holds chk-N and shared/).'
        : '';
      throw new InputError(
        `The snapshot needs ${relative}, which was not picked${above ? ' (it lies above the picked folder)' : ''}.${hint}`,
        { cause: thrown },
      );
    }
    if (failure?.tag === 'store') throw new InputError(failure.val.message, { cause: thrown });
    throw thrown;
  }
}

function checkLocation(location) {
  if (typeof location !== 'string') {
    throw new InputError('Give the snapshot path as the job names it (what the Java tool gets as --checkpoint).');
  }
}

/**
 * The plan of a picked Flink checkpoint or savepoint: `{ plan, markers, reads }`. `location` is
 * the snapshot as the job names it and becomes the plan's `sourceRecoveryPoint`; `operator` is
 * `{ tag: 'uid' | 'uid-hash', val }`. Reads only `_metadata` and the files it needs.
 */
export async function planFromSnapshot({ location, files, operator }) {
  checkLocation(location);
  return overPicks(files, location, () => snapshots.planSnapshot(location, undefined, operator));
}

/**
 * What a picked snapshot holds (`snapshots.inspect`): its operators and the markers of each
 * operator with a `recoveryMarker` state. `location` defaults to `_metadata`'s picked folder.
 */
export async function inspectSnapshotFiles({ location, files }) {
  const where = location ?? (pickSnapshot(files, location).folder.join('/') || '.');
  checkLocation(where);
  return overPicks(files, where, () => snapshots.inspect(where));
}
