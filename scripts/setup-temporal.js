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

const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { buildOnce, cacheRoot, findOnPath, isExecutableFile, runScript } = require('./go-builds');

const CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal';
const CLI_VERSION = 'v1.5.1';
const EXE = process.platform === 'win32' ? 'temporal.exe' : 'temporal';

/** Keep in step with temporalCliCacheDir() in src/dev/temporal-cli.ts. */
function cacheDir() {
  return path.join(cacheRoot(), 'temporal');
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

async function build() {
  const dir = cacheDir();
  const built = await buildOnce({
    dir, binaries: [EXE], what: `the Temporal CLI ${CLI_VERSION}`,
    steps: [['install', `${CLI_MODULE}@${CLI_VERSION}`]], env: { GOBIN: dir },
  });
  return built && path.join(dir, EXE);
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
    const dir = path.join(cacheRoot(), build.dir);
    const built = await buildOnce({ dir, binaries: build.binaries, what: build.packages.join(' '), steps: [['install', ...build.packages]], env: { GOBIN: dir } });
    if (!built) return undefined;
  }
  return cacheRoot();
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
    bin = await build();
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

runScript(main);
