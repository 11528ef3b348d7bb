// Planning from a Flink checkpoint or savepoint that the operator picked (a folder, or
// `_metadata` plus its files): this host only finds and reads bytes. The component reads
// `_metadata`, names the state files it needs (`snapshot-files`) and plans (`compute-plan`).
//
// Picked paths are relative to the picked root (`webkitRelativePath`, a dropped folder's entry
// paths, or a bare file name) and come from the operator's file system: nothing here trusts
// them beyond joining and comparing. The paths the component asks for are relative to the
// snapshot directory (`../shared/…` for a checkpoint's shared files) and are resolved against
// `_metadata`'s folder with POSIX rules; one that leaves the picked root cannot have been picked.
import { InputError } from './errors.js';
import { computePlan, inspectSnapshot, snapshotFiles } from './plans.js';

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

/**
 * The bytes of a picked file: a Uint8Array (or ArrayBuffer) as given; a Blob or File is read
 * now, so that of a picked job directory only `_metadata` and the needed files are read.
 */
async function bytesOf(file) {
  const { bytes } = file;
  if (bytes instanceof Uint8Array) return bytes;
  if (bytes instanceof ArrayBuffer) return new Uint8Array(bytes);
  if (typeof bytes?.arrayBuffer === 'function') return new Uint8Array(await bytes.arrayBuffer());
  throw new TypeError(`the bytes of ${file.path} must be a Uint8Array, an ArrayBuffer or a Blob`);
}

/**
 * The picked file for each state file the component named (`snapshot-files` answers), as
 * `{ ref, file }`; throws InputError naming the first one that was not picked.
 */
export function resolveNeeded(picked, refs) {
  return refs.map((ref) => {
    const shown = ref.written === ref.path ? ref.path : `${ref.path} (written in _metadata as ${ref.written})`;
    if (ref.path.startsWith('/')) {
      throw new InputError(`The snapshot needs ${shown}, which lies outside the snapshot's directory; copy it next to _metadata and pick again.`);
    }
    const segments = normalizeSegments([...picked.folder, ref.path].join('/'));
    const path = segments?.join('/');
    const file = path === undefined ? undefined : picked.byPath.get(path);
    if (file === undefined) {
      const hint = ref.path.startsWith('../')
        ? ' For a checkpoint, pick its job directory (the folder that holds chk-N and shared/).'
        : '';
      throw new InputError(`The snapshot needs ${shown}, which was not picked${path === undefined ? ' (it lies above the picked folder)' : ''}.${hint}`);
    }
    if (file === null) throw new InputError(`${path} was picked twice; pick it once.`);
    return { ref, file };
  });
}

/** `_metadata`'s bytes and the state files the component asks for, read from the picks. */
async function readSnapshot(files, location, operator) {
  const picked = pickSnapshot(files, location);
  const metadata = await bytesOf(picked.byPath.get(picked.metadataPath));
  const needed = resolveNeeded(picked, snapshotFiles(location, metadata, operator));
  const stateFiles = [];
  for (const { ref, file } of needed) stateFiles.push({ path: ref.path, bytes: await bytesOf(file) });
  return { picked, metadata, stateFiles };
}

function checkLocation(location) {
  if (typeof location !== 'string') {
    throw new InputError('Give the snapshot path as the job names it (what the Java tool gets as --checkpoint).');
  }
}

/**
 * The plan of a picked Flink checkpoint or savepoint: `{ plan, markers }`. `location` is the
 * snapshot as the job names it and becomes the plan's `sourceRecoveryPoint`; `operator` is
 * `{ tag: 'uid' | 'uid-hash', val }`. Reads only `_metadata` and the files it needs.
 */
export async function planFromSnapshot({ location, files, operator }) {
  checkLocation(location);
  const { metadata, stateFiles } = await readSnapshot(files, location, operator);
  return computePlan(location, { tag: 'snapshot', val: { metadata, operator, files: stateFiles } });
}

/**
 * What a picked snapshot holds (`inspect-snapshot`): its operators and the markers of each
 * operator with a `recoveryMarker` state. `location` defaults to `_metadata`'s picked folder.
 */
export async function inspectSnapshotFiles({ location, files }) {
  const where = location ?? (pickSnapshot(files, location).folder.join('/') || '.');
  checkLocation(where);
  const { metadata, stateFiles } = await readSnapshot(files, where, undefined);
  return inspectSnapshot(where, metadata, stateFiles);
}
