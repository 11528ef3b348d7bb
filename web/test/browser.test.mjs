// The page in real Chromium (Debian's /usr/bin/chromium, headless, driven by playwright-core),
// served by scripts/serve.mjs on a free port of 127.0.0.1. Every state is saved as a screenshot
// in test-artifacts/, and the 10,000-partition validation and click-to-paint times as
// test-artifacts/timing.json.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

import { bigPlan, measureClickToPaint } from '../scripts/measure-paint.mjs';
import { serve } from '../scripts/serve.mjs';
import { FIRST_ROWS } from '../src/table.js';
import * as validator from '../dist/index.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];
const SPEC_PLAN_ID = '99cdeb76488b04bd18cea47a474733f1d33aaf1e6f5007af15f2e4cd128d856d';
const fixtures = fileURLToPath(new URL('../../fixtures/', import.meta.url));
const artifacts = fileURLToPath(new URL('../test-artifacts/', import.meta.url));
const fixture = (scenario, file) => readFileSync(join(fixtures, scenario, file), 'utf8');

let server;
let context;
let userDataDir;

before(async () => {
  assert.ok(existsSync(CHROMIUM), `Chromium not found at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`);
  rmSync(artifacts, { recursive: true, force: true });
  mkdirSync(artifacts, { recursive: true });
  server = await serve();
  userDataDir = mkdtempSync(join(tmpdir(), 'asc-chromium-'));
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    acceptDownloads: true,
    viewport: { width: 1100, height: 900 },
    colorScheme: 'light',
  });
});

after(async () => {
  await context?.close();
  await server?.close();
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
});

/** What a page logged as errors so far: uncaught exceptions and rejections, console errors. */
const problemsOf = new WeakMap();

/** Starts recording a page's errors (see problemsOf); returns the list it fills. */
function watch(page) {
  const problems = [];
  problemsOf.set(page, problems);
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  return problems;
}

/** A fresh page with the component loaded; fails the test on any console error or page error. */
async function openPage(t) {
  const page = await context.newPage();
  const problems = watch(page);
  const foreign = [];
  page.on('request', (r) => {
    const url = r.url();
    if (!url.startsWith(server.url) && !url.startsWith('blob:') && !url.startsWith('data:')) foreign.push(url);
    else if (url.startsWith(server.url) && r.method() !== 'GET') foreign.push(`${r.method()} ${url}`);
  });
  t.after(async () => {
    await page.close();
    assert.deepEqual(problems, [], 'the page logged errors');
    assert.deepEqual(foreign, [], 'the page must only GET its own files');
  });
  await page.goto(server.url);
  await page.waitForSelector('#engine[data-ready="true"]', { timeout: 30_000 });
  return page;
}

/**
 * Waits for `selector`, but fails at once when the page has logged an error or logs one
 * meanwhile: a click whose handler threw leaves the page unchanged, and the wait would otherwise
 * only end at its timeout.
 */
async function until(page, selector) {
  const problems = problemsOf.get(page);
  const complaint = () => new Error(`the page logged errors: ${problems.join('; ')}`);
  if (problems.length > 0) throw complaint();
  let poll;
  const failed = new Promise((_, reject) => {
    poll = setInterval(() => problems.length > 0 && reject(complaint()), 20);
  });
  try {
    return await Promise.race([page.waitForSelector(selector), failed]);
  } finally {
    clearInterval(poll);
  }
}

/** Pastes `text` over the whole field through the clipboard, as an operator does. */
async function paste(page, selector, text) {
  await page.evaluate((value) => navigator.clipboard.writeText(value), text);
  await page.focus(selector);
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('ControlOrMeta+V');
}

const shot = (page, name) => page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });

async function validatePlan(page, text, boundary = '') {
  await page.fill('#plan-input', text);
  await page.fill('#boundary-input', boundary);
  await page.click('#validate');
  await page.waitForSelector('#verdict[data-valid]');
}

