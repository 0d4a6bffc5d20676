/**
 * The mailer keeps its SMTP connections open between messages (a pool), so a receipt costs the
 * relay one conversation on an open connection, not a new connection with its greeting each time.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { createMailer } from '../../src/mail/mailer';

test('messages sent one after another share one SMTP connection', async () => {
  let connections = 0;
  const received: string[] = [];
  const relay = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onConnect(_session, callback) {
      connections += 1;
      callback();
    },
    onData(stream, session, callback) {
      stream.resume();
      stream.on('end', () => {
        received.push(...session.envelope.rcptTo.map((r) => r.address));
        callback();
      });
    },
  });
  relay.listen(0, '127.0.0.1');
  await once(relay.server, 'listening');
  const { port } = relay.server.address() as AddressInfo;
  const mailer = createMailer(`smtp://127.0.0.1:${port}`, 'shop@example.com');
  try {
    for (let n = 0; n < 5; n += 1) await mailer.send({ to: `buyer-${n}@example.com`, subject: 'Your download', text: 'Thank you.', html: '<p>Thank you.</p>' });
    expect(received).toEqual([0, 1, 2, 3, 4].map((n) => `buyer-${n}@example.com`));
    expect(connections).toBe(1);
  } finally {
    mailer.close();
    await new Promise<void>((resolve) => relay.close(() => resolve()));
  }
});
