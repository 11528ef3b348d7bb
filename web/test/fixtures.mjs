// Runs every golden scenario in ../../fixtures through the package (../dist/index.js, the
// jco-transpiled validator component), exactly as host/tests/fixtures.rs does through wasmtime: the same inputs, the same expected
// bytes (expected.json, plan-id.txt, expected.txt) or the same error.txt substring. Each
// scenario is its own test case, named `fixture::<directory>`. Every real Flink snapshot in
// ../../fixtures/snapshots/<line>/<case>/ is planned as tests/snapshots.rs plans it with the CLI:
// its whole case folder as picked files, its `checkpoint` as location, to the Java tool's exact
// plan or refusal (`snapshot::<line>/<case>`).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';

// The package under test: ../dist/index.js, or the module ASC_VALIDATOR_MODULE names (a file URL;
// package.test.mjs points it at the package installed from the packed tarball).
const moduleUrl = process.env.ASC_VALIDATOR_MODULE ?? new URL('../dist/index.js', import.meta.url).href;
const validator = await import(moduleUrl);
const { CleanupError, javaMap } = validator;
console.log(`validator module: ${moduleUrl}`);

const root = fileURLToPath(new URL('../../fixtures/', import.meta.url));
// Byte for byte: invalid UTF-8 is an error and a BOM is kept, as Rust's read_to_string does.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const read = (dir, file) => utf8.decode(readFileSync(join(dir, file)));
const exists = (dir, file) => {
  try {
    return statSync(join(dir, file)).isFile();
  } catch {
    return false;
  }
};

/** Runs `produce`; a CleanupError becomes `{ error: message }` (checked to be the component's sentence). */
function outcome(produce) {
  try {
    return produce();
  } catch (e) {
    if (!(e instanceof CleanupError)) throw e;
    assert.equal(e.message, validator.message(e.error), 'the error message is plans.message of its case');
    return { error: e.message };
  }
}

/** What a scenario produced: `{ files: [[name, text], …] }` or `{ error: message }`. */
function planOutcome(makePlan) {
  return outcome(() => {
    const plan = makePlan();
    return {
      files: [
        ['expected.json', validator.renderPlan(plan)],
        ['plan-id.txt', `${plan.planId}\n`],
      ],
    };
  });
}

function runPlan(dir) {
  return planOutcome(() => validator.verifyPlan(read(dir, 'plan.json')));
}

function runMarkers(dir) {
  const recoveryPoint = read(dir, 'recovery-point.txt');
  const markers = JSON.parse(read(dir, 'markers.json'));
  assert.ok(Array.isArray(markers), 'markers.json must be an array of strings');
  for (const m of markers) assert.equal(typeof m, 'string', 'markers.json elements must be strings');
  return planOutcome(() => validator.planFromMarkers(recoveryPoint, markers));
}

function controlEntries(json) {
  const items = JSON.parse(json);
  assert.ok(Array.isArray(items), 'control-log.json must be an array');
  const text = (value) => {
    if (value === undefined || value === null) return undefined; // option::none
    assert.equal(typeof value, 'string', 'key and value must be strings or null');
    return value;
  };
  return items.map((item) => {
    assert.ok(Number.isSafeInteger(item?.offset) && item.offset >= 0, 'each entry needs an integer offset');
    return { offset: BigInt(item.offset), key: text(item.key), value: text(item.value) };
  });
}

function runControl(dir) {
  const entries = controlEntries(read(dir, 'control-log.json'));
  return outcome(() => {
    const replayed = validator.replayControlLog(entries);
    const status = { committed: 'COMMITTED', applied: 'APPLIED' };
    let text = replayed.map((r) => `${r.plan.planId} ${status[r.status]}\n`).join('');
    const boundary = validator.effectiveBoundary(replayed.map((r) => r.plan));
    text += `boundary ${javaMap(boundary)}\n`;
    return { files: [['expected.txt', text]] };
  });
}

function checkExpected(dir, outcome) {
  if (exists(dir, 'error.txt')) {
    const wanted = read(dir, 'error.txt').replace(/\n+$/, '');
    assert.ok(outcome.error !== undefined, `expected an error containing ${JSON.stringify(wanted)}, got success`);
    assert.ok(outcome.error.includes(wanted), `error message does not contain ${JSON.stringify(wanted)}:\n ${outcome.error}`);
    return;
  }
  assert.equal(outcome.error, undefined, `expected success, got error: ${outcome.error}`);
  for (const [file, actual] of outcome.files) {
    assert.equal(actual, read(dir, file), `${file} differs`);
  }
}

const scenarios = readdirSync(root, { withFileTypes: true })
  // `snapshots/` holds Flink snapshots, run below (a symlink in a worktree, a folder once merged).
  .filter((entry) => entry.isDirectory() && entry.name !== 'snapshots')
  .map((entry) => entry.name)
  .sort();

test('the fixtures directory has scenarios of every kind', () => {
  for (const kind of ['plan-', 'markers-', 'control-']) {
    assert.ok(scenarios.some((name) => name.startsWith(kind)), `no ${kind}* scenario in ${root}`);
  }
});

for (const name of scenarios) {
  test(`fixture::${name}`, () => {
    const dir = join(root, name);
    let outcome;
    if (name.startsWith('plan-')) outcome = runPlan(dir);
    else if (name.startsWith('markers-')) outcome = runMarkers(dir);
    else if (name.startsWith('control-')) outcome = runControl(dir);
    else assert.fail(`unknown scenario kind: ${name}`);
    checkExpected(dir, outcome);
  });
}

