// Builds the npm package into dist/: the reader component (world `reader`: the validator's
// `plans` plus `snapshots` over the `snapshot-store` import, no Kafka) transpiled by jco into
// dist/component/, checked to need nothing from its environment but that one import (no WASI
// shim; the only module it imports is ../store.js, which answers from the picked files; its core
// module imports only the store's two functions), next to the package's own modules and
// declarations copied from lib/. Prints the bundle size (raw and gzip).
//
// The component comes from $ASC_COMPONENTS_DIR/reader.wasm when that variable is set, else
// from ../target/components/reader.wasm (where `cargo build` puts it).
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const web = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(web, 'dist');
const out = join(dist, 'component');
const componentsDir = process.env.ASC_COMPONENTS_DIR
  ? resolve(process.env.ASC_COMPONENTS_DIR)
  : resolve(web, '../target/components');
const component = join(componentsDir, 'reader.wasm');

/** The interfaces the reader may import: types (no functions) and the snapshot store. */
const STORE = 'action-state:cleanup/snapshot-store@0.3.0';
const ALLOWED_IMPORTS = ['action-state:cleanup/types@0.3.0', STORE];
/** Where the store import is answered: lib/store.js, copied to dist/store.js. */
const STORE_MODULE = '../store.js';

function fail(message) {
  console.error(`build: ${message}`);
  process.exit(1);
}

if (!existsSync(component)) {
  fail(
    `reader component not found at ${component}.\n` +
      '  Build it first (cargo build -p action-state-cleanup writes target/components/reader.wasm),\n' +
      '  or point ASC_COMPONENTS_DIR at the folder that holds reader.wasm.',
  );
}

// jco's package.json is not in its `exports`, so find the package folder directly.
const jcoPackage = join(web, 'node_modules/@bytecodealliance/jco/package.json');
if (!existsSync(jcoPackage)) fail('jco is not installed: run `npm ci` in web/ first');
const jcoCli = join(dirname(jcoPackage), JSON.parse(readFileSync(jcoPackage, 'utf8')).bin.jco);
const jco = (...args) => execFileSync(process.execPath, [jcoCli, ...args], { encoding: 'utf8' });

// 1. The component's world: it must export plans and snapshots and import nothing but the types
//    interface and the snapshot store.
const wit = jco('wit', component);
const imports = [...wit.matchAll(/^\s*import\s+([^;]+);/gm)].map((m) => m[1].trim());
const unexpected = imports.filter((name) => !ALLOWED_IMPORTS.includes(name));
if (unexpected.length > 0) fail(`${component} imports ${unexpected.join(', ')}; the reader may import only ${ALLOWED_IMPORTS.join(', ')}`);
if (!/export\s+action-state:cleanup\/plans@0\.3\.0;/.test(wit)) fail(`${component} does not export the plans interface`);
if (!/export\s+action-state:cleanup\/snapshots@0\.3\.0;/.test(wit)) fail(`${component} does not export the snapshots interface`);

// 2. Transpile. The types interface has no functions, so jco emits no import for it; the store's
//    import is mapped to ../store.js; `--no-wasi-shim` makes sure no WASI shim could be wired in
//    silently.
rmSync(dist, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
jco('transpile', component, '-o', out, '--name', 'validator', '--minify', '--no-wasi-shim', '--no-typescript', '-q',
  '--map', `${STORE}=${STORE_MODULE}`);
// jco 1.35 writes its .d.ts files despite --no-typescript; the package ships its own (lib/index.d.ts).
rmSync(join(out, 'interfaces'), { recursive: true, force: true });
rmSync(join(out, 'validator.d.ts'), { force: true });

// 3. Check what came out.
const js = readFileSync(join(out, 'validator.js'), 'utf8');
// The exact static imports, from V8's own parser (vm.SourceTextModule needs the flag).
const specifiers = JSON.parse(
  execFileSync(
    process.execPath,
    ['--experimental-vm-modules', '--no-warnings', '--input-type=commonjs', '-e',
      'const src = require("fs").readFileSync(process.argv[1], "utf8");' +
      'console.log(JSON.stringify(new (require("vm").SourceTextModule)(src).dependencySpecifiers));',
      join(out, 'validator.js')],
    { encoding: 'utf8' },
  ),
);
if (specifiers.length !== 1 || specifiers[0] !== STORE_MODULE) {
  fail(`dist/component/validator.js imports ${specifiers.join(', ') || 'nothing'}; it must import ${STORE_MODULE} alone`);
}
for (const needle of ['wasi:', 'preview2-shim']) {
  if (js.includes(needle)) fail(`dist/component/validator.js mentions ${needle}: it must not need a WASI shim`);
}
const coreFiles = readdirSync(out).filter((f) => f.endsWith('.wasm'));
if (coreFiles.length !== 1) fail(`expected one core module in dist/component/, found ${coreFiles.join(', ') || 'none'}`);
const core = readFileSync(join(out, coreFiles[0]));
const coreImports = WebAssembly.Module.imports(new WebAssembly.Module(core)).map((i) => `${i.module}#${i.name}`);
const storeFunctions = [`${STORE}#list-folder`, `${STORE}#read`];
if (JSON.stringify(coreImports.sort()) !== JSON.stringify(storeFunctions)) {
  fail(`${coreFiles[0]} imports ${coreImports.join(', ') || 'nothing'}; it must import ${storeFunctions.join(', ')} alone`);
}

const unexpectedFiles = readdirSync(out).filter((f) => f !== 'validator.js' && f !== coreFiles[0]);
if (unexpectedFiles.length > 0) fail(`jco wrote unexpected files into dist/component/: ${unexpectedFiles.join(', ')}`);

// 4. The package's own modules and declarations, as they are in lib/.
for (const file of readdirSync(join(web, 'lib'))) copyFileSync(join(web, 'lib', file), join(dist, file));

// 5. Size report (also kept in dist/size.json for the benchmark harness).
const sizes = {};
for (const file of ['component/validator.js', `component/${coreFiles[0]}`]) {
  const bytes = readFileSync(join(dist, file));
  sizes[file] = { raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
}
const total = Object.values(sizes).reduce((a, s) => ({ raw: a.raw + s.raw, gzip: a.gzip + s.gzip }), { raw: 0, gzip: 0 });
const jcoVersion = jco('--version').trim();
writeFileSync(join(dist, 'size.json'), `${JSON.stringify({ jco: jcoVersion, files: sizes, total }, null, 2)}\n`);

const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
console.log(`build: ${component} (${kib(statSync(component).size)}) -> dist/component/ with jco ${jcoVersion}, lib/ -> dist/`);
for (const [file, s] of Object.entries(sizes)) console.log(`  ${file.padEnd(32)} ${kib(s.raw).padStart(10)} raw ${kib(s.gzip).padStart(10)} gzip`);
console.log(`  ${'total'.padEnd(32)} ${kib(total.raw).padStart(10)} raw ${kib(total.gzip).padStart(10)} gzip`);
console.log(`  imports: ${imports.join(', ')} (types, and the snapshot store answered by ${STORE_MODULE}; no WASI)`);
