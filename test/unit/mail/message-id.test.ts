import { messageIdFor } from '../../../src/mail/mailer';

describe('messageIdFor', () => {
  test('a key of ids and words reads as itself, `:` as `.`', () => {
    expect(messageIdFor('update', 'update:7d1c:9f2e-11', 'delivery.test')).toBe('<update.7d1c.9f2e-11@delivery.test>');
  });

  test('the same key gives the same Message-ID every time; another key another one', () => {
    const key = 'receipt:1b2c3d4e-0000-4000-8000-000000000001:5f6a7b8c-0000-4000-8000-000000000002';
    expect(messageIdFor('receipt', key, 'shop.example')).toBe(messageIdFor('receipt', key, 'shop.example'));
    expect(messageIdFor('receipt', `${key}0`, 'shop.example')).not.toBe(messageIdFor('receipt', key, 'shop.example'));
  });

  test('a key with any other text (a platform\'s order id) becomes its kind and SHA-256: nothing of it reaches the header', () => {
    const a = messageIdFor('alert', 'alert:org-1:cart-e:#1001 <x@y> é', 'delivery.test');
    expect(a).toMatch(/^<alert\.sha256\.[0-9a-f]{64}@delivery\.test>$/);
    // `.` and `:` are not the same order id.
    expect(messageIdFor('alert', 'alert:org-1:cart-e:a.b', 'delivery.test')).not.toBe(messageIdFor('alert', 'alert:org-1:cart-e:a:b', 'delivery.test'));
  });
});
