// Turning what an operator pastes into the exact texts and values the component takes.
//
// JSON.parse would round offsets above 2^53, so numbers never go through it: these helpers only
// cut the pasted text into the raw JSON texts of array elements or object members, and the
// component parses those strictly (u64 offsets, canonical partitions, no duplicates).
import { CleanupError, InputError } from './errors.js';
import { parseMarker, splitMarkers } from './plans.js';

/**
 * The raw texts of the top-level items of a JSON array or object: for an array, the element
 * texts; for an object, `[name, rawValue]` pairs (names decoded). `text` must be valid JSON.
 */
export function topLevelItems(text) {
  let i = 0;
  const skipSpace = () => {
    while (i < text.length && ' \t\r\n'.includes(text[i])) i += 1;
  };
  // Moves past one JSON value starting at i (the text is known to be valid JSON).
  const skipValue = () => {
    let depth = 0;
    do {
      const c = text[i];
      if (c === '"') {
        for (i += 1; text[i] !== '"'; i += 1) if (text[i] === '\\') i += 1;
        i += 1;
      } else if (c === '[' || c === '{') {
        depth += 1;
        i += 1;
      } else if (c === ']' || c === '}') {
        depth -= 1;
        i += 1;
      } else if (depth > 0 && ' \t\r\n,:'.includes(c)) {
        i += 1;
      } else {
        while (i < text.length && !' \t\r\n,:]}'.includes(text[i])) i += 1;
      }
    } while (depth > 0);
  };
  skipSpace();
  const open = text[i];
  if (open !== '[' && open !== '{') return null;
  const items = [];
  i += 1;
  skipSpace();
  while (text[i] !== ']' && text[i] !== '}') {
    let name;
    if (open === '{') {
      const start = i;
      skipValue();
      name = JSON.parse(text.slice(start, i));
      skipSpace();
      i += 1; // ':'
      skipSpace();
    }
    const start = i;
    skipValue();
    const raw = text.slice(start, i);
    items.push(open === '{' ? [name, raw] : raw);
    skipSpace();
    if (text[i] === ',') i += 1;
    skipSpace();
  }
  return { kind: open === '[' ? 'array' : 'object', items };
}

function parseJson(text, what) {
  try {
    JSON.parse(text);
  } catch (e) {
    throw new InputError(`${what} is not valid JSON: ${e.message}`, { cause: e });
  }
}

/**
 * Marker texts from a paste, split by the component (`plans.split-markers`, the same rules as
 * the CLI's marker files): a JSON array (of marker objects, or of strings that each hold one
 * marker's text, as fixtures' markers.json does), markers one per line, or one marker.
 */
export function markerTexts(input) {
  const trimmed = input.trim();
  if (trimmed === '') throw new InputError('Paste at least one recovery marker.');
  return splitMarkers(trimmed);
}

/**
 * A committed boundary from a paste: either a partition→offset object like {"0":10,"1":20}, or
 * the output of `action-state-cleanup status --json` (its `boundary` member, plus the topic it
 * describes). Returns `{ offsets: [{ partition, offset: bigint }], topic?, topicId?, controlTopic? }`.
 */
export function parseBoundary(input) {
  const trimmed = input.trim();
  parseJson(trimmed, 'The committed boundary');
  const top = topLevelItems(trimmed);
  if (!top || top.kind !== 'object') {
    throw new InputError('The committed boundary must be a JSON object such as {"0":10,"1":20} or the output of status --json.');
  }
  const members = new Map(top.items);
  const result = { offsets: [] };
  let raw = trimmed;
  if (members.has('boundary')) {
    raw = members.get('boundary');
    for (const key of ['topic', 'topicId', 'controlTopic']) {
      const value = members.has(key) ? JSON.parse(members.get(key)) : undefined;
      if (typeof value === 'string') result[key] = value;
    }
  }
  const inner = topLevelItems(raw);
  if (!inner || inner.kind !== 'object') throw new InputError('The "boundary" member must be a JSON object.');
  if (inner.items.length === 0) return result; // no committed plan yet: every partition from 0
  // The boundary has the shape of a legacy marker, so the component's strict parser reads it.
  let parsed;
  try {
    parsed = parseMarker(raw);
  } catch (e) {
    if (!(e instanceof CleanupError)) throw e;
    throw new InputError(`The committed boundary is not a partition→offset map: ${e.message}`, { cause: e });
  }
  if (parsed.tag !== 'legacy') {
    throw new InputError('That is a recovery marker, not a boundary: paste {"0":10,…} or the output of status --json.');
  }
  result.offsets = parsed.val;
  return result;
}

/** Java's map rendering of partition offsets, ascending: `{0=10, 1=20}`. */
export function javaMap(offsets) {
  const sorted = [...offsets].sort((a, b) => a.partition - b.partition);
  return `{${sorted.map((po) => `${po.partition}=${po.offset}`).join(', ')}}`;
}
