// Builds Decoy Studio into ../dist: the bundle (app-HASH.js, app-HASH.css),
// the icon, and index.html naming them. The output is committed and
// embedded in the Go binary, so that Go alone builds Decoy.
//
//   node build.mjs           write ../dist
//   node build.mjs --check   build into a temporary folder and fail when it
//                            differs from ../dist (the committed bundle is
//                            stale)
import * as esbuild from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdtemp, mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(here, '..', 'dist');
const check = process.argv.includes('--check');

async function build(out) {
  await rm(out, { recursive: true, force: true });
  await mkdir(path.join(out, 'assets'), { recursive: true });
  const result = await esbuild.build({
    absWorkingDir: here,
    entryPoints: { app: 'src/main.jsx' },
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['chrome110', 'firefox110', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outdir: path.join(out, 'assets'),
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    metafile: true,
    legalComments: 'linked',
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((p) => path.basename(p));
  const js = outputs.find((n) => /^app-.*\.js$/.test(n));
  const css = outputs.find((n) => /^app-.*\.css$/.test(n));
  if (!js || !css) throw new Error(`unexpected outputs: ${outputs.join(', ')}`);

  const icon = await readFile(path.join(here, 'src', 'favicon.svg'));
  const iconName = `favicon-${hash(icon)}.svg`;
  await writeFile(path.join(out, 'assets', iconName), icon);

  const template = await readFile(path.join(here, 'src', 'index.html'), 'utf8');
  const html = template
    .replace('{{css}}', `/studio/assets/${css}`)
    .replace('{{js}}', `/studio/assets/${js}`)
    .replace('{{icon}}', `/studio/assets/${iconName}`);
  await writeFile(path.join(out, 'index.html'), html);
}

// hash names a file by its content, in the form esbuild uses (8 characters
// of base32), so that the server caches it as immutable.
function hash(data) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  const digest = createHash('sha256').update(data).digest();
  let bits = 0, value = 0, out = '';
  for (const byte of digest) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < 8) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

async function files(dir, prefix = '') {
  const out = {};
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const rel = path.join(prefix, e.name);
    if (e.isDirectory()) Object.assign(out, await files(path.join(dir, e.name), rel));
    else out[rel] = await readFile(path.join(dir, e.name));
  }
  return out;
}

if (check) {
  const tmp = await mkdtemp(path.join(tmpdir(), 'decoy-studio-'));
  try {
    await build(tmp);
    const [want, got] = [await files(tmp), await files(dist).catch(() => ({}))];
    const names = new Set([...Object.keys(want), ...Object.keys(got)]);
    const stale = [...names].filter((n) => !want[n] || !got[n] || !want[n].equals(got[n])).sort();
    if (stale.length) {
      console.error(`studio/dist is stale (${stale.join(', ')}): run npm run build in studio/web and commit studio/dist`);
      process.exit(1);
    }
    console.log('studio/dist matches its sources');
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
} else {
  await build(dist);
  console.log('built studio/dist');
}
