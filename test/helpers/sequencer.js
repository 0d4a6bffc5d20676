// The order jest starts test files in: its own (files that failed last time first, then the longest,
// or the largest when no time is known), except that the files that mostly wait are kept apart.
//
// A file marked `@mostly-waiting` in its opening comment spends most of its time on timers it cannot
// shorten (a one-minute reminder, an engine outage, a retry's backoff): run alone on this project's
// 2-core machine, such a file kept the cores 12-31 % busy. In jest's own order the longest files come
// first, and those are the waiting ones, so three of them ran side by side at the run's start with
// the cores 12-30 % busy for about 45 s. Here jest's workers are played through in advance (each
// takes the next file when it frees, as jest's do) with the files' last times, or their sizes on a
// first run: a waiting file is handed out only when no other waiting file is running, so one
// worker waits while the others keep the cores busy.
const { readFileSync } = require('node:fs');
const Sequencer = require('@jest/test-sequencer').default;
const { extract, parse } = require('jest-docblock');
const { maxWorkers } = require('../../jest.config');

/** Read as jest reads `@jest-environment`: a pragma of the file's opening docblock. */
const mostlyWaits = (test) => 'mostly-waiting' in parse(extract(readFileSync(test.path, 'utf8')));

class WaitingFilesApart extends Sequencer {
  sort(tests) {
    const ordered = super.sort(tests);
    const waiting = [];
    const others = [];
    for (const test of ordered) (mostlyWaits(test) ? waiting : others).push(test);
    const timed = ordered.every((test) => test.duration != null);
    const length = (test) => (timed ? test.duration : test.context.hasteFS.getSize(test.path) ?? 0);
    const freeAt = Array(maxWorkers).fill(0);
    let waitingUntil = 0;
    const result = [];
    while (waiting.length + others.length > 0) {
      const worker = freeAt.indexOf(Math.min(...freeAt));
      const now = freeAt[worker];
      const waits = waiting.length > 0 && (now >= waitingUntil || others.length === 0);
      const file = waits ? waiting.shift() : others.shift();
      freeAt[worker] = now + length(file);
      if (waits) waitingUntil = freeAt[worker];
      result.push(file);
    }
    return result;
  }
}

module.exports = WaitingFilesApart;
