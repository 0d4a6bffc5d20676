import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import nodemailer from 'nodemailer';
import { Client } from 'pg';
import { startDevMailbox } from '../../src/dev/dev-mailbox';
import { startEmbeddedPostgres } from '../../src/dev/embedded-postgres';
import { silentLogger } from '../../src/dev/logger';
import { freePort } from '../../src/dev/ports';
import { findTemporalCli } from '../../src/dev/temporal-cli';
import { startTemporalDevServer } from '../../src/dev/temporal-dev-server';
import { SEARCH_ATTRIBUTES } from '../../src/temporal/search-attributes';

jest.setTimeout(120_000);

/** Pids of processes whose working directory or command line is in `dir` (postgres chdirs to its data dir). */
function processesUsing(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cwd = readlinkSync(`/proc/${entry}/cwd`);
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cwd === dir || cwd.startsWith(dir + path.sep) || cmdline.includes(dir)) pids.push(Number(entry));
    } catch {
      // process ended meanwhile, or not ours to inspect
    }
  }
  return pids;
}

describe('embedded PostgreSQL', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'dev-services-pg-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  async function selectOne(url: string): Promise<unknown> {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query('select 1 as one, current_database() as db')).rows[0];
    } finally {
      await client.end();
    }
  }

  it('initialises, answers queries, restarts on the same cluster and leaves no process behind', async () => {
    const pg = await startEmbeddedPostgres({ dataDir }, silentLogger);
    const pgDir = path.join(dataDir, 'postgres');
    try {
      expect(pg.url).toMatch(/^postgres:\/\/postgres:[^@]+@127\.0\.0\.1:\d+\/delivery$/);
      expect(await selectOne(pg.url)).toEqual({ one: 1, db: 'delivery' });
      expect(processesUsing(pgDir).length).toBeGreaterThan(0);
    } finally {
      await pg.stop();
    }
    expect(processesUsing(pgDir)).toEqual([]);

    // Second start: no initdb, same port and credentials.
    const again = await startEmbeddedPostgres({ dataDir }, silentLogger);
    try {
      expect(again.url).toBe(pg.url);
      expect(await selectOne(again.url)).toEqual({ one: 1, db: 'delivery' });
    } finally {
      await again.stop();
    }
    expect(processesUsing(pgDir)).toEqual([]);
  });

  it('starts on another port when its own is taken between the check and the start (another program starting at once)', async () => {
    const raceDir = mkdtempSync(path.join(os.tmpdir(), 'dev-services-pg-race-'));
    // The saved port is free when checked; the test takes it while initdb runs (seconds), before the server binds it.
    const port = await freePort();
    writeFileSync(path.join(raceDir, 'postgres.json'), JSON.stringify({ port, password: 'race-password' }));
    const starting = startEmbeddedPostgres({ dataDir: raceDir }, silentLogger);
    await new Promise((r) => setTimeout(r, 300));
    const squatter = net.createServer();
    await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
    try {
      const pg = await starting;
      try {
        expect(pg.port).not.toBe(port);
        expect(await selectOne(pg.url)).toEqual({ one: 1, db: 'delivery' });
        expect(JSON.parse(readFileSync(path.join(raceDir, 'postgres.json'), 'utf8')).port).toBe(pg.port);
      } finally {
        await pg.stop();
      }
    } finally {
      squatter.close();
      rmSync(raceDir, { recursive: true, force: true });
    }
  });
});

function httpStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http.get(url, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', reject);
  });
}

describe('findTemporalCli', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dev-services-cli-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function fakeBinary(file: string): string {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, '#!/bin/sh\n');
    chmodSync(file, 0o755);
    return file;
  }

  it('prefers TEMPORAL_CLI_PATH, then PATH, then the setup cache', () => {
    const configured = fakeBinary(path.join(dir, 'configured', 'temporal'));
    const onPath = fakeBinary(path.join(dir, 'bin', 'temporal'));
    const cached = fakeBinary(path.join(dir, 'cache', 'delivery-service', 'temporal', 'temporal'));
    const env = { PATH: path.join(dir, 'bin'), XDG_CACHE_HOME: path.join(dir, 'cache') };
    expect(findTemporalCli({ temporal: { cliPath: configured } }, env)).toBe(configured);
    expect(findTemporalCli({ temporal: { cliPath: path.join(dir, 'missing') } }, env)).toBe(onPath);
    expect(findTemporalCli({ temporal: {} }, { ...env, PATH: '/nonexistent' })).toBe(cached);
    expect(findTemporalCli({ temporal: {} }, { PATH: '/nonexistent', XDG_CACHE_HOME: '/nonexistent' })).toBeUndefined();
  });
});

