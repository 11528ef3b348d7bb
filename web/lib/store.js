// The component's `snapshot-store` import (jco maps `action-state:cleanup/snapshot-store` here):
// the component asks for a snapshot's objects by location, and the store that the running call
// installed with `withStore` answers. Outside such a call there is nothing to read from.

let current = null;

/** Runs `call` with `store` ({ read(location, maxBytes), listFolder(location) }) answering. */
export function withStore(store, call) {
  const previous = current;
  current = store;
  try {
    return call();
  } finally {
    current = previous;
  }
}

const nothing = (location) => ({
  tag: 'err',
  val: { tag: 'unsupported', val: `${location}: no snapshot files were given to read it from` },
});

/** WIT `read`: the whole object at `location`, as `{ tag: 'ok' | 'err', val }`. */
export function read(location, maxBytes) {
  return current === null ? nothing(location) : current.read(location, maxBytes);
}

/** WIT `list-folder`: the names one level below `location` (folders with a trailing `/`). */
export function listFolder(location) {
  return current === null ? nothing(location) : current.listFolder(location);
}
