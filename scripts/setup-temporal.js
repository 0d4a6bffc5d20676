#!/usr/bin/env node
/*
 * Makes sure a Temporal CLI binary exists for the embedded dev server (`temporal server start-dev`).
 * Runs before the tests (`pretest`) and in CI; idempotent and quick when the binary is already there.
 *
 * Search order (same as src/dev/temporal-cli.ts):
 *   TEMPORAL_CLI_PATH → `temporal` on PATH → the cache → build it with Go into the cache
 *   → otherwise explain that the Temporal SDK downloads one at run time (needs internet) and exit 0.
 * The last line on stdout is `temporal-cli: <path>` when a binary was found or built.
 */
'use strict';

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal';
const CLI_VERSION = 'v1.5.1';
const EXE = process.platform === 'win32' ? 'temporal.exe' : 'temporal';

/** Keep in step with temporalCliCacheDir() in src/dev/temporal-cli.ts. */
function cacheDir() {
  const cacheHome = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(cacheHome, 'delivery-service', 'temporal');
}

function isExecutableFile(file) {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function findOnPath(name) {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    if (dir && isExecutableFile(path.join(dir, name))) return path.join(dir, name);
  }
  return undefined;
}

function findExisting() {
  const configured = process.env.TEMPORAL_CLI_PATH;
  if (configured) {
    if (isExecutableFile(path.resolve(configured))) return path.resolve(configured);
    console.warn(`TEMPORAL_CLI_PATH=${configured} is not an executable file; looking elsewhere.`);
  }
  const onPath = findOnPath(EXE);
  if (onPath) return onPath;
  const cached = path.join(cacheDir(), EXE);
  return isExecutableFile(cached) ? cached : undefined;
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A build takes minutes; two `npm test` runs at once must not both start one. The lock file holds the
 * builder's pid, so a lock left by a killed build is taken over instead of waited on forever.
 */
async function acquireBuildLock(lockFile) {
  let announced = false;
  for (;;) {
    try {
      fs.writeFileSync(lockFile, String(process.pid), { flag: 'wx' });
      return () => fs.rmSync(lockFile, { force: true });
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
    let holder;
    let ageMs;
    try {
      holder = Number(fs.readFileSync(lockFile, 'utf8').trim());
      ageMs = Date.now() - fs.statSync(lockFile).mtimeMs;
    } catch {
      continue; // released between our two looks
    }
    // An empty file is a lock being written right now, unless it has stayed empty.
    const stale = Number.isInteger(holder) && holder > 0 ? !isAlive(holder) : ageMs > 10_000;
    if (stale) {
      fs.rmSync(lockFile, { force: true });
      continue;
    }
    if (!announced) {
      console.log(`Another process (pid ${holder}) is building the Temporal CLI; waiting for it...`);
      announced = true;
    }
    await sleep(2000);
  }
}

/** Streams go's output to the terminal while keeping stderr to look for a checksum-database error. */
function goInstall(goBin, dir, extraEnv, packages = [`${CLI_MODULE}@${CLI_VERSION}`]) {
  return new Promise((resolve) => {
    const child = spawn(goBin, ['install', ...packages], {
      env: { ...process.env, GOBIN: dir, ...extraEnv },
      stdio: ['ignore', 'inherit', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      process.stderr.write(chunk);
      stderr = (stderr + chunk.toString()).slice(-20_000);
    });
    child.on('error', (err) => resolve({ code: 1, stderr: String(err) }));
    child.on('close', (code) => resolve({ code: code ?? 1, stderr }));
  });
}

/**
 * The checksum database (sum.golang.org) being unreachable is worth one retry without it. A checksum
 * *mismatch* ("SECURITY ERROR") is not: that is a tampered or corrupted module.
 */
function isChecksumDatabaseError(stderr) {
  if (/SECURITY ERROR|checksum mismatch/i.test(stderr)) return false;
  return /sum\.golang\.org|checksum database|GOSUMDB|verifying .*module/i.test(stderr);
}

async function build(goBin) {
  const dir = cacheDir();
  fs.mkdirSync(dir, { recursive: true });
  const release = await acquireBuildLock(path.join(dir, '.build.lock'));
  try {
    // Whoever held the lock before us may just have finished the same build.
    const target = path.join(dir, EXE);
    if (isExecutableFile(target)) return target;

    console.log(`Building the Temporal CLI ${CLI_VERSION} with Go into ${dir} (takes a few minutes the first time)...`);
    let result = await goInstall(goBin, dir, {});
    if (result.code !== 0 && isChecksumDatabaseError(result.stderr)) {
      console.log('The Go checksum database could not be reached; retrying once with GOSUMDB=off.');
      result = await goInstall(goBin, dir, { GOSUMDB: 'off' });
    }
    if (result.code !== 0 || !isExecutableFile(target)) return undefined;
    return target;
  } finally {
    release();
  }
}

function printVersion(bin) {
  const out = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 30_000 });
  if (out.status === 0 && out.stdout) console.log(out.stdout.trim());
}

/**
 * `--server`: the full Temporal server, its schema tool and its Web UI server (the production
 * shape: `npm run start:cluster`), the versions of the CLI's dev server, into their own caches.
 */
const SERVER_VERSION = 'v1.29.1';
/** The Web UI of the CLI's dev server (UI 2.42.1), as a server of its own for the cluster. */
const UI_VERSION = 'v2.42.1';
const BUILDS = [
  { dir: 'temporal-server', binaries: ['server', 'sql'], packages: [`go.temporal.io/server/cmd/server@${SERVER_VERSION}`, `go.temporal.io/server/cmd/tools/sql@${SERVER_VERSION}`] },
  { dir: 'temporal-ui', binaries: ['server'], packages: [`github.com/temporalio/ui-server/v2/cmd/server@${UI_VERSION}`] },
];

async function buildServer() {
  for (const build of BUILDS) {
    if (!(await buildInto(path.join(path.dirname(cacheDir()), build.dir), build.binaries, build.packages))) return undefined;
  }
  return path.dirname(cacheDir());
}

async function buildInto(dir, binaries, packages) {
  const ready = () => binaries.every((name) => isExecutableFile(path.join(dir, name)));
  if (ready()) return dir;
  const goBin = findOnPath('go');
  if (!goBin) {
    console.error('Go is needed to build the Temporal server and UI: install it and run again.');
    return undefined;
  }
  fs.mkdirSync(dir, { recursive: true });
  const release = await acquireBuildLock(path.join(dir, '.build.lock'));
  try {
    if (ready()) return dir;
    console.log(`Building ${packages.join(' ')} with Go into ${dir} (a few minutes the first time)...`);
    let result = await goInstall(goBin, dir, {}, packages);
    if (result.code !== 0 && isChecksumDatabaseError(result.stderr)) {
      console.log('The Go checksum database could not be reached; retrying once with GOSUMDB=off.');
      result = await goInstall(goBin, dir, { GOSUMDB: 'off' }, packages);
    }
    return result.code === 0 && ready() ? dir : undefined;
  } finally {
    release();
  }
}

async function main() {
  if (process.argv.includes('--server')) {
    const dir = await buildServer();
    if (!dir) return 1;
    console.log(`temporal server, SQL tool and UI: ${path.join(dir, 'temporal-server')}, ${path.join(dir, 'temporal-ui')}`);
    return 0;
  }
  let bin = findExisting();
  if (!bin) {
    const goBin = findOnPath(process.platform === 'win32' ? 'go.exe' : 'go');
    if (!goBin) {
      console.log(
        [
          'No Temporal CLI found (TEMPORAL_CLI_PATH, `temporal` on PATH, or ' + path.join(cacheDir(), EXE) + ')',
          'and Go is not installed to build one.',
          'The embedded Temporal dev server will fall back to the Temporal SDK downloading the CLI at run time,',
          'which needs internet access. To work offline, install the Temporal CLI (https://temporal.io/setup/install-temporal-cli)',
          'and put it on PATH or set TEMPORAL_CLI_PATH, or install Go and re-run `npm run setup:temporal`.',
        ].join('\n'),
      );
      return 0;
    }
    bin = await build(goBin);
    if (!bin) {
      console.error(
        `Building the Temporal CLI with Go failed (see the output above). Set TEMPORAL_CLI_PATH to an ` +
          `existing Temporal CLI binary, or fix the Go build and re-run \`npm run setup:temporal\`.`,
      );
      return 1;
    }
  }
  printVersion(bin);
  console.log(`temporal-cli: ${bin}`);
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    console.error(err);
    process.exitCode = 1;
  },
);
