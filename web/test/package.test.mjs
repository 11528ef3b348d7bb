// The npm package as users get it: `npm pack` (of the dist/ that `npm test` has just built),
// installed with `npm install <tarball>` into an empty temporary folder, then used
//   - from Node by its name (package `exports`): the SPEC plan, a bad plan's CleanupError, every
//     ../fixtures scenario (test/fixtures.mjs run against the installed entry module);
//   - from TypeScript: a strict consumer type-checks against the shipped declarations;
//   - in Chromium: a page that imports the package through an import map, and the validator page
//     shipped in the tarball, both served from the installed folder.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { chromium } from 'playwright-core';

import { serve } from '../scripts/serve.mjs';

const NAME = 'action-state-cleanup-validator';
const web = fileURLToPath(new URL('..', import.meta.url));
const fixtures = fileURLToPath(new URL('../../fixtures/', import.meta.url));
const fixture = (scenario, file) => readFileSync(join(fixtures, scenario, file), 'utf8');
const SPEC_PLAN_ID = fixture('plan-spec-test-vector', 'plan-id.txt').trim();
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const npmCli = process.env.npm_execpath; // set when run by `npm test`
const npm = (args, options) =>
  npmCli
    ? execFileSync(process.execPath, [npmCli, ...args], { encoding: 'utf8', ...options })
    : execFileSync('npm', args, { encoding: 'utf8', ...options });

let work;
let consumer;
let installed;
let tarball;
let packed;

before(() => {
  assert.ok(existsSync(join(web, 'dist/index.js')), 'dist/ is missing: run `npm run build` (npm test does) first');
  work = mkdtempSync(join(tmpdir(), 'asc-npm-'));
  // dist/ was built by `npm test` just before: pack it as it is (a plain `npm pack` builds first).
  packed = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: web }))[0];
  tarball = join(work, packed.filename);
  consumer = join(work, 'consumer');
  mkdirSync(consumer);
  // An empty folder: npm creates package.json; --offline proves the package needs nothing else.
  npm(['install', '--offline', '--no-audit', '--no-fund', '--no-package-lock', tarball], { cwd: consumer });
  installed = join(consumer, 'node_modules', NAME);
});

