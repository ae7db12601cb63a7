import { BlockList, isIP } from "node:net";

const loopback = new BlockList();
loopback.addSubnet("127.0.0.0", 8, "ipv4");
loopback.addAddress("::1", "ipv6");

/** True for 127.0.0.0/8 and ::1, including IPv4-mapped IPv6 forms such as ::ffff:127.0.0.1. */
export function isLoopbackAddress(address: string | undefined): boolean {
    if (!address) return false;
    const unmapped = address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, "");
    const family = isIP(unmapped);
    if (family === 0) return false;
    return loopback.check(unmapped, family === 4 ? "ipv4" : "ipv6");
}
