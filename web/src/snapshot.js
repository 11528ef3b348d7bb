// Step 3 of the page: a plan straight from a Flink savepoint or checkpoint. The operator picks a
// folder (or drops one, or `_metadata` with its files); the package finds `_metadata`, reads only
// it and the state files the component names, and plans. Files are read in this tab with
// File.arrayBuffer(); nothing is sent anywhere (the page's CSP forbids it).
//
// Everything shown from a snapshot (uids, names, classes, topics) is text from the operator's
// files: it goes into the page with textContent only.

const $ = (id) => document.getElementById(id);

/** The short name of a Java class (`java.util.HashMap` stays whole: it says "legacy"). */
const shortClass = (name) => (name.startsWith('java.') ? name : name.slice(name.lastIndexOf('.') + 1));

/** One line about an operator's recovery markers, as `inspect-snapshot` read them. */
export function markersSummary(op, plural) {
  const hasState = op.operatorStates.some((s) => s.name === 'recoveryMarker');
  if (op.markers === undefined) return hasState ? 'not read' : '—';
  if (op.markers.length === 0) return 'none: the recoveryMarker state is empty';
  const groups = new Map();
  const partitions = new Set();
  for (const m of op.markers) {
    let key = shortClass(m.class);
    if (m.class === 'java.util.HashMap') key += ' (legacy)';
    if (m.topic !== undefined) key += `, topic ${m.topic} (ID ${m.topicId ?? 'none'})`;
    groups.set(key, (groups.get(key) ?? 0) + 1);
    for (const po of m.offsets) partitions.add(po.partition);
  }
  const kinds = [...groups].map(([key, n]) => `${n} × ${key}`).join('; ');
  return `${plural(op.markers.length, 'marker')}: ${kinds}; ${plural(partitions.size, 'partition')}`;
}

/** The states column: each operator state with its distribution and elements, then the flags. */
function statesOf(op) {
  const parts = op.operatorStates.map((s) => `${s.name} (${s.distribution}, ${s.elements})`);
  if (op.keyedState) parts.push('keyed state');
  if (op.channelState) parts.push('in-flight data');
  if (op.coordinatorState) parts.push('coordinator state');
  return parts.join(', ') || '—';
}

/** Files of a dropped folder, walked through its entries (paths relative to the drop). */
async function droppedFiles(dataTransfer) {
  const entries = [...(dataTransfer.items ?? [])].map((item) => item.webkitGetAsEntry?.()).filter(Boolean);
  if (entries.length === 0) return [...(dataTransfer.files ?? [])].map((file) => ({ path: file.name, bytes: file }));
  const files = [];
  const walk = async (entry) => {
    if (entry.isFile) {
      const file = await new Promise((resolve, reject) => entry.file(resolve, reject));
      files.push({ path: entry.fullPath.replace(/^\/+/, ''), bytes: file });
    } else if (entry.isDirectory) {
      const reader = entry.createReader();
      for (;;) {
        const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
        if (batch.length === 0) break;
        for (const child of batch) await walk(child);
      }
    }
  };
  for (const entry of entries) await walk(entry);
  return files;
}

/**
 * Wires the card. `shared` brings the page's `validator` module, `setVerdict`, `plural`,
 * `download(built)` and `checkAbove(built)` (built = `{ plan, text }`).
 */
