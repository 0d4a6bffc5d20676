import { freshLinksMail, orderAlertMail, receiptMail, reminderMail } from '../../../src/mail/templates';

const expiresAt = new Date('2026-11-27T14:05:00Z');
const link = 'https://shop.example/downloads/d/TOKEN123';

describe('receiptMail', () => {
  const mail = receiptMail({
    orgName: 'Acme <Books>', customerName: 'Sam', productName: 'Ebook & Pro', versionLabel: '2.0', link, expiresAt, linkLifetime: '48 hours',
  });

  test('subject names the product', () => {
    expect(mail.subject).toBe('Your download: Ebook & Pro');
  });

  test('the text part reads on its own: greeting, product, link on its own line, expiry, /my', () => {
    const lines = mail.text.split('\n');
    expect(lines[0]).toBe('Hello Sam,');
    expect(mail.text).toContain('Thank you for buying Ebook & Pro (version 2.0) from Acme <Books>.');
    expect(lines).toContain(link);
    expect(mail.text).toContain('This link works until Friday 27 November 2026, 14:05 UTC. Each time you open it, it works for another 48 hours.');
    expect(mail.text).toContain('https://shop.example/downloads/my');
    expect(mail.text).not.toMatch(/<(p|a|div|strong)[ >]/);
  });

  test('the HTML part carries the same, escaped', () => {
    expect(mail.html).toContain(`href="${link}"`);
    expect(mail.html).toContain('Ebook &amp; Pro');
    expect(mail.html).toContain('Acme &lt;Books&gt;');
    expect(mail.html).not.toContain('<Books>');
    expect(mail.html).toContain('Friday 27 November 2026, 14:05 UTC');
  });
});

describe('reminderMail', () => {
  const unsubscribeUrl = 'https://shop.example/downloads/unsubscribe/TOKEN456';
  const mail = reminderMail({
    orgName: 'Acme <Books>', customerName: 'Sam', productName: 'Ebook & Pro', versionLabel: '2.0', link, expiresAt, linkLifetime: '48 hours',
    unsubscribeUrl, licenseKey: 'KEY-1',
  });

  test('subject names the product', () => {
    expect(mail.subject).toBe('Your download is waiting: Ebook & Pro');
  });

  test('the text part reads on its own: product, key, fresh link on its own line, expiry, one reminder only, /my, unsubscribe', () => {
    const lines = mail.text.split('\n');
    expect(lines[0]).toBe('Hello Sam,');
    expect(mail.text).toContain('You bought Ebook & Pro (version 2.0) from Acme <Books>, but it has not been downloaded yet. Here is a fresh link:');
    expect(mail.text).toContain(`Ebook & Pro (version 2.0)\nYour license key: KEY-1\n${link}\n`);
    expect(lines).toContain(link);
    expect(mail.text).toContain('The link works until Friday 27 November 2026, 14:05 UTC, and for another 48 hours each time you open it.');
    expect(mail.text).toContain('it is the only reminder');
    expect(mail.text).toContain('https://shop.example/downloads/my');
    expect(mail.text).toContain(`unsubscribe here: ${unsubscribeUrl}`);
    expect(mail.text).not.toMatch(/<(p|a|div|strong)[ >]/);
  });

  test('the HTML part carries the same, escaped, with a download button and the one-click unsubscribe headers', () => {
    expect(mail.html).toContain(`href="${link}"`);
    expect(mail.html).toContain('Download Ebook &amp; Pro');
    expect(mail.html).toContain('Acme &lt;Books&gt;');
    expect(mail.html).not.toContain('<Books>');
    expect(mail.html).toContain(`href="${unsubscribeUrl}"`);
    expect(mail.html).toContain('Friday 27 November 2026, 14:05 UTC');
    expect(mail.headers).toEqual({ 'List-Unsubscribe': `<${unsubscribeUrl}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' });
  });
});

describe('a purchase\'s license key', () => {
  const key = 'AB<12>&"CD"';

  test('the receipt shows it on a line of its own and, in HTML, escaped in a code box', () => {
    const mail = receiptMail({ orgName: 'Acme', customerName: 'Sam', productName: 'Editor', link, expiresAt, linkLifetime: '48 hours', licenseKey: key });
    expect(mail.text).toContain(`from Acme.\n\nYour license key: ${key}\n\nDownload it here:\n${link}`);
    expect(mail.html).toMatch(/Your license key: <code style="[^"]*monospace[^"]*">AB&lt;12&gt;&amp;&quot;CD&quot;<\/code>/);
    expect(mail.html).not.toContain(key);
  });

  test('a purchase without a key has no key line', () => {
    const mail = receiptMail({ orgName: 'Acme', customerName: 'Sam', productName: 'Editor', link, expiresAt, linkLifetime: '48 hours', licenseKey: null });
    expect(mail.text).not.toMatch(/license key/i);
    expect(mail.html).not.toMatch(/license key|<code/i);
  });

  test('the fresh links show each purchase\'s own key under its product', () => {
    const mail = freshLinksMail({
      orgName: 'Acme',
      links: [
        { productName: 'Editor', link: `${link}A`, expiresAt, licenseKey: 'KEY-ONE' },
        { productName: 'Ebook', link: `${link}B`, expiresAt },
      ],
      linkLifetime: '48 hours',
    });
    expect(mail.text).toContain(`Editor\nYour license key: KEY-ONE\n${link}A\n`);
    expect(mail.text).toContain(`Ebook\n${link}B\n`);
    expect(mail.html.match(/<code/g)).toHaveLength(1);
    expect(mail.html).toContain('>KEY-ONE</code>');
  });
});

describe('freshLinksMail', () => {
  test('one organisation, every purchase with its own link and expiry', () => {
    const mail = freshLinksMail({
      orgName: 'Acme',
      customerName: '',
      links: [
        { productName: 'One', versionLabel: '1.0', link: `${link}A`, expiresAt },
        { productName: 'Two', versionLabel: null, link: `${link}B`, expiresAt },
      ],
      linkLifetime: '2 hours',
    });
    expect(mail.subject).toBe('Your 2 download links from Acme');
    expect(mail.text.startsWith('Hello,\n')).toBe(true);
    expect(mail.text).toContain(`One (version 1.0)\n${link}A\nWorks until Friday 27 November 2026, 14:05 UTC`);
    expect(mail.text).toContain(`Two\n${link}B\n`);
    expect(mail.html).toContain(`href="${link}B"`);
    expect(mail.text).toContain('Each link works for 2 hours, and for another 2 hours each time you open it.');
  });

  test('a single link names its product in the subject', () => {
    const mail = freshLinksMail({ orgName: 'Acme', links: [{ productName: 'One', link, expiresAt }], linkLifetime: '48 hours' });
    expect(mail.subject).toBe('Your fresh download link: One from Acme');
  });
});

test('orderAlertMail lists each SKU with its reason, in both parts', () => {
  const mail = orderAlertMail({
    orgName: 'Acme', platform: 'cart-e', externalOrderId: '42',
    lines: [{ sku: 'ebook', reason: 'unknown SKU' }, { sku: null, reason: null }],
    logUrl: 'https://admin.example/webhooks-log',
  });
  expect(mail.subject).toBe('Order 42 from cart-e could not be fulfilled');
  expect(mail.text).toContain('- SKU ebook: unknown SKU');
  expect(mail.text).toContain('- SKU (none): unknown reason');
  expect(mail.text).toContain('Acme');
  expect(mail.html).toContain('<code>ebook</code>: unknown SKU');
});
