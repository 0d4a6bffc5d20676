/**
 * Every payload Temporal stores for this service (workflow inputs with customer emails and names,
 * results, signals, activity arguments, and failure messages: see `failure-converter`) is encrypted
 * with the key ring of SECRETS_KEY before it leaves the process, so the engine's history holds no
 * personal data. Payloads are sealed under the ring's keys derived for this purpose (HKDF), marked
 * so in their metadata; payloads sealed before that (no mark) open under the ring's own keys, so
 * histories in flight still decode. The codec endpoint of the API decodes them for operators in the
 * Temporal UI.
 *
 * A payload that is not encrypted was not written by the service: anyone who reaches Temporal
 * could start a fulfilment with one. Workers refuse it, unless told to accept them for histories
 * started before encryption (TEMPORAL_ACCEPT_PLAINTEXT_PAYLOADS).
 */
import { METADATA_ENCODING_KEY, ValueError, type DataConverter, type Payload, type PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { KeyRing } from '../security/key-ring';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
const KEY_ID = 'encryption-key-id';
/** The mark of payloads sealed under the purpose's derived keys. */
const KEY_PURPOSE = 'encryption-key-purpose';
const PURPOSE = 'temporal-payloads';

const utf8 = (text: string): Uint8Array => Buffer.from(text, 'utf8');
const text = (bytes: Uint8Array | null | undefined): string => (bytes ? Buffer.from(bytes).toString('utf8') : '');

export interface CodecOptions {
  /** Plain payloads pass through decoding (the codec endpoint, a worker told to); else they are refused. */
  acceptPlaintext: boolean;
}

export class EncryptionCodec implements PayloadCodec {
  private readonly payloadKeys: KeyRing;

  constructor(private readonly keyRing: KeyRing, private readonly options: CodecOptions) {
    this.payloadKeys = keyRing.forPurpose(PURPOSE);
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const { keyId, sealed } = this.payloadKeys.encrypt(Buffer.from(temporal.api.common.v1.Payload.encode(payload).finish()));
      return {
        metadata: { [METADATA_ENCODING_KEY]: utf8(ENCRYPTED_ENCODING), [KEY_ID]: utf8(keyId), [KEY_PURPOSE]: utf8(PURPOSE) },
        data: sealed,
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (text(payload.metadata?.[METADATA_ENCODING_KEY]) !== ENCRYPTED_ENCODING || !payload.data) {
        if (this.options.acceptPlaintext) return payload;
        throw new ValueError('refused a payload that is not encrypted (TEMPORAL_ACCEPT_PLAINTEXT_PAYLOADS accepts them)');
      }
      const keys = text(payload.metadata?.[KEY_PURPOSE]) === PURPOSE ? this.payloadKeys : this.keyRing;
      const plain = keys.decrypt(text(payload.metadata?.[KEY_ID]), Buffer.from(payload.data));
      return temporal.api.common.v1.Payload.decode(plain);
    });
  }
}

/** Loaded by clients and workers, and bundled into the workflows' sandbox. */
export const FAILURE_CONVERTER_PATH = require.resolve('./failure-converter');

/**
 * The data converter of every client and worker of the service: payloads encrypted, and failures'
 * messages and stack traces moved into an encrypted payload (an SMTP rejection names the recipient).
 */
export function encryptedPayloads(keyRing: KeyRing, options: CodecOptions): DataConverter {
  return { payloadCodecs: [new EncryptionCodec(keyRing, options)], failureConverterPath: FAILURE_CONVERTER_PATH };
}
