import { outboundDeliveryWorkflowId } from '../../../src/domain/ids';
import { busyWaitMs } from '../../../src/domain/outbound-events';
import { nonPublicReason } from '../../../src/events/addresses';
import { EndpointSlots } from '../../../src/events/endpoint-slots';

describe('public addresses', () => {
  test.each([
    ['127.0.0.1', 'a loopback address'],
    ['10.0.0.1', 'a private address'],
    ['172.31.255.255', 'a private address'],
    ['192.168.1.1', 'a private address'],
    ['169.254.169.254', 'a link-local address'],
    ['100.64.0.1', 'a shared (carrier-grade NAT) address'],
    ['0.0.0.0', 'a "this network" address'],
    ['224.0.0.1', 'a multicast address'],
    ['::1', 'a loopback address'],
    ['::', 'the unspecified address'],
    ['::ffff:127.0.0.1', 'an IPv4-mapped IPv6 address'],
    ['::ffff:8.8.8.8', 'an IPv4-mapped IPv6 address'],
    ['fe80::1', 'a link-local address'],
    ['fd00::1', 'a unique local (private) address'],
    ['64:ff9b::a00:1', 'a NAT64 address'],
  ])('%s is %s', (ip, reason) => {
    expect(nonPublicReason(ip)).toBe(reason);
  });

  test.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111'])('%s is public', (ip) => {
    expect(nonPublicReason(ip)).toBeNull();
  });
});

describe('endpoint slots', () => {
  test('at most the limit run at once; the line waits its turn, past its length it is busy', async () => {
    const slots = new EndpointSlots(2, 1);
    const releases: Array<() => void> = [];
    const held = () => new Promise<void>((resolve) => releases.push(resolve));
    const first = slots.run('e', 10_000, held);
    const second = slots.run('e', 10_000, held);
    const waiting = slots.run('e', 10_000, async () => 'third');
    await expect(slots.run('e', 10_000, async () => 'fourth')).resolves.toEqual({ busy: true });
    // Another endpoint is not held up.
    await expect(slots.run('other', 10_000, async () => 'other')).resolves.toEqual({ busy: false, value: 'other' });
    releases[0]();
    await expect(waiting).resolves.toEqual({ busy: false, value: 'third' });
    releases[1]();
    await expect(Promise.all([first, second])).resolves.toEqual([{ busy: false, value: undefined }, { busy: false, value: undefined }]);
  });

  test('a wait in line that runs out is busy', async () => {
    const slots = new EndpointSlots(1, 5);
    let release = () => {};
    const holding = slots.run('e', 10_000, () => new Promise<void>((resolve) => { release = resolve; }));
    await expect(slots.run('e', 1, async () => 'late')).resolves.toEqual({ busy: true });
    release();
    await holding;
    await expect(slots.run('e', 1, async () => 'free')).resolves.toEqual({ busy: false, value: 'free' });
  });
});

test('a delivery run\'s id stays far below Temporal\'s 255 characters', () => {
  expect(outboundDeliveryWorkflowId({ eventId: `evt_${'f'.repeat(26)}`, endpointId: 'ffffffff-ffff-ffff-ffff-ffffffffffff' }).length).toBeLessThan(100);
});

test('busy waits grow, are spread, and stay under 45 s', () => {
  expect(busyWaitMs(1, 0.5)).toBe(1_000);
  expect(busyWaitMs(3, 0)).toBe(2_000);
  expect(busyWaitMs(50, 0.999)).toBeLessThan(45_000);
});
