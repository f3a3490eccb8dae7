// Which network addresses a registered model (an organization's own base_url) may make this server
// call: the SSRF policy (docs/DEPLOYMENT.md, "Security"). Link-local addresses and the cloud
// metadata services are refused always; loopback is allowed unless the operator turns it off (a
// self-hosted Ollama on localhost); private ranges only when the operator allows them. Checked on
// the URL at registration, and on the resolved addresses of every connection (a DNS name that
// later points at 169.254.169.254 is refused when it is connected to, not only when registered).
import dns from 'node:dns';
import net from 'node:net';

export interface AddressPolicy {
  allowLoopback: boolean;
  allowPrivate: boolean;
}

export class AddressRefusedError extends Error {
  readonly code = 'UPSTREAM_ADDRESS_REFUSED';
  constructor(
    readonly host: string,
    readonly why: string,
  ) {
    super(`this server does not call ${host}: ${why}`);
    this.name = 'AddressRefusedError';
  }
}

/** Names of cloud metadata services, refused whatever they resolve to. */
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal']);

const always = new net.BlockList();
always.addSubnet('0.0.0.0', 8, 'ipv4'); // "this network", 0.0.0.0 reaches loopback on Linux
always.addSubnet('169.254.0.0', 16, 'ipv4'); // link-local: 169.254.169.254 and friends
always.addAddress('100.100.100.200', 'ipv4'); // Alibaba Cloud metadata
always.addSubnet('224.0.0.0', 4, 'ipv4'); // multicast
always.addSubnet('240.0.0.0', 4, 'ipv4'); // reserved, broadcast
always.addAddress('::', 'ipv6');
always.addSubnet('fe80::', 10, 'ipv6'); // link-local
always.addAddress('fd00:ec2::254', 'ipv6'); // AWS metadata over IPv6
always.addSubnet('ff00::', 8, 'ipv6'); // multicast

const loopback = new net.BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

const privateRanges = new net.BlockList();
privateRanges.addSubnet('10.0.0.0', 8, 'ipv4');
privateRanges.addSubnet('172.16.0.0', 12, 'ipv4');
privateRanges.addSubnet('192.168.0.0', 16, 'ipv4');
privateRanges.addSubnet('100.64.0.0', 10, 'ipv4'); // carrier-grade NAT
privateRanges.addSubnet('198.18.0.0', 15, 'ipv4'); // benchmarking
privateRanges.addSubnet('fc00::', 7, 'ipv6'); // unique local

/** An IPv4 address embedded in an IPv6 one (::ffff:a.b.c.d, 64:ff9b::/96 NAT64), else null. */
function embeddedV4(address: string): string | null {
  const lower = address.toLowerCase();
  const mapped = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (mapped) return mapped[1]!;
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const hi = parseInt(hex[1]!, 16);
    const lo = parseInt(hex[2]!, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return null;
}

/** Why the policy refuses this IP address, or null when it may be called. */
export function refusedAddress(address: string, policy: AddressPolicy): string | null {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const v4 = embeddedV4(bare);
  const ip = v4 ?? bare;
  const type = net.isIPv4(ip) ? 'ipv4' : net.isIPv6(ip) ? 'ipv6' : null;
  if (!type) return 'not an IP address';
  if (always.check(ip, type)) return 'link-local, metadata and reserved addresses are never called';
  if (loopback.check(ip, type)) return policy.allowLoopback ? null : 'loopback addresses are turned off on this server (TRIBUNAL_MODEL_ALLOW_LOOPBACK)';
  if (privateRanges.check(ip, type)) return policy.allowPrivate ? null : 'private addresses are not called unless the operator sets TRIBUNAL_MODEL_ALLOW_PRIVATE=true';
  return null;
}

/** The refusal for a URL's hostname when it is an IP literal or a metadata name (no DNS), else null. */
export function refuseLiteral(hostname: string, policy: AddressPolicy): AddressRefusedError | null {
  const host = hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (METADATA_NAMES.has(host)) return new AddressRefusedError(host, 'cloud metadata services are never called');
  if (host === 'localhost' || host.endsWith('.localhost')) {
    return policy.allowLoopback ? null : new AddressRefusedError(host, 'loopback addresses are turned off on this server (TRIBUNAL_MODEL_ALLOW_LOOPBACK)');
  }
  if (!net.isIP(host)) return null;
  const why = refusedAddress(host, policy);
  return why ? new AddressRefusedError(host, why) : null;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/** A dns.lookup for net.connect that refuses a name resolving to any address the policy refuses. */
export function guardedLookup(policy: AddressPolicy) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    const named = refuseLiteral(hostname, policy);
    if (named) return callback(named as NodeJS.ErrnoException, '', 4);
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 4);
      for (const { address } of addresses) {
        const why = refusedAddress(address, policy);
        if (why) return callback(new AddressRefusedError(hostname, `it resolves to a refused address (${why})`) as NodeJS.ErrnoException, '', 4);
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 4);
      callback(null, first.address, first.family);
    });
  };
}