export function wireSnapshotCard({ validator, setVerdict, plural, download, checkAbove }) {
  const el = {
    drop: $('snapshot-drop'),
    folder: $('snapshot-folder'),
    files: $('snapshot-files'),
    picked: $('snapshot-picked'),
    location: $('snapshot-location'),
    kind: $('operator-kind'),
    operator: $('operator-id'),
    operators: $('snapshot-operators'),
    operatorsBody: $('snapshot-operators-body'),
    operatorsCaption: $('snapshot-operators-caption'),
    inspectError: $('snapshot-inspect-error'),
    plan: $('snapshot-plan'),
    result: $('snapshot-result'),
    verdict: $('snapshot-verdict'),
    outputBlock: $('snapshot-output-block'),
    planId: $('snapshot-plan-id'),
    output: $('snapshot-output'),
    download: $('snapshot-download'),
    check: $('snapshot-check'),
  };
  /** The picked files as `{ path, bytes: File }`; read only when the package needs them. */
  let picked = [];
  let built = null;
  /** Counts picks, so that an answer about an earlier pick is dropped. */
  let generation = 0;

  /** An awaited package call as `{ ok, value | error }`; only refusals are caught. */
  async function attempt(call) {
    try {
      return { ok: true, value: await call() };
    } catch (e) {
      if (e instanceof validator.CleanupError || e instanceof validator.InputError) return { ok: false, error: e };
      throw e;
    }
  }

  function drawOperators(summary) {
    el.operatorsBody.replaceChildren();
    for (const op of summary.operators) {
      const row = el.operatorsBody.insertRow();
      row.dataset.id = op.id;
      for (const text of [op.id, op.uid ?? '—', op.name ?? '—', statesOf(op), markersSummary(op, plural)]) {
        row.insertCell().textContent = text;
      }
      const use = document.createElement('button');
      use.type = 'button';
      use.className = 'button secondary small';
      use.textContent = 'Use';
      use.title = op.uid !== undefined ? `Plan from uid ${op.uid}` : `Plan from uid hash ${op.id}`;
      use.addEventListener('click', () => {
        el.kind.value = op.uid !== undefined ? 'uid' : 'uid-hash';
        el.operator.value = op.uid ?? op.id;
        el.operator.focus();
      });
      row.insertCell().append(use);
    }
    el.operatorsCaption.textContent =
      `Checkpoint ${summary.checkpointId} (_metadata format ${summary.formatVersion}): ${plural(summary.operators.length, 'operator')}`;
  }

  async function inspect() {
    const mine = generation;
    const result = await attempt(() =>
      validator.inspectSnapshotFiles({ location: el.location.value || undefined, files: picked }));
    if (mine !== generation) return;
    el.operators.hidden = false;
    el.operators.dataset.inspected = result.ok ? 'ok' : 'error';
    el.inspectError.textContent = result.ok ? '' : result.error.message;
    el.inspectError.hidden = result.ok;
    el.operatorsBody.parentElement.hidden = !result.ok;
    if (result.ok) drawOperators(result.value);
  }

  /** The folder of the only `_metadata` picked: the default snapshot path. */
  function defaultLocation() {
    const metadata = picked.map((f) => f.path).filter((p) => p === '_metadata' || p.endsWith('/_metadata'));
    if (metadata.length !== 1) return picked[0]?.path.split('/')[0] ?? '';
    return metadata[0].split('/').slice(0, -1).join('/');
  }

  function pick(files, how) {
    generation += 1;
    picked = files;
    built = null;
    el.result.hidden = true;
    const bytes = files.reduce((sum, f) => sum + f.bytes.size, 0);
    const metadata = files.filter((f) => f.path === '_metadata' || f.path.endsWith('/_metadata')).map((f) => f.path);
    el.picked.textContent = `${how}: ${plural(files.length, 'file')}, ${(bytes / 1024).toFixed(1)} KiB; ` +
      (metadata.length === 0 ? 'no _metadata' : `_metadata at ${metadata.slice(0, 3).join(', ')}${metadata.length > 3 ? ', …' : ''}`);
    el.location.value = defaultLocation();
    return inspect();
  }

  async function plan() {
    const mine = generation;
    const kind = el.kind.value === 'uid-hash' ? 'uid-hash' : 'uid';
    const result = await attempt(() => validator.planFromSnapshot({
      location: el.location.value, files: picked, operator: { tag: kind, val: el.operator.value.trim() },
    }));
    if (mine !== generation) return;
    el.result.hidden = false;
    if (!result.ok) {
      built = null;
      el.outputBlock.hidden = true;
      setVerdict(el.verdict, false, 'No plan: the snapshot was refused', result.error.message);
      return;
    }
    const { plan: p, markers } = result.value;
    built = { plan: p, text: validator.renderPlan(p) };
    setVerdict(el.verdict, true,
      `Plan of ${p.sourceRecoveryPoint} from ${plural(markers, 'marker')} over ${plural(p.offsets.length, 'partition')}`);
    el.outputBlock.hidden = false;
    el.planId.textContent = p.planId;
    el.output.textContent = built.text;
  }

  const fromInput = (input) => [...input.files].map((file) => ({ path: file.webkitRelativePath || file.name, bytes: file }));
  el.folder.addEventListener('change', () => el.folder.files.length > 0 && pick(fromInput(el.folder), 'Folder'));
  el.files.addEventListener('change', () => el.files.files.length > 0 && pick(fromInput(el.files), 'Files'));
  el.drop.addEventListener('dragover', (e) => {
    e.preventDefault();
    el.drop.classList.add('dragging');
  });
  el.drop.addEventListener('dragleave', () => el.drop.classList.remove('dragging'));
  el.drop.addEventListener('drop', async (e) => {
    e.preventDefault();
    el.drop.classList.remove('dragging');
    const files = await droppedFiles(e.dataTransfer);
    if (files.length > 0) await pick(files, 'Dropped');
  });
  // The path chooses among several _metadata of a picked job directory: list again.
  el.location.addEventListener('change', () => picked.length > 0 && inspect());
  el.plan.addEventListener('click', plan);
  el.operator.addEventListener('keydown', (e) => e.key === 'Enter' && plan());
  el.download.addEventListener('click', () => download(built));
  el.check.addEventListener('click', () => checkAbove(built));
}