test('marker pastes are split by the component, as the CLI splits marker files', () => {
  const { markerTexts, splitMarkers } = validator;
  const one = '{"schemaVersion":1,"topic":"t","topicId":"W6igbOR0Sjy8fWG5pFs7Lg","offsets":{"0":18446744073709551615}}';
  const two = '{"schemaVersion":1,"topic":"t","topicId":"W6igbOR0Sjy8fWG5pFs7Lg","offsets":{"0":7}}';
  assert.deepEqual(splitMarkers(`[${one},\n ${two}]`), [one, two]);
  assert.deepEqual(markerTexts(`${one}\n${two}\n`), [one, two]);
  assert.deepEqual(markerTexts(JSON.stringify([one])), [one]);
  assert.throws(() => markerTexts('[]'), (e) => e instanceof CleanupError && e.message === 'Recovery marker file holds an empty array');
});

// --- Flink snapshots -------------------------------------------------------------------------

const snapshotsRoot = join(root, 'snapshots');
const isDir = (path) => existsSync(path) && statSync(path).isDirectory();
const snapshotCases = [];
for (const line of isDir(snapshotsRoot) ? readdirSync(snapshotsRoot).sort() : []) {
  if (!isDir(join(snapshotsRoot, line))) continue;
  for (const name of readdirSync(join(snapshotsRoot, line)).sort()) {
    const dir = join(snapshotsRoot, line, name);
    if (existsSync(join(dir, 'expected.json'))) snapshotCases.push({ id: `${line}/${name}`, dir });
  }
}

/** Every file under `dir` as picked: `{ path, bytes }`, path relative to `dir` with `/`. */
function pickFolder(dir) {
  const picked = [];
  const walk = (folder) => {
    for (const name of readdirSync(folder).sort()) {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) walk(path);
      else picked.push({ path: relative(dir, path).split('\\').join('/'), bytes: readFileSync(path) });
    }
  };
  walk(dir);
  return picked;
}

const operatorOf = (expected) =>
  expected.operatorUid != null ? { tag: 'uid', val: expected.operatorUid } : { tag: 'uid-hash', val: expected.operatorUidHash };

test('the snapshot fixtures hold Flink 2.2 and Flink 1.20 cases', () => {
  for (const line of ['flink-2.2', 'flink-1.20']) {
    assert.ok(snapshotCases.some((c) => c.id.startsWith(`${line}/`)), `no ${line} case in ${snapshotsRoot}`);
  }
});

for (const { id, dir } of snapshotCases) {
  test(`snapshot::${id}`, async () => {
    const expected = JSON.parse(read(dir, 'expected.json'));
    // The case folder as picked: a checkpoint's job directory comes along, so `../shared` resolves.
    const files = pickFolder(dir);
    const location = expected.checkpoint;
    let result;
    try {
      result = await validator.planFromSnapshot({ location, files, operator: operatorOf(expected) });
    } catch (e) {
      if (!(e instanceof CleanupError)) throw e;
      assert.equal(e.message, validator.message(e.error), 'the error message is plans.message of its case');
      assert.ok(expected.error !== undefined, `expected the plan, got the refusal: ${e.message}`);
      assert.ok(e.message.includes(expected.error), `${e.message}\n lacks ${JSON.stringify(expected.error)}`);
      return;
    }
    assert.equal(expected.error, undefined, `expected a refusal containing ${JSON.stringify(expected.error)}, got a plan`);
    assert.equal(validator.renderPlan(result.plan), expected.plan, 'the Java tool\'s plan, byte for byte');
    assert.equal(result.markers, expected.markers.length);

    // The operators Flink's own reader listed, and the markers it read.
    const summary = await validator.inspectSnapshotFiles({ location, files });
    assert.equal(summary.formatVersion, expected.metadataVersion);
    assert.equal(summary.checkpointId, BigInt(expected.checkpointId));
    assert.deepEqual(summary.operators.map((o) => o.id).sort(), expected.operators.map((o) => o.id).sort());
    const holder = summary.operators.find((o) => o.id === expected.operatorUidHash);
    assert.deepEqual(
      holder.markers.map((m) => m.class).sort(),
      expected.markers.map((m) => m.class).sort(),
    );
  });
}

test('a truncated _metadata is refused as invalid-snapshot naming the file and the byte offset', async () => {
  const dir = join(snapshotsRoot, 'flink-2.2', 'savepoint-canonical', 'savepoint');
  const metadata = readFileSync(join(dir, '_metadata'));
  const files = [{ path: 'savepoint/_metadata', bytes: metadata.subarray(0, Math.floor(metadata.length / 2)) }];
  await assert.rejects(
    validator.planFromSnapshot({ location: 'savepoint', files, operator: { tag: 'uid', val: 'agent-operator' } }),
    (e) => e instanceof CleanupError && e.kind === 'invalid-snapshot' && /_metadata/.test(e.message) && /byte \d+/.test(e.message),
  );
  await assert.rejects(
    validator.inspectSnapshotFiles({ location: 'savepoint', files }),
    (e) => e instanceof CleanupError && e.kind === 'invalid-snapshot',
  );
});
