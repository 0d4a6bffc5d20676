// jest's node environment, with one change to how its worker processes end.
//
// A jest worker ends by letting its event loop empty, which runs Node's full environment teardown:
// with the heap its files leave behind (0.5 to 1.5 GB) that took 460-670 ms on a busy 2-core machine,
// past jest-worker's fixed 500 ms grace, so jest killed the worker and warned of leaked handles where
// there were none (each worker's only handles were its IPC pipes). process.exit() skips that
// teardown (unit-test workers: 285-563 ms before, 163-326 ms after). 'beforeExit' is emitted only
// once the loop is empty, which in a worker is after jest has sent it away.
const { TestEnvironment } = require('jest-environment-node');

process.once('beforeExit', () => process.exit());

module.exports = TestEnvironment;
