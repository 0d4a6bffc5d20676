#!/usr/bin/env node
/*
 * Runs `npm run build` only when a source is newer than the last build, so `npm run cli` and
 * `npm start` answer in about a second instead of recompiling the project (~25 s) every call.
 * The stamp is written after a successful build; a failed build leaves the old stamp, so the next
 * call builds again. Quiet when there is nothing to do: CLI output stays one JSON line on stdout.
 */
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const STAMP = path.join(root, 'dist', '.build-stamp');
const INPUTS = ['src', 'workflows', 'activities', 'migrations', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];

/** The newest modification time under `entry` (a file or a folder), in milliseconds. */
function newestMtime(entry) {
  let stat;
  try {
    stat = fs.statSync(entry);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs; // a deleted file changes its folder's time
  for (const name of fs.readdirSync(entry)) newest = Math.max(newest, newestMtime(path.join(entry, name)));
  return newest;
}

function stampTime() {
  try {
    return fs.statSync(STAMP).mtimeMs;
  } catch {
    return -1;
  }
}

const sourcesTime = Math.max(...INPUTS.map((input) => newestMtime(path.join(root, input))));
if (stampTime() >= sourcesTime) process.exit(0);

// The build's own output goes to stderr: callers such as the CLI keep stdout for their answer.
const built = spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: ['ignore', process.stderr, 'inherit'] });
if (built.status !== 0) process.exit(built.status ?? 1);
fs.writeFileSync(STAMP, `${new Date().toISOString()}\n`);
