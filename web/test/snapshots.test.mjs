// The package's snapshot helpers (lib/snapshots.js) over picked files: how `_metadata` is found,
// how the paths the component asks for resolve against its folder, and what the operator is told
// when a pick cannot work. The golden plans of every real snapshot are in fixtures.mjs.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import * as validator from '../dist/index.js';
import { normalizeSegments, pickSnapshot, resolvePicked } from '../dist/snapshots.js';

const { CleanupError, InputError } = validator;
const snapshots = fileURLToPath(new URL('../../fixtures/snapshots/', import.meta.url));
const uid = { tag: 'uid', val: 'agent-operator' };

/** The files of a folder (not recursive) as picked under `prefix/`. */
const pick = (dir, prefix) =>
  readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => ({ path: `${prefix}/${e.name}`, bytes: readFileSync(join(dir, e.name)) }));

const inputError = (pattern) => (e) => {
  assert.ok(e instanceof InputError, e);
  assert.match(e.message, pattern);
  return true;
};

describe('planFromSnapshot over picked files', () => {
  it('normalises POSIX paths, and knows when `..` leaves the picked root', () => {
    assert.deepEqual(normalizeSegments('job/chk-2/../shared/./a'), ['job', 'shared', 'a']);
    assert.deepEqual(normalizeSegments('/job//chk-2/'), ['job', 'chk-2']);
    assert.deepEqual(normalizeSegments('a\\b'), ['a', 'b']);
    assert.equal(normalizeSegments('chk-2/../../shared/a'), null);
  });

  it("resolves what the component asks for against _metadata's picked folder", () => {
    const file = (path) => ({ path, bytes: new Uint8Array([1]) });
    const picked = pickSnapshot([file('job/chk-2/_metadata'), file('job/shared/abc'), file('job/chk-2/def')], 'job/chk-2');
    const at = (location) => resolvePicked(picked, 's3://b/ckpt/job/chk-2', location);
    // The component resolves a checkpoint's handles against the location the operator gave.
    assert.deepEqual(at('s3://b/ckpt/job/shared/abc'), { relative: '../shared/abc', path: 'job/shared/abc' });
    assert.deepEqual(at('s3://b/ckpt/job/chk-2/def'), { relative: 'def', path: 'job/chk-2/def' });
    // The chk-2 folder alone: its ../shared lies above the picked root.
    const alone = pickSnapshot([file('_metadata')], 'chk-2');
    assert.deepEqual(resolvePicked(alone, 'chk-2', 'shared/abc'), { relative: '../shared/abc', path: undefined });
  });

  it('plans the snapshots a Flink job wrote to S3 from their objects, as the Java tool did from the URI', async () => {
    const root = join(snapshots, 's3/flink-2.2');
    const cases = readdirSync(root);
    assert.ok(cases.length >= 3, cases.join(', '));
    for (const name of cases) {
      const expected = JSON.parse(readFileSync(join(root, name, 'expected.json'), 'utf8'));
      // The bucket's objects as downloaded, picked as a folder: a checkpoint's handles name
      // s3://flink-state/…/shared/… objects, resolved by the component against the URI.
      const objects = [];
      const walk = (dir, prefix) => {
        for (const entry of readdirSync(dir, { withFileTypes: true })) {
          if (entry.isDirectory()) walk(join(dir, entry.name), `${prefix}/${entry.name}`);
          else objects.push({ path: `${prefix}/${entry.name}`, bytes: readFileSync(join(dir, entry.name)) });
        }
      };
      walk(join(root, name, 'bucket'), 'flink-state');
      const { plan } = await validator.planFromSnapshot({ location: expected.uri, files: objects, operator: uid });
      assert.equal(validator.renderPlan(plan), expected.plan, name);
    }
  });

  it('names the state file that was not picked', async () => {
    const dir = join(snapshots, 'flink-2.2/savepoint-large-markers/savepoint');
    const files = pick(dir, 'savepoint');
    const expected = JSON.parse(readFileSync(join(dir, '../expected.json'), 'utf8'));
    const needed = validator.snapshotFiles('savepoint', files.find((f) => f.path.endsWith('/_metadata')).bytes, uid);
    assert.ok(needed.length > 0, 'this savepoint keeps its markers in state files');
    const all = await validator.planFromSnapshot({ location: expected.checkpoint, files, operator: uid });
    assert.equal(validator.renderPlan(all.plan), expected.plan);
    const without = files.filter((f) => f.path !== `savepoint/${needed[0].path}`);
    await assert.rejects(
      validator.planFromSnapshot({ location: expected.checkpoint, files: without, operator: uid }),
      inputError(new RegExp(`needs ${needed[0].path}, which was not picked`)),
    );
  });

  it('refuses picks without _metadata, naming what was picked', async () => {
    await assert.rejects(validator.planFromSnapshot({ location: 'x', files: [], operator: uid }), inputError(/No files were picked/));
    const files = [{ path: 'sp/a', bytes: new Uint8Array() }, { path: 'sp/b', bytes: new Uint8Array() }];
    await assert.rejects(
      validator.planFromSnapshot({ location: 'sp', files, operator: uid }),
      inputError(/None of the 2 picked files is a _metadata \(sp\/a, sp\/b\)/),
    );
  });

  it('picks the _metadata whose folder the location ends in, and refuses an ambiguous pick', async () => {
    const dir = join(snapshots, 'flink-2.2/savepoint-canonical/savepoint');
    const expected = JSON.parse(readFileSync(join(dir, '../expected.json'), 'utf8'));
    const bad = { path: 'job/chk-1/_metadata', bytes: new Uint8Array([1, 2, 3]) };
    const files = [...pick(dir, 'job/chk-2'), bad];
    const plan = await validator.planFromSnapshot({ location: `${expected.checkpoint}/../chk-2/`, files, operator: uid });
    assert.equal(plan.markers, 2);
    await assert.rejects(
      validator.planFromSnapshot({ location: 's3://bucket/job/chk-1/_metadata', files, operator: uid }),
      (e) => e instanceof CleanupError && e.kind === 'invalid-snapshot',
    );
    await assert.rejects(
      validator.planFromSnapshot({ location: 'savepoint-7', files, operator: uid }),
      inputError(/2 _metadata files \(job\/chk-2\/_metadata, job\/chk-1\/_metadata\)/),
    );
  });

  it('reads only _metadata and the needed files of Blob picks', async () => {
    const dir = join(snapshots, 'flink-2.2/savepoint-large-markers/savepoint');
    const read = [];
    const files = pick(dir, 'savepoint').map(({ path, bytes }) => ({
      path,
      bytes: { arrayBuffer: async () => (read.push(path), bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)) },
    }));
    files.push({ path: 'savepoint/huge.sst', bytes: { arrayBuffer: () => assert.fail('an unneeded file was read') } });
    const { markers } = await validator.planFromSnapshot({ location: 'savepoint', files, operator: uid });
    assert.equal(markers, 2);
    assert.equal(read.length, 3, `read ${read.join(', ')}`);
  });

  it('lists the operators of a picked snapshot with their markers', async () => {
    const dir = join(snapshots, 'flink-2.2/savepoint-legacy/savepoint');
    const summary = await validator.inspectSnapshotFiles({ files: pick(dir, 'savepoint') });
    const holder = summary.operators.find((o) => o.uid === 'agent-operator');
    assert.deepEqual(holder.markers.map((m) => m.class), ['java.util.HashMap', 'java.util.HashMap']);
    assert.equal(summary.formatVersion, 6);
  });
});

it('the declarations list every cleanup-error case of wit/types.wit, in order', () => {
  const wit = readFileSync(new URL('../../wit/types.wit', import.meta.url), 'utf8');
  const variant = wit.match(/variant cleanup-error \{([\s\S]*?)\n {2}\}/)[1];
  const cases = [...variant.matchAll(/^\s*([a-z-]+)\(/gm)].map((m) => m[1]);
  const dts = readFileSync(new URL('../lib/index.d.ts', import.meta.url), 'utf8');
  const union = dts.match(/export type CleanupErrorCase =([\s\S]*?);\n/)[1];
  assert.deepEqual([...union.matchAll(/tag: '([a-z-]+)'/g)].map((m) => m[1]), cases);
  assert.ok(cases.includes('invalid-snapshot'));
});
