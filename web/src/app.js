// The page: wires the form to the package (../dist/index.js, the same modules the npm package
// ships). Nothing leaves the tab; the only requests are for the page's own files (the
// Content-Security-Policy forbids anything else).
import { wireSnapshotCard } from './snapshot.js';
import { drawTable, partitionRows } from './table.js';

const $ = (id) => document.getElementById(id);
const el = {
  engine: $('engine'),
  planInput: $('plan-input'),
  planFile: $('plan-file'),
  planFileName: $('plan-file-name'),
  planDrop: $('plan-drop'),
  boundaryInput: $('boundary-input'),
  validate: $('validate'),
  result: $('result'),
  verdict: $('verdict'),
  facts: $('facts'),
  planId: $('plan-id'),
  planSource: $('plan-source'),
  planTopic: $('plan-topic'),
  planTopicId: $('plan-topic-id'),
  planPartitions: $('plan-partitions'),
  timing: $('timing'),
  canonical: $('canonical'),
  advance: $('advance'),
  advanceTitle: $('advance-title'),
  advanceDetail: $('advance-detail'),
  table: { head: $('partitions-head'), body: $('partitions-body'), caption: $('partitions-caption') },
  tableWrap: document.querySelector('.table-wrap'),
  showAll: $('show-all'),
  recoveryPoint: $('recovery-point'),
  markersInput: $('markers-input'),
  build: $('build'),
  buildResult: $('build-result'),
  buildVerdict: $('build-verdict'),
  buildOutputBlock: $('build-output-block'),
  buildPlanId: $('build-plan-id'),
  buildOutput: $('build-output'),
  download: $('download'),
  checkBuilt: $('check-built'),
};

/** The package's module, loaded dynamically so that a failure to load can be shown. */
let validator;
/** The exact text of a dropped or chosen file (a textarea would normalise its line ends). */
let fileText = null;
/**
 * Plan texts longer than this stay out of the text box (which then says so): a 300 KB box was
 * laid out again on every click and cost about half of a 10,000-partition plan's click-to-paint.
 */
const BOX_LIMIT = 64 * 1024;
/** The plan file built from markers, exactly as render-plan wrote it. */
let builtPlan = null;
let pendingRows = null;
/** Where a pasted status came from, appended to the advance verdict. */
let compared = '';

/**
 * A package call as `{ ok: true, value }`, or `{ ok: false, error }` for a refusal: a
 * CleanupError (the component's) or an InputError (a paste the input helpers cannot cut), each
 * with its one sentence as `message`. Every button reaches the package through here, so no
 * refusal escapes as an uncaught error; anything else is a bug and is thrown.
 */
function attempt(call) {
  try {
    return { ok: true, value: call() };
  } catch (e) {
    if (e instanceof validator.CleanupError || e instanceof validator.InputError) return { ok: false, error: e };
    throw e;
  }
}

