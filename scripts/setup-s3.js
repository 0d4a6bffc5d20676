#!/usr/bin/env node
/*
 * Makes sure a SeaweedFS binary (`weed`) exists: the S3-compatible server of the storage tests,
 * the benchmarks and `npm run start:cluster`. Built once with Go into ~/.cache/delivery-service/seaweedfs
 * (about 11 minutes and 230 MB the first time), quick afterwards; `weed` on PATH is used as it is.
 *
 * SeaweedFS's go.mod has a `replace` line, so `go install module@version` refuses it: it is built
 * from a small wrapper module that requires it, repeats the replace line and names the command as a
 * tool. The last line on stdout is `seaweedfs: <path>`.
 */
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { buildOnce, cacheRoot, findOnPath, runScript } = require('./go-builds');

const MODULE = 'github.com/seaweedfs/seaweedfs';
const VERSION = 'v0.0.0-20261109003541-7506e5f91cd6';

const WRAPPER_GO_MOD = `module delivery-service/seaweedfs-build

go 1.26

require ${MODULE} ${VERSION}

// Repeated from SeaweedFS's own go.mod (a wrapper module must say it again).
replace github.com/tyler-smith/go-bip39 => github.com/cosmos/go-bip39 v1.0.0

tool ${MODULE}/weed
`;

async function main() {
  const onPath = findOnPath('weed');
  if (onPath) {
    console.log(`seaweedfs: ${onPath}`);
    return 0;
  }
  const dir = path.join(cacheRoot(), 'seaweedfs');
  const wrapper = path.join(dir, 'wrapper');
  const goMod = path.join(wrapper, 'go.mod');
  // `go mod tidy` adds to the file: write it only when it is not this version's yet.
  if (!fs.existsSync(goMod) || !fs.readFileSync(goMod, 'utf8').includes(`${MODULE} ${VERSION}`)) {
    fs.mkdirSync(wrapper, { recursive: true });
    fs.writeFileSync(goMod, WRAPPER_GO_MOD);
  }
  const built = await buildOnce({
    dir, binaries: ['weed'], what: `SeaweedFS ${VERSION}`, cwd: wrapper,
    steps: [['mod', 'tidy'], ['build', '-o', path.join(dir, 'weed'), `${MODULE}/weed`]],
  });
  if (!built) {
    console.error('Building SeaweedFS with Go failed (see the output above); put a `weed` binary on PATH instead.');
    return 1;
  }
  console.log(`seaweedfs: ${path.join(dir, 'weed')}`);
  return 0;
}

runScript(main);
