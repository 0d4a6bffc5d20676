/*
 * What the setup scripts share to build and cache Go binaries (the Temporal CLI, server and UI,
 * SeaweedFS): the cache folder, a build lock, and `go` run with one retry without the checksum
 * database when it is out of reach.
 */
'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

/** `~/.cache/delivery-service` (or under XDG_CACHE_HOME); keep in step with temporalCliCacheDir() in src/dev/temporal-cli.ts. */
function cacheRoot() {
  const cacheHome = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(cacheHome, 'delivery-service');
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
async function acquireBuildLock(lockFile, what) {
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
      console.log(`Another process (pid ${holder}) is building ${what}; waiting for it...`);
      announced = true;
    }
    await sleep(2000);
  }
}

/** Runs go, streaming its output to the terminal while keeping stderr to look for a checksum-database error. */
function runGo(goBin, args, { cwd, env }) {
  return new Promise((resolve) => {
    const child = spawn(goBin, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'pipe'] });
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

/** `go <args>`, retried once with GOSUMDB=off when the checksum database could not be reached. */
async function goWithSumdbFallback(goBin, args, { cwd, env = {} }) {
  let result = await runGo(goBin, args, { cwd, env });
  if (result.code !== 0 && isChecksumDatabaseError(result.stderr)) {
    console.log('The Go checksum database could not be reached; retrying once with GOSUMDB=off.');
    result = await runGo(goBin, args, { cwd, env: { ...env, GOSUMDB: 'off' } });
  }
  return result.code === 0;
}

/**
 * Builds `binaries` into `dir` once, under a lock, with `steps` (each a list of go arguments run in
 * `cwd`, default `dir`); returns `dir` when every binary is there, undefined when a step failed.
 */
async function buildOnce({ dir, binaries, what, steps, cwd = dir, env = {} }) {
  const ready = () => binaries.every((name) => isExecutableFile(path.join(dir, name)));
  if (ready()) return dir;
  const goBin = findOnPath('go');
  if (!goBin) {
    console.error(`Go is needed to build ${what}: install it and run again.`);
    return undefined;
  }
  fs.mkdirSync(dir, { recursive: true });
  const release = await acquireBuildLock(path.join(dir, '.build.lock'), what);
  try {
    // Whoever held the lock before us may just have finished the same build.
    if (ready()) return dir;
    console.log(`Building ${what} with Go into ${dir} (takes minutes the first time)...`);
    for (const args of steps) {
      if (!(await goWithSumdbFallback(goBin, args, { cwd, env }))) return undefined;
    }
    return ready() ? dir : undefined;
  } finally {
    release();
  }
}

/** Runs a setup script's `main` (resolving to an exit code); a throw is exit 1 with its stack. */
function runScript(main) {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}

module.exports = { cacheRoot, isExecutableFile, findOnPath, buildOnce, runScript };