const plural = (n, word) => `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;

/** Fills a verdict box: its `data-valid`, its title and the one-line reason (empty when valid). */
function setVerdict(box, valid, title, reason = '') {
  box.dataset.valid = String(valid);
  box.querySelector('.verdict-title').textContent = title;
  box.querySelector('.reason').textContent = reason;
}

function showAdvance(state, title, detail = '') {
  if (compared) detail = `${detail} ${compared}`.trim();
  el.advance.hidden = false;
  el.advance.dataset.advances = state;
  el.advanceTitle.textContent = title;
  el.advanceDetail.textContent = detail;
}

/** Compares a valid plan with the pasted committed boundary; returns the rows to draw. */
function compareWithBoundary(plan) {
  compared = '';
  const read = attempt(() => validator.parseBoundary(el.boundaryInput.value));
  if (!read.ok) {
    showAdvance('error', 'Could not read the committed boundary', read.error.message);
    return { rows: partitionRows(plan), withBoundary: false };
  }
  const boundary = read.value;
  compared = boundary.controlTopic ? `(Boundary of control topic ${boundary.controlTopic}, from status --json.)` : '';
  const checked = attempt(() => validator.checkAdvance(plan, boundary.offsets));
  const rows = partitionRows(plan, checked.ok ? checked.value : null, boundary.offsets);
  if (boundary.topic !== undefined && (boundary.topic !== plan.topic || (boundary.topicId ?? plan.topicId) !== plan.topicId)) {
    showAdvance(
      'false',
      'This status describes another topic',
      `The plan is for ${plan.topic} (ID ${plan.topicId}) but the pasted status is for ${boundary.topic} ` +
        `(ID ${boundary.topicId ?? 'unknown'}); its control topic would refuse the plan.`,
    );
  } else if (!checked.ok) {
    const backwards = checked.error.kind === 'boundary-regression';
    showAdvance('false', backwards ? 'Moves the committed boundary backwards' : 'Does not match the committed boundary', checked.error.message);
  } else if (boundary.offsets.length === 0) {
    showAdvance('true', 'No plan is committed yet', 'Everything below the plan’s offsets becomes eligible for deletion.');
  } else {
    const moved = rows.filter((r) => r.to > r.from).length;
    const total = rows.reduce((sum, r) => sum + (r.to - r.from), 0n);
    showAdvance(
      'true',
      moved > 0
        ? `Advances the committed boundary on ${moved.toLocaleString('en-US')} of ${plural(rows.length, 'partition')}`
        : 'Equals the committed boundary: nothing new becomes deletable',
      moved > 0 ? `The boundary moves forward by ${total.toLocaleString('en-US')} offsets in total.` : '',
    );
  }
  el.advance.dataset.moved = String(rows.filter((r) => r.from !== undefined && r.to > r.from).length);
  return { rows, withBoundary: true };
}

function drawRows(rows, withBoundary, limit) {
  const hidden = drawTable(el.table, rows, withBoundary, limit);
  el.showAll.hidden = hidden === 0;
  el.showAll.textContent = `Show all ${plural(rows.length, 'partition')}`;
  pendingRows = hidden === 0 ? null : { rows, withBoundary };
}

function validate() {
  const text = fileText ?? el.planInput.value;
  // Only the component call is timed: this is the cost of one strict parse + plan-ID check.
  const started = performance.now();
  const result = attempt(() => validator.verifyPlan(text));
  const ms = performance.now() - started;

  el.result.hidden = false;
  el.timing.dataset.ms = String(ms);
  el.timing.textContent = `${ms < 10 ? ms.toFixed(2) : ms.toFixed(1)} ms (in this browser)`;
  el.advance.hidden = true;
  delete el.advance.dataset.advances;
  el.canonical.hidden = true;

  if (!result.ok) {
    setVerdict(el.verdict, false, 'Invalid plan', result.error.message);
    el.planId.textContent = '';
    for (const row of el.facts.children) row.hidden = !row.contains(el.timing);
    el.tableWrap.hidden = true;
    el.showAll.hidden = true;
    return;
  }
  const plan = result.value;
  setVerdict(el.verdict, true, 'Valid plan: the plan ID matches its contents');
  for (const row of el.facts.children) row.hidden = false;
  el.planId.textContent = plan.planId;
  el.planSource.textContent = plan.sourceRecoveryPoint;
  el.planTopic.textContent = plan.topic;
  el.planTopicId.textContent = plan.topicId;
  el.planPartitions.textContent = plan.offsets.length.toLocaleString('en-US');
  if (validator.renderPlan(plan) !== text) {
    el.canonical.hidden = false;
    el.canonical.textContent =
      'Valid, but not byte for byte the file the CLI writes (spacing, field order, escapes or the final newline differ). The plan ID does not depend on that.';
  }
  const { rows, withBoundary } = el.boundaryInput.value.trim() === ''
    ? { rows: partitionRows(plan), withBoundary: false }
    : compareWithBoundary(plan);
  el.tableWrap.hidden = false;
  drawRows(rows, withBoundary);
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

async function loadFile(file) {
  try {
    fileText = utf8.decode(await file.arrayBuffer()); // exact bytes: a BOM stays and is refused
  } catch {
    fileText = null;
    el.planFileName.textContent = `${file.name} (${plural(file.size, 'byte')})`;
    el.result.hidden = false;
    setVerdict(el.verdict, false, 'Invalid plan', `${file.name} is not UTF-8 text.`);
    return;
  }
  showPlanText(fileText, `${file.name} (${plural(file.size, 'byte')})`);
  validate();
}

/** Puts a loaded plan's text in the box, or, when it is long, keeps it out and says so. */
function showPlanText(text, label) {
  if (text.length > BOX_LIMIT) {
    el.planInput.value = '';
    el.planFileName.textContent = `${label}: too long to show here; it is checked exactly as loaded. Type or paste to check another plan.`;
  } else {
    el.planInput.value = text;
    el.planFileName.textContent = label;
  }
  el.planInput.setSelectionRange(0, 0);
  el.planInput.scrollTop = 0;
  el.planInput.scrollLeft = 0;
}

function build() {
  // markerTexts refuses with an InputError (an empty paste) or with the component's CleanupError
  // (splitMarkers: e.g. an empty array); both are shown, never thrown.
  const markers = attempt(() => validator.markerTexts(el.markersInput.value));
  if (!markers.ok) return showBuilt(markers);
  showBuilt(attempt(() => validator.planFromMarkers(el.recoveryPoint.value, markers.value)), markers.value.length);
}

function showBuilt(result, markerCount) {
  el.buildResult.hidden = false;
  if (!result.ok) {
    builtPlan = null;
    el.buildOutputBlock.hidden = true;
    setVerdict(el.buildVerdict, false, 'No plan: the markers were refused', result.error.message);
    return;
  }
  builtPlan = { plan: result.value, text: validator.renderPlan(result.value) };
  setVerdict(
    el.buildVerdict,
    true,
    `Plan built from ${plural(markerCount, 'marker')} over ${plural(result.value.offsets.length, 'partition')}`,
  );
  el.buildOutputBlock.hidden = false;
  el.buildPlanId.textContent = result.value.planId;
  el.buildOutput.textContent = builtPlan.text;
}

/** Saves a built plan (`{ plan, text }`) as the exact bytes render-plan wrote. */
function download(built) {
  if (!built) return;
  const url = URL.createObjectURL(new Blob([built.text], { type: 'application/json' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = `cleanup-plan-${built.plan.planId.slice(0, 12)}.json`;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Checks a built plan (`{ plan, text }`) in the validator of step 1. */
function checkAbove(built, label) {
  if (!built) return;
  fileText = built.text;
  showPlanText(built.text, label);
  validate();
  el.result.scrollIntoView({ behavior: 'smooth', block: 'start' });
}

/**
 * After a paste or drop that replaces a field's whole text, shows that text from its first line:
 * the browser leaves the caret (and so the view) at the end, which hides the start of a plan
 * (for a plan just one line longer than the box, exactly its first line).
 */
function showPastesFromTheTop(field) {
  let replacesAll = false;
  field.addEventListener('beforeinput', () => {
    replacesAll = field.selectionStart === 0 && field.selectionEnd === field.value.length;
  });
  field.addEventListener('input', (e) => {
    if (!replacesAll || (e.inputType !== 'insertFromPaste' && e.inputType !== 'insertFromDrop')) return;
    field.setSelectionRange(0, 0);
    field.scrollTop = 0;
    field.scrollLeft = 0;
  });
}

function wire() {
  for (const field of [el.planInput, el.boundaryInput, el.markersInput]) showPastesFromTheTop(field);
  el.validate.addEventListener('click', validate);
  el.build.addEventListener('click', build);
  el.download.addEventListener('click', () => download(builtPlan));
  el.showAll.addEventListener('click', () => pendingRows && drawRows(pendingRows.rows, pendingRows.withBoundary, Infinity));
  el.checkBuilt.addEventListener('click', () => checkAbove(builtPlan, 'the plan built below'));
  wireSnapshotCard({
    validator, attempt, setVerdict, plural, download,
    checkAbove: (built) => checkAbove(built, 'the plan from the snapshot below'),
  });
  el.planInput.addEventListener('input', () => {
    fileText = null;
    el.planFileName.textContent = '';
  });
  // A long plan pasted over the whole box is held like a chosen file (see BOX_LIMIT).
  el.planInput.addEventListener('paste', (e) => {
    const text = e.clipboardData?.getData('text/plain') ?? '';
    const replacesAll = el.planInput.selectionStart === 0 && el.planInput.selectionEnd === el.planInput.value.length;
    if (text.length <= BOX_LIMIT || !replacesAll) return;
    e.preventDefault();
    fileText = text;
    showPlanText(text, `The pasted plan (${plural(text.length, 'character')})`);
  });
  el.planInput.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) validate();
  });
  el.planFile.addEventListener('change', () => el.planFile.files[0] && loadFile(el.planFile.files[0]));
  el.planDrop.addEventListener('dragover', (e) => {
    e.preventDefault();
    el.planDrop.classList.add('dragging');
  });
  el.planDrop.addEventListener('dragleave', () => el.planDrop.classList.remove('dragging'));
  el.planDrop.addEventListener('drop', (e) => {
    e.preventDefault();
    el.planDrop.classList.remove('dragging');
    const file = e.dataTransfer?.files?.[0];
    if (file) loadFile(file);
  });
}

try {
  validator = await import('../dist/index.js');
  wire();
  el.validate.disabled = false;
  el.build.disabled = false;
  document.getElementById('snapshot-plan').disabled = false;
  el.engine.dataset.ready = 'true';
  el.engine.textContent = 'Validator component loaded: it runs here, offline.';
} catch (e) {
  el.engine.dataset.ready = 'error';
  el.engine.textContent = `The validator component could not be loaded: ${e.message}`;
  throw e;
}