describe('browser plan validator in Chromium', () => {
  it('shows the SPEC test vector as valid with its plan ID', async (t) => {
    const page = await openPage(t);
    await validatePlan(page, fixture('plan-spec-test-vector', 'plan.json'));
    assert.equal(await page.getAttribute('#verdict', 'data-valid'), 'true');
    assert.equal(await page.textContent('#plan-id'), SPEC_PLAN_ID);
    assert.equal(await page.textContent('#error'), '');
    assert.equal(await page.locator('#partitions-body tr').count(), 2);
    assert.equal(await page.isVisible('#canonical'), false, 'the SPEC file is in canonical form');
    await shot(page, '01-valid-spec-vector');
  });

  const invalid = [
    ['with a tampered offset', 'plan-id-mismatch-tampered-offset', 'plan ID does not match'],
    ['with a "+0" partition key', 'plan-partition-plus-zero', 'canonical decimal form'],
    ['followed by trailing garbage', 'plan-trailing-garbage', 'after the JSON document'],
  ];
  for (const [what, scenario, reason] of invalid) {
    it(`refuses a plan ${what} and says why`, async (t) => {
      const page = await openPage(t);
      await validatePlan(page, fixture(scenario, 'plan.json'));
      assert.equal(await page.getAttribute('#verdict', 'data-valid'), 'false');
      const error = await page.textContent('#error');
      assert.ok(error.includes(reason), `#error should contain ${JSON.stringify(reason)}: ${error}`);
      assert.ok(error.includes(fixture(scenario, 'error.txt').trim()), 'the same message as the Rust host');
      assert.equal(await page.textContent('#plan-id'), '');
      assert.equal(await page.isVisible('#partitions'), false);
      await shot(page, `02-invalid-${scenario}`);
    });
  }

  it('validates a chosen file byte for byte (CRLF and tabs kept)', async (t) => {
    const page = await openPage(t);
    const bytes = readFileSync(join(fixtures, 'plan-crlf-and-tabs', 'plan.json'));
    await page.setInputFiles('#plan-file', { name: 'plan.json', mimeType: 'application/json', buffer: bytes });
    await page.waitForSelector('#verdict[data-valid="true"]');
    assert.equal(await page.textContent('#plan-id'), fixture('plan-crlf-and-tabs', 'plan-id.txt').trim());
    assert.equal(await page.isVisible('#canonical'), true, 'a CRLF file is valid but not canonical');
    await shot(page, '03-file-crlf-not-canonical');
  });

  it('validates a 10,000-partition plan and records validation and click-to-paint times', async (t) => {
    const { planId, text } = bigPlan(10_000);
    // The generator and the component agree on the ID and the canonical bytes.
    const inNode = validator.verifyPlan(text);
    assert.equal(inNode.planId, planId);
    assert.equal(validator.renderPlan(inNode), text);

    const page = await openPage(t);
    // A 300 KB plan arrives as a file (typing it with fill() would take minutes); choosing it
    // validates it once, then each click on #validate runs the component again on the same text.
    const measured = await measureClickToPaint(page, { text, runs: 7 });
    assert.equal(await page.textContent('#plan-id'), planId);
    assert.equal(await page.textContent('#plan-partitions'), '10,000');
    assert.equal(await page.inputValue('#plan-input'), '', 'a 300 KB plan is kept out of the text box');
    assert.match(await page.textContent('#plan-file-name'), /plan-10000\.json .*too long to show here/);
    assert.equal(await page.locator('#partitions-body tr').count(), FIRST_ROWS, 'the first rows are drawn');
    assert.equal(await page.isVisible('#canonical'), false);
    await page.click('#show-all');
    assert.equal(await page.locator('#partitions-body tr').count(), 10_000);
    const timing = { partitions: 10_000, planBytes: Buffer.byteLength(text), ...measured };
    writeFileSync(join(artifacts, 'timing.json'), `${JSON.stringify(timing, null, 2)}\n`);
    t.diagnostic(
      `10,000-partition plan (${timing.planBytes} bytes) in Chromium: verify-plan first ${measured.validateMs[0]} ms, ` +
        `click-to-paint median ${measured.medianClickToPaintMs} ms (Event Timing median ${measured.medianEventTimingMs} ms), ` +
        `per click style ${measured.perClickMs.recalcStyle} ms, layout ${measured.perClickMs.layout} ms`,
    );
    assert.equal(measured.clickToPaintMs.length, 7);
    assert.ok(measured.validateMs.every((ms) => Number.isFinite(ms) && ms >= 0));
    await shot(page, '04-valid-10000-partitions');
  });

  it('shows a pasted plan from its first line, and holds a long paste out of the box', async (t) => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    const page = await openPage(t);
    // The SPEC plan is a little taller than the box: before the fix the view followed the caret
    // to the end and hid the first line.
    const plan = fixture('plan-spec-test-vector', 'plan.json');
    await paste(page, '#plan-input', plan);
    await page.waitForFunction((v) => document.getElementById('plan-input').value === v, plan);
    const box = await page.$eval('#plan-input', (e) => ({ top: e.scrollTop, scrollable: e.scrollHeight > e.clientHeight, caret: e.selectionStart }));
    assert.ok(box.scrollable, 'the SPEC plan must be taller than the box for this test to mean anything');
    assert.equal(box.top, 0, 'the first line is visible after a paste');
    assert.equal(box.caret, 0);
    await shot(page, '09-pasted-from-the-top');

    // Markers pasted over the whole box as well.
    const markers = JSON.parse(fixture('markers-120-partitions', 'markers.json')).join('\n');
    await paste(page, '#markers-input', markers);
    await page.waitForFunction((v) => document.getElementById('markers-input').value === v, markers);
    const markersBox = await page.$eval('#markers-input', (e) => ({
      top: e.scrollTop, left: e.scrollLeft, scrollable: e.scrollHeight > e.clientHeight || e.scrollWidth > e.clientWidth }));
    assert.deepEqual(markersBox, { top: 0, left: 0, scrollable: true });

    // A 300 KB paste is held like a chosen file and validated exactly as pasted.
    const { planId, text } = bigPlan(10_000);
    await paste(page, '#plan-input', text);
    await page.waitForFunction(() => /too long to show here/.test(document.getElementById('plan-file-name').textContent));
    assert.equal(await page.inputValue('#plan-input'), '');
    await page.click('#validate');
    await page.waitForSelector('#verdict[data-valid="true"]');
    assert.equal(await page.textContent('#plan-id'), planId);
    // Typing afterwards checks the typed text again, not the held paste.
    await page.fill('#plan-input', '{');
    await page.click('#validate');
    await page.waitForSelector('#verdict[data-valid="false"]');
    assert.equal(await page.textContent('#plan-file-name'), '');
  });

  it('builds a plan from markers and downloads exactly the rendered bytes', async (t) => {
    const page = await openPage(t);
    // A JSON array of marker texts (the fixture file as is) ...
    await page.fill('#recovery-point', fixture('markers-spec-test-vector', 'recovery-point.txt'));
    await page.fill('#markers-input', fixture('markers-spec-test-vector', 'markers.json'));
    await page.click('#build');
    await page.waitForSelector('#build-verdict[data-valid="true"]');
    assert.equal(await page.textContent('#build-plan-id'), SPEC_PLAN_ID);
    assert.equal(await page.textContent('#build-output'), fixture('markers-spec-test-vector', 'expected.json'));

    // ... and one marker per line, where the plan is the minimum over three subtasks.
    const scenario = 'markers-minimum-across-three-subtasks';
    await page.fill('#recovery-point', fixture(scenario, 'recovery-point.txt'));
    await page.fill('#markers-input', JSON.parse(fixture(scenario, 'markers.json')).join('\n'));
    await page.click('#build');
    await page.waitForFunction(
      (id) => document.getElementById('build-plan-id').textContent === id,
      fixture(scenario, 'plan-id.txt').trim(),
    );
    const expected = fixture(scenario, 'expected.json');
    assert.equal(await page.textContent('#build-output'), expected);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
    assert.match(download.suggestedFilename(), /^cleanup-plan-[0-9a-f]{12}\.json$/);
    assert.deepEqual(readFileSync(await download.path()), Buffer.from(expected, 'utf8'));
    await shot(page, '05-built-from-markers');

    // The built plan checks out in the validator above.
    await page.click('#check-built');
    await page.waitForSelector('#verdict[data-valid="true"]');
    assert.equal(await page.textContent('#plan-id'), fixture(scenario, 'plan-id.txt').trim());

    // A legacy marker cannot authorise deletion.
    await page.fill('#markers-input', '{"0":100,"1":42}');
    await page.click('#build');
    await page.waitForSelector('#build-verdict[data-valid="false"]');
    assert.ok((await page.textContent('#build-error')).length > 0);
    assert.equal(await page.isVisible('#download'), false);
    await shot(page, '06-markers-refused');
  });

  it('refuses an empty marker set and shows the component\'s sentence', async (t) => {
    // The component's own sentence for `[]`, as every host prints it.
    let sentence;
    try {
      validator.markerTexts('[]');
    } catch (e) {
      assert.ok(e instanceof validator.CleanupError, e);
      sentence = e.message;
    }
    assert.match(sentence ?? 'not refused', /empty array/);

    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    const page = await openPage(t);
    await page.fill('#recovery-point', 'checkpoint-42');
    await paste(page, '#markers-input', '[]');
    await page.waitForFunction(() => document.getElementById('markers-input').value === '[]');
    await page.click('#build');
    await until(page, '#build-verdict[data-valid="false"]');
    assert.equal(await page.textContent('#build-error'), sentence);
    assert.match(await page.textContent('#build-verdict-title'), /refused/);
    assert.equal(await page.isVisible('#build-output-block'), false);
    await shot(page, '10-empty-marker-set-refused');
  });

  describe('plans from a Flink snapshot picked in the page', () => {
    const snapshots = join(fixtures, 'snapshots');
    const expectedOf = (id) => JSON.parse(readFileSync(join(snapshots, id, 'expected.json'), 'utf8'));
    /** The snapshot's directory, from `checkpoint` (relative to the repository root). */
    const snapshotDir = (expected) => join(fixtures, '..', expected.checkpoint);
    const operatorRow = (page, id) => page.locator(`#snapshot-operators-body tr[data-id="${id}"]`);

    async function planWith(page, location, kind, operator) {
      await page.fill('#snapshot-location', location);
      await page.selectOption('#operator-kind', kind);
      await page.fill('#operator-id', operator);
      await page.evaluate(() => document.getElementById('snapshot-verdict').removeAttribute('data-valid'));
      await page.click('#snapshot-plan');
      await until(page, '#snapshot-verdict[data-valid]');
    }

    it('a Flink 2.2 savepoint folder whose markers are in state files: the Java tool\'s plan', async (t) => {
      const expected = expectedOf('flink-2.2/savepoint-large-markers');
      const page = await openPage(t);
      await page.setInputFiles('#snapshot-folder', snapshotDir(expected));
      await until(page, '#snapshot-operators[data-inspected="ok"]');
      assert.equal(await page.inputValue('#snapshot-location'), 'savepoint', 'the picked folder is the default path');
      assert.match(await page.textContent('#snapshot-picked'), /^Folder: \d+ files, .*_metadata at savepoint\/_metadata$/);
      const row = operatorRow(page, expected.operatorUidHash);
      assert.equal(await row.locator('td').nth(1).textContent(), 'agent-operator');
      assert.match(await row.locator('td').nth(4).textContent(), /^2 markers: 2 × KafkaActionStateRecoveryMarker, topic action-state .*3,000 partitions$/);
      assert.equal(await page.locator('#snapshot-operators-body tr').count(), expected.operators.length);

      await planWith(page, expected.checkpoint, 'uid', expected.operatorUid);
      assert.equal(await page.getAttribute('#snapshot-verdict', 'data-valid'), 'true', await page.textContent('#snapshot-error'));
      assert.equal(await page.textContent('#snapshot-output'), expected.plan);
      assert.match(await page.textContent('#snapshot-verdict-title'), /from 2 markers over 3,000 partitions/);
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#snapshot-download')]);
      assert.deepEqual(readFileSync(await download.path()), Buffer.from(expected.plan, 'utf8'));
      await shot(page, '11-snapshot-savepoint-planned');

      await page.click('#snapshot-check');
      await until(page, '#verdict[data-valid="true"]');
      assert.equal(await page.textContent('#plan-source'), expected.checkpoint);
      assert.equal(await page.isVisible('#canonical'), false);
    });

    it('a Flink 1.20 incremental checkpoint picked with its job directory, by uid and by uid hash', async (t) => {
      const expected = expectedOf('flink-1.20/checkpoint-rocksdb-incremental');
      const chk = snapshotDir(expected);
      const job = join(chk, '..');
      assert.ok(existsSync(join(job, 'shared')), 'the job directory holds shared/');
      const page = await openPage(t);
      await page.setInputFiles('#snapshot-folder', job);
      await until(page, '#snapshot-operators[data-inspected="ok"]');
      const jobName = expected.checkpoint.split('/').at(-2);
      const chkName = expected.checkpoint.split('/').at(-1);
      assert.equal(await page.inputValue('#snapshot-location'), `${jobName}/${chkName}`, "_metadata's folder is the default path");
      const row = operatorRow(page, expected.operatorUidHash);
      assert.equal(await row.locator('td').nth(1).textContent(), '—', 'Flink 1.20 records no uid');

      await planWith(page, expected.checkpoint, 'uid', expected.operatorUid);
      assert.equal(await page.getAttribute('#snapshot-verdict', 'data-valid'), 'true', await page.textContent('#snapshot-error'));
      assert.equal(await page.textContent('#snapshot-output'), expected.plan);
      await shot(page, '12-snapshot-checkpoint-planned');

      // "Use" on the operator's row fills its uid hash, which plans the same.
      await row.locator('button').click();
      assert.equal(await page.inputValue('#operator-kind'), 'uid-hash');
      assert.equal(await page.inputValue('#operator-id'), expected.operatorUidHash);
      await planWith(page, expected.checkpoint, 'uid-hash', expected.operatorUidHash);
      assert.equal(await page.textContent('#snapshot-output'), expected.plan);
    });

    it('plans from a dropped _metadata', async (t) => {
      const expected = expectedOf('flink-2.2/savepoint-canonical');
      const page = await openPage(t);
      const bytes = [...readFileSync(join(snapshotDir(expected), '_metadata'))];
      // A drop as the browser delivers it: a DataTransfer holding the file.
      const dataTransfer = await page.evaluateHandle((b) => {
        const dt = new DataTransfer();
        dt.items.add(new File([new Uint8Array(b)], '_metadata'));
        return dt;
      }, bytes);
      await page.dispatchEvent('#snapshot-drop', 'drop', { dataTransfer });
      await until(page, '#snapshot-operators[data-inspected="ok"]');
      assert.match(await page.textContent('#snapshot-picked'), /^Dropped: 1 file, .*_metadata at _metadata$/);
      await planWith(page, expected.checkpoint, 'uid', expected.operatorUid);
      assert.equal(await page.textContent('#snapshot-output'), expected.plan);
    });

    it('refuses legacy markers, an unknown operator and a missing state file with one sentence', async (t) => {
      const legacy = expectedOf('flink-2.2/savepoint-legacy');
      const page = await openPage(t);
      // _metadata alone, through the multiple-files input.
      await page.setInputFiles('#snapshot-files', [join(snapshotDir(legacy), '_metadata')]);
      await until(page, '#snapshot-operators[data-inspected="ok"]');
      assert.match(await operatorRow(page, legacy.operatorUidHash).locator('td').nth(4).textContent(), /2 × java\.util\.HashMap \(legacy\)/);
      await planWith(page, legacy.checkpoint, 'uid', legacy.operatorUid);
      assert.equal(await page.getAttribute('#snapshot-verdict', 'data-valid'), 'false');
      const error = await page.textContent('#snapshot-error');
      assert.ok(error.includes(legacy.error), `${error} lacks ${legacy.error}`);
      assert.equal(await page.isVisible('#snapshot-output-block'), false);
      await shot(page, '13-snapshot-legacy-refused');

      await planWith(page, legacy.checkpoint, 'uid', 'no-such-operator');
      assert.equal(await page.getAttribute('#snapshot-verdict', 'data-valid'), 'false');
      assert.match(await page.textContent('#snapshot-error'), /agent-operator/, 'the sentence lists the operators present');

      // A savepoint whose markers are in state files, with only its _metadata picked.
      const large = expectedOf('flink-2.2/savepoint-large-markers');
      await page.setInputFiles('#snapshot-files', [join(snapshotDir(large), '_metadata')]);
      await until(page, '#snapshot-operators[data-inspected="error"]');
      await planWith(page, large.checkpoint, 'uid', large.operatorUid);
      assert.equal(await page.getAttribute('#snapshot-verdict', 'data-valid'), 'false');
      assert.match(await page.textContent('#snapshot-error'), /^The snapshot needs \S+, which was not picked\.$/);
      await shot(page, '14-snapshot-state-file-missing');
    });
  });

  it('the harness records an uncaught exception, an unhandled rejection and a console error', async () => {
    // The guard every other test relies on (openPage fails a test whose page logged any of these).
    const page = await context.newPage();
    const problems = watch(page);
    try {
      await page.goto(server.url);
      await page.waitForSelector('#engine[data-ready="true"]', { timeout: 30_000 });
      const thrown = page.waitForEvent('pageerror');
      await page.evaluate(() => setTimeout(() => { throw new Error('thrown on purpose'); }));
      await thrown;
      const rejected = page.waitForEvent('pageerror');
      await page.evaluate(() => { Promise.reject(new Error('rejected on purpose')); });
      await rejected;
      const logged = page.waitForEvent('console');
      await page.evaluate(() => console.error('logged on purpose'));
      await logged;
      assert.deepEqual(problems, ['page error: thrown on purpose', 'page error: rejected on purpose', 'console: logged on purpose']);
      await assert.rejects(until(page, '#engine'), /the page logged errors: page error: thrown on purpose/);
    } finally {
      await page.close();
    }
  });

  it('shows how far a plan advances a pasted boundary and flags a backward plan', async (t) => {
    const page = await openPage(t);
    const plan = fixture('plan-spec-test-vector', 'plan.json'); // {0: 10, 1: 20}
    const cells = async () =>
      page.$$eval('#partitions-body tr', (rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)));

    await validatePlan(page, plan, '{"0":5,"1":20}');
    assert.equal(await page.getAttribute('#advance', 'data-advances'), 'true');
    assert.equal(await page.getAttribute('#advance', 'data-moved'), '1');
    assert.deepEqual(await cells(), [['0', '5', '10', '+5'], ['1', '20', '20', '0']]);

    // The output of `action-state-cleanup status --json` works as well.
    const status = {
      format: 1, controlTopic: 'jobs-cleanup', topic: 'action-state', topicId: 'topic-id', liveTopicId: 'topic-id',
      boundary: { 0: 4, 1: 7 },
      operations: [{ planId: 'a'.repeat(64), status: 'APPLIED', sourceRecoveryPoint: 'checkpoint-40', offsets: { 0: 4, 1: 7 } }],
      live: [{ partition: 0, beginning: 4, end: 30, boundary: 4 }, { partition: 1, beginning: 7, end: 30, boundary: 7 }],
    };
    await validatePlan(page, plan, JSON.stringify(status, null, 2));
    assert.equal(await page.getAttribute('#advance', 'data-advances'), 'true');
    assert.deepEqual(await cells(), [['0', '4', '10', '+6'], ['1', '7', '20', '+13']]);
    assert.match(await page.textContent('#advance'), /2 of 2 partitions.*19 offsets/s);
    await shot(page, '07-advances-boundary');

    // A plan below the committed boundary moves it backwards: refused, rows marked.
    await validatePlan(page, plan, '{"0":150,"1":60}');
    assert.equal(await page.getAttribute('#verdict', 'data-valid'), 'true', 'the plan itself is valid');
    assert.equal(await page.getAttribute('#advance', 'data-advances'), 'false');
    const detail = await page.textContent('#advance-detail');
    assert.ok(detail.includes('does not advance the committed boundary'), detail);
    assert.equal(await page.locator('#partitions-body tr.backward').count(), 2);
    await shot(page, '08-backward-plan');

    // Another topic's status is flagged, and a malformed boundary is reported, not ignored.
    await validatePlan(page, plan, JSON.stringify({ ...status, topicId: 'AAAAAAAAAAAAAAAAAAAAAB' }));
    assert.equal(await page.getAttribute('#advance', 'data-advances'), 'false');
    assert.match(await page.textContent('#advance-title'), /another topic/);
    await validatePlan(page, plan, '{"+0":10,"1":20}');
    assert.equal(await page.getAttribute('#advance', 'data-advances'), 'error');
    assert.match(await page.textContent('#advance-detail'), /canonical decimal form/);
  });
});
