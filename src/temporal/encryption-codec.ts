/**
 * Every payload Temporal stores for this service (workflow inputs with customer emails and names,
 * results, signals, activity arguments) is encrypted with the key ring of SECRETS_KEY before it
 * leaves the process, so the engine's history holds no personal data. The codec endpoint of the API
 * decodes them for operators in the Temporal UI. Payloads stored before this codec (or by another
 * writer) pass through unchanged.
 */
import { METADATA_ENCODING_KEY, type Payload, type PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { KeyRing } from '../security/key-ring';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
const KEY_ID = 'encryption-key-id';

const utf8 = (text: string): Uint8Array => Buffer.from(text, 'utf8');
const text = (bytes: Uint8Array | null | undefined): string => (bytes ? Buffer.from(bytes).toString('utf8') : '');

export class EncryptionCodec implements PayloadCodec {
  constructor(private readonly keyRing: KeyRing) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const { keyId, sealed } = this.keyRing.encrypt(Buffer.from(temporal.api.common.v1.Payload.encode(payload).finish()));
      return { metadata: { [METADATA_ENCODING_KEY]: utf8(ENCRYPTED_ENCODING), [KEY_ID]: utf8(keyId) }, data: sealed };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (text(payload.metadata?.[METADATA_ENCODING_KEY]) !== ENCRYPTED_ENCODING || !payload.data) return payload;
      const plain = this.keyRing.decrypt(text(payload.metadata?.[KEY_ID]), Buffer.from(payload.data));
      return temporal.api.common.v1.Payload.decode(plain);
    });
  }
}

/** The data converter of every client and worker of the service. */
export function encryptedPayloads(keyRing: KeyRing): { payloadCodecs: PayloadCodec[] } {
  return { payloadCodecs: [new EncryptionCodec(keyRing)] };
}