after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the packed npm package', () => {
  it('holds the ES modules, the declarations, the component and the page, and nothing else', () => {
    const files = packed.files.map((f) => f.path).sort();
    for (const f of ['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/errors.js', 'dist/plans.js',
      'dist/inputs.js', 'dist/snapshots.js', 'dist/component/validator.js', 'index.html', 'src/app.js', 'src/table.js',
      'src/snapshot.js', 'src/style.css']) {
      assert.ok(files.includes(f), `${f} is not in the tarball: ${files.join(', ')}`);
    }
    assert.equal(files.filter((f) => /^dist\/component\/.*\.core\.wasm$/.test(f)).length, 1, 'one core module');
    const stray = files.filter((f) => /^(test|scripts|lib|node_modules|test-artifacts)\//.test(f) || f === 'dist/size.json');
    assert.deepEqual(stray, [], 'tests, scripts and sources stay out of the tarball');
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    assert.equal(manifest.type, 'module');
    assert.deepEqual(manifest.dependencies ?? {}, {}, 'the package has no runtime dependency');
    assert.equal(manifest.exports['.'].types, './dist/index.d.ts');
  });

  it('works from Node by its name: the SPEC plan, and a bad plan as a typed CleanupError', () => {
    const script = `
      import * as pkg from '${NAME}';
      const spec = process.argv[2], tampered = process.argv[3];
      const plan = pkg.verifyPlan(spec);
      let refused;
      try { pkg.verifyPlan(tampered); } catch (e) { refused = e; }
      let built;
      try { pkg.planFromMarkers('checkpoint-1', ['{"0":100}']); } catch (e) { built = e; }
      let pasted;
      try { pkg.markerTexts(''); } catch (e) { pasted = e; }
      console.log(JSON.stringify({
        entry: import.meta.resolve('${NAME}'),
        planId: plan.planId, offsetType: typeof plan.offsets[0].offset,
        rendered: pkg.renderPlan(plan) === spec,
        refused: { isError: refused instanceof Error, isCleanupError: refused instanceof pkg.CleanupError,
          name: refused.name, kind: refused.kind, detail: refused.detail, tag: refused.error.tag,
          message: refused.message, same: refused.message === pkg.message(refused.error) },
        built: { isCleanupError: built instanceof pkg.CleanupError, kind: built.kind, message: built.message },
        pasted: { isInputError: pasted instanceof pkg.InputError, message: pasted.message },
      }));`;
    writeFileSync(join(consumer, 'check.mjs'), script);
    const out = JSON.parse(execFileSync(process.execPath, ['check.mjs', fixture('plan-spec-test-vector', 'plan.json'),
      fixture('plan-id-mismatch-tampered-offset', 'plan.json')], { cwd: consumer, encoding: 'utf8' }));
    assert.equal(out.entry, pathToFileURL(join(installed, 'dist/index.js')).href, 'resolved through node_modules');
    assert.equal(out.planId, SPEC_PLAN_ID);
    assert.equal(out.offsetType, 'bigint');
    assert.equal(out.rendered, true);
    assert.equal(out.refused.isError, true);
    assert.equal(out.refused.isCleanupError, true);
    assert.equal(out.refused.name, 'CleanupError');
    assert.equal(out.refused.kind, 'invalid-plan');
    assert.equal(out.refused.tag, 'invalid-plan');
    assert.equal(typeof out.refused.detail, 'string');
    assert.ok(out.refused.message.includes(fixture('plan-id-mismatch-tampered-offset', 'error.txt').trim()), out.refused.message);
    assert.equal(out.refused.same, true, 'message is the component sentence plans.message');
    assert.equal(out.built.isCleanupError, true);
    assert.equal(out.built.kind, 'invalid-marker', out.built.message);
    assert.equal(out.pasted.isInputError, true);
    assert.equal(out.pasted.message, 'Paste at least one recovery marker.');
  });

  it('agrees with every fixture when run from the installed package', () => {
    const entry = pathToFileURL(join(installed, 'dist/index.js')).href;
    // A test run of its own (NODE_TEST_CONTEXT would make it report to this runner instead).
    const { NODE_TEST_CONTEXT, ...env } = process.env;
    const run = spawnSync(process.execPath, ['--test', '--test-reporter=tap', join(web, 'test/fixtures.mjs')], {
      cwd: consumer, encoding: 'utf8', env: { ...env, ASC_VALIDATOR_MODULE: entry },
    });
    const count = (what) => Number(run.stdout.match(new RegExp(`^# ${what} (\\d+)$`, 'm'))?.[1]);
    assert.equal(run.status, 0, run.stdout.slice(-3000) + run.stderr);
    assert.ok(run.stdout.includes(`validator module: ${entry}\n`), 'the fixtures ran against the installed package');
    assert.ok(count('pass') > 100, `only ${count('pass')} fixture tests passed`);
    assert.equal(count('fail'), 0);
  });

  it('type-checks a strict TypeScript consumer against the shipped declarations', () => {
    writeFileSync(join(consumer, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022',
        lib: ['es2022'], types: [], skipLibCheck: false },
      files: ['consumer.ts'],
    }));
    writeFileSync(join(consumer, 'consumer.ts'), `
      import { CleanupError, InputError, checkAdvance, computePlan, inspectSnapshotFiles, markerTexts, parseBoundary,
        planFromMarkers, planFromSnapshot, renderPlan, snapshotFiles, verifyPlan,
        type CleanupErrorKind, type MarkerFilesPlan, type OperatorRef, type Plan, type PartitionAdvance,
        type SnapshotSummary } from '${NAME}';
      declare const text: string;
      const plan: Plan = verifyPlan(text);
      const first: bigint = plan.offsets[0].offset;
      const id: string = plan.planId;
      const file: string = renderPlan(plan);
      const built: Plan = planFromMarkers('checkpoint-1', markerTexts(text));
      const moved: PartitionAdvance[] = checkAdvance(built, parseBoundary(text).offsets);
      try { verifyPlan(text); } catch (e) {
        if (e instanceof CleanupError) {
          const kind: CleanupErrorKind = e.kind;
          const sentence: string = e.message;
          if (e.error.tag === 'boundary-regression') { const boundary: bigint = e.error.val.boundary; void boundary; }
          if (e.error.tag === 'kafka') { const retriable: boolean = e.error.val.retriable; void retriable; }
          void kind; void sentence;
        } else if (e instanceof InputError) { const why: string = e.message; void why; }
      }
      // Snapshots: the thin wrappers, and the helper over picked files (async: it reads Blobs lazily).
      declare const metadata: Uint8Array;
      const operator: OperatorRef = { tag: 'uid-hash', val: '327a323a2b5110fcc96c46bc0746e725' };
      const refs = snapshotFiles('chk-2', metadata, operator);
      const computed: MarkerFilesPlan = computePlan('chk-2', { tag: 'snapshot',
        val: { metadata, operator, files: refs.map((r) => ({ path: r.path, bytes: metadata })) } });
      async function fromPicks(): Promise<number> {
        const { plan: picked, markers } = await planFromSnapshot({ location: 'chk-2', files: [{ path: 'job/chk-2/_metadata', bytes: metadata }], operator });
        const summary: SnapshotSummary = await inspectSnapshotFiles({ files: [] });
        const checkpoint: bigint = summary.checkpointId;
        const uid: string | undefined = summary.operators[0].uid;
        void picked; void checkpoint; void uid;
        return markers + computed.markers;
      }
      try { verifyPlan(text); } catch (e) {
        if (e instanceof CleanupError && e.error.tag === 'invalid-snapshot') { const why: string = e.error.val; void why; }
      }
      // @ts-expect-error not an operator-ref case
      const byName: OperatorRef = { tag: 'name', val: 'agent-operator' };
      void fromPicks; void byName;
      // The declarations are precise, not 'any':
      // @ts-expect-error a plan document is a string
      verifyPlan(42);
      // @ts-expect-error offsets are bigint
      const wrong: number = plan.offsets[0].offset;
      // @ts-expect-error not a cleanup-error case
      const nope: CleanupErrorKind = 'no-such-case';
      void first; void id; void file; void moved; void wrong; void nope;
    `);
    const tsc = join(web, 'node_modules/typescript/bin/tsc');
    const run = spawnSync(process.execPath, [tsc, '-p', join(consumer, 'tsconfig.json')], { cwd: consumer, encoding: 'utf8' });
    assert.equal(run.status, 0, `tsc failed:\n${run.stdout}${run.stderr}`);
  });

  describe('in Chromium', () => {
    let context;
    let server;
    let userDataDir;
    before(async () => {
      assert.ok(existsSync(CHROMIUM), `Chromium not found at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`);
      // A user's page that imports the package by name through an import map, no bundler.
      writeFileSync(join(consumer, 'index.html'), `<!doctype html><meta charset="utf-8"><title>consumer</title>
        <script type="importmap">{ "imports": { "${NAME}": "./node_modules/${NAME}/dist/index.js" } }</script>
        <script type="module">
          import * as pkg from '${NAME}';
          window.pkg = pkg;
          document.title = 'ready';
        </script>`);
      server = await serve({ root: consumer, nodeModules: true });
      userDataDir = mkdtempSync(join(tmpdir(), 'asc-chromium-'));
      context = await chromium.launchPersistentContext(userDataDir, {
        executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'],
      });
    });
    after(async () => {
      await context?.close();
      await server?.close();
      if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
    });

    it('imports the installed package in a page: the SPEC plan, and a typed CleanupError', async () => {
      const page = await context.newPage();
      const errors = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(server.url);
      await page.waitForFunction(() => document.title === 'ready', null, { timeout: 30_000 });
      const out = await page.evaluate(([spec, tampered]) => {
        const plan = window.pkg.verifyPlan(spec);
        let refused;
        try { window.pkg.verifyPlan(tampered); } catch (e) { refused = e; }
        return { planId: plan.planId, bigint: typeof plan.offsets[0].offset === 'bigint',
          isCleanupError: refused instanceof window.pkg.CleanupError, isError: refused instanceof Error,
          kind: refused.kind, message: refused.message };
      }, [fixture('plan-spec-test-vector', 'plan.json'), fixture('plan-id-mismatch-tampered-offset', 'plan.json')]);
      assert.equal(out.planId, SPEC_PLAN_ID);
      assert.equal(out.bigint, true);
      assert.equal(out.isCleanupError, true);
      assert.equal(out.isError, true);
      assert.equal(out.kind, 'invalid-plan');
      assert.ok(out.message.includes(fixture('plan-id-mismatch-tampered-offset', 'error.txt').trim()), out.message);
      assert.ok(server.requests.some((r) => r.url.endsWith('.core.wasm')), 'the core module came from the installed package');
      assert.deepEqual(errors, []);
      await page.close();
    });

    it('serves the validator page shipped in the tarball, which checks the SPEC plan', async () => {
      const shipped = await serve({ root: installed });
      try {
        const page = await context.newPage();
        const errors = [];
        page.on('pageerror', (e) => errors.push(e.message));
        page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
        await page.goto(shipped.url);
        await page.waitForSelector('#engine[data-ready="true"]', { timeout: 30_000 });
        await page.fill('#plan-input', fixture('plan-spec-test-vector', 'plan.json'));
        await page.click('#validate');
        await page.waitForSelector('#verdict[data-valid="true"]');
        assert.equal(await page.textContent('#plan-id'), SPEC_PLAN_ID);
        assert.ok(shipped.requests.some((r) => r.url === '/dist/index.js'), 'the page runs on the package entry');
        assert.deepEqual(errors, []);
        await page.close();
      } finally {
        await shipped.close();
      }
    });
  });
});