describe('Temporal dev server', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'dev-services-temporal-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('serves the namespace with the search attributes and the Web UI, and stops', async () => {
    if (!findTemporalCli({ temporal: { cliPath: process.env.TEMPORAL_CLI_PATH } })) {
      throw new Error('No Temporal CLI: run `npm run setup:temporal` first');
    }
    const namespace = 'delivery-test';
    const server = await startTemporalDevServer(
      { dataDir, baseUrl: 'http://localhost:3000', temporal: { namespace, uiPort: 0, cliPath: process.env.TEMPORAL_CLI_PATH } },
      silentLogger,
    );
    try {
      expect(server.address).toMatch(/^127\.0\.0\.1:\d+$/);
      const connection = await Connection.connect({ address: server.address });
      try {
        const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
        expect(Object.keys(customAttributes ?? {})).toEqual(expect.arrayContaining(Object.keys(SEARCH_ATTRIBUTES)));
      } finally {
        await connection.close();
      }
      expect(await httpStatus(server.uiUrl)).toBe(200);
      // The UI decodes the encrypted payloads through the API's codec endpoint.
      const settings = await (await fetch(`${server.uiUrl}/api/v1/settings`)).json() as { Codec?: { Endpoint?: string } };
      expect(settings.Codec?.Endpoint).toBe('http://localhost:3000/codec');
      expect(processesUsing(path.join(dataDir, 'temporal.sqlite')).length).toBe(1);
    } finally {
      await server.stop();
    }
    expect(processesUsing(path.join(dataDir, 'temporal.sqlite'))).toEqual([]);
  });
});

describe('dev mailbox', () => {
  it('receives and parses mail, newest first', async () => {
    const mailbox = await startDevMailbox(silentLogger, { port: 0 });
    const transport = nodemailer.createTransport(mailbox.url);
    try {
      expect(mailbox.url).toMatch(/^smtp:\/\/127\.0\.0\.1:\d+$/);
      const waiting = mailbox.waitFor((m) => m.subject === 'Second', 5_000);
      await transport.sendMail({ from: 'Shop <downloads@localhost>', to: 'a@example.com', subject: 'First', text: 'one' });
      await transport.sendMail({
        from: 'downloads@localhost',
        to: 'b@example.com',
        bcc: 'c@example.com',
        subject: 'Second',
        text: 'two',
        html: '<p>two</p>',
      });
      const second = await waiting;
      expect(second).toMatchObject({ to: ['b@example.com', 'c@example.com'], text: 'two', html: '<p>two</p>' });
      expect(second.receivedAt).toBeInstanceOf(Date);
      expect(mailbox.messages().map((m) => m.subject)).toEqual(['Second', 'First']);
      const first = await mailbox.waitFor((m) => m.subject === 'First', 100); // already there
      expect(first.from).toContain('downloads@localhost');
      await expect(mailbox.waitFor((m) => m.subject === 'Never', 200)).rejects.toThrow(/no matching mail/);
    } finally {
      transport.close();
      await mailbox.stop();
    }
  });

  it('refuses chosen recipients with permanent or temporary SMTP codes', async () => {
    const mailbox = await startDevMailbox(silentLogger, {
      port: 0,
      reject: [
        { match: (to) => to.endsWith('@bounce.test'), code: 550 },
        { match: (to) => to === 'later@example.com', code: 451 },
      ],
    });
    const transport = nodemailer.createTransport(mailbox.url);
    const send = (to: string) => transport.sendMail({ from: 'downloads@localhost', to, subject: `to ${to}`, text: 'x' });
    try {
      await expect(send('nobody@bounce.test')).rejects.toMatchObject({ responseCode: 550 });
      await expect(send('later@example.com')).rejects.toMatchObject({ responseCode: 451 });
      expect(mailbox.rejections().map((r) => [r.address, r.code])).toEqual([
        ['nobody@bounce.test', 550],
        ['later@example.com', 451],
      ]);
      expect(mailbox.messages()).toEqual([]);

      mailbox.setReject(undefined); // the temporary failure is over
      await send('later@example.com');
      expect((await mailbox.waitFor((m) => m.to.includes('later@example.com'), 5_000)).subject).toBe('to later@example.com');
    } finally {
      transport.close();
      await mailbox.stop();
    }
  });
});
