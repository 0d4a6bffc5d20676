/**
 * The payload codec (review issue 23, L6): plain payloads refused unless accepted, payloads sealed
 * under keys of their own purpose, and those sealed before that still opened.
 */
import { METADATA_ENCODING_KEY, type Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { KeyRing, newKey } from '../../../src/security/key-ring';
import { ENCRYPTED_ENCODING, EncryptionCodec } from '../../../src/temporal/encryption-codec';

const keyRing = new KeyRing([Buffer.from(newKey(), 'base64')]);
const json: Payload = { metadata: { [METADATA_ENCODING_KEY]: Buffer.from('json/plain') }, data: Buffer.from('{"email":"a@example.com"}') };

test('a plain payload is refused, unless the codec is told to accept them', async () => {
  await expect(new EncryptionCodec(keyRing, { acceptPlaintext: false }).decode([json])).rejects.toThrow(/not encrypted/);
  expect(await new EncryptionCodec(keyRing, { acceptPlaintext: true }).decode([json])).toEqual([json]);
});

test('a sealed payload opens under the payloads\' own keys only, not under the ring\'s keys of integration secrets', async () => {
  const codec = new EncryptionCodec(keyRing, { acceptPlaintext: false });
  const [sealed] = await codec.encode([json]);
  const keyId = Buffer.from(sealed.metadata!['encryption-key-id']!).toString();
  expect(keyId).toBe(keyRing.currentId);
  expect(() => keyRing.decrypt(keyId, Buffer.from(sealed.data!))).toThrow();
  const [opened] = await codec.decode([sealed]);
  expect(Buffer.from(opened.data!).toString()).toBe('{"email":"a@example.com"}');
});

test('a payload sealed under the ring\'s own key, before keys per purpose, still opens', async () => {
  const { keyId, sealed } = keyRing.encrypt(Buffer.from(temporal.api.common.v1.Payload.encode(json).finish()));
  const old: Payload = { metadata: { [METADATA_ENCODING_KEY]: Buffer.from(ENCRYPTED_ENCODING), 'encryption-key-id': Buffer.from(keyId) }, data: sealed };
  const [opened] = await new EncryptionCodec(keyRing, { acceptPlaintext: false }).decode([old]);
  expect(Buffer.from(opened.data!).toString()).toBe('{"email":"a@example.com"}');
});
